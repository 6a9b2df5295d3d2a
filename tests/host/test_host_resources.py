"""The host's ``list_resources``: offered beside ``read_resource`` when a connected server
has resources (a real stdio server, tests/servers/shelf.py, and one in memory), listing one
server's resources and templates through its client, asking which server when several
have resources, approved as ``SERVER/resources/list``, and left out with
``Host(list_resources=False)``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.model_server import ModelServer, Reply, ToolCall
from toolwire import Server
from toolwire.host import ApprovalNeeded, ApprovalPolicy, Host, ToolResult
from toolwire.host.providers import OpenAIProvider

SHELF = str(Path(__file__).resolve().parents[1] / "servers" / "shelf.py")


@pytest.fixture
def model() -> Any:
    with ModelServer() as server:
        yield server


def provider(model: ModelServer) -> OpenAIProvider:
    return OpenAIProvider("deepseek-chat", api_key="test", base_url=model.openai_url, max_retries=0)


def library() -> Server:
    server = Server("library")
    server.add_resource("library://readme", "Read me first.", mime_type="text/plain")
    return server


async def test_the_model_lists_a_servers_resources_then_reads_one(model: ModelServer) -> None:
    model.script(
        Reply(tool_calls=[ToolCall("list_resources", {})]),
        Reply(tool_calls=[ToolCall("list_resources", {"server": "shelf"})]),
        Reply(tool_calls=[ToolCall("read_resource", {"uri": "books://42", "server": "shelf"})]),
        Reply(text="It is The Hitchhiker's Guide."),
    )
    trusted = ApprovalPolicy(trusted={"shelf", "library"})
    async with Host([f"shelf={SHELF}:bare", library()], provider=provider(model), policy=trusted) as host:
        results: list[ToolResult] = []
        async for event in host.conversation().send("which book is 42?"):
            if isinstance(event, ToolResult):
                results.append(event)
    offered = [tool["function"]["name"] for tool in model.requests[0]["tools"]]
    assert offered[-2:] == ["read_resource", "list_resources"]
    unsaid, listed, read = results
    assert unsaid.is_error and "say which server to list: one of shelf, library" in unsaid.summary
    listing = tool_text(model.requests[2])
    assert "notes://today: notes://today (text/plain)" in listing
    assert "notes://archive/old" in listing and "notes://draft" not in listing
    assert "books://{isbn} (a template: fill in the {variables}): book - A book by its ISBN." in listing
    assert not listed.is_error and not read.is_error
    assert "The Hitchhiker's Guide" in read.summary


async def test_listing_is_approved_as_server_resources_list(model: ModelServer) -> None:
    model.script(Reply(tool_calls=[ToolCall("list_resources", {})]), Reply(text="none"))
    policy = ApprovalPolicy(deny=["library/resources/list"])
    async with Host([library()], provider=provider(model), policy=policy) as host:
        events = [event async for event in host.conversation().send("what is there?")]
    [result] = [event for event in events if isinstance(event, ToolResult)]
    assert result.is_error and "refused" in result.summary
    assert not [event for event in events if isinstance(event, ApprovalNeeded)]


async def test_the_lister_can_be_left_out(model: ModelServer) -> None:
    model.script(Reply(text="ok"))
    async with Host([library()], provider=provider(model), list_resources=False) as host:
        [_ async for _ in host.conversation().send("hi")]
    assert [tool["function"]["name"] for tool in model.requests[0]["tools"]] == ["read_resource"]


def tool_text(request: dict[str, Any]) -> str:
    """The text of the last tool result a model request carries (OpenAI's shape)."""
    message = [message for message in request["messages"] if message["role"] == "tool"][-1]
    content = message["content"]
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)
