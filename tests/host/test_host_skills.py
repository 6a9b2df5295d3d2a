"""A server's skills in the host, end to end with the real ``openai`` package and the scripted
model server: the model is shown the skills' names and descriptions, loads one and receives
its body, then reads a file the skill names; nothing was read before it asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.model_server import ModelServer, Reply, ToolCall
from tests.support.skills import write_skill
from toolwire import Server
from toolwire.host import ApprovalNeeded, Event, Host, ServerSpec, ToolResult
from toolwire.host.providers import OpenAIProvider


@pytest.fixture
def model() -> Any:
    with ModelServer() as server:
        yield server


def docs_server(folder: Path, reads: list[str]) -> Server:
    server = Server("docs")
    forms = {"references/FORMS.md": "An invoice has a number, a date and a total.\n"}
    server.add_skill(write_skill(folder, "pdf-processing", "Fill in PDF forms", forms))
    server.add_skill(write_skill(folder, "git-workflow", "Branch and commit the team's way"))

    async def watch(call: Any, proceed: Any) -> Any:
        reads.append(str(call.name))
        return await proceed(call)

    server.use(watch)
    return server


def host(model: ModelServer, server: Server) -> Host:
    provider = OpenAIProvider("deepseek-chat", api_key="test", base_url=model.openai_url, max_retries=0)
    return Host([ServerSpec("docs", server)], provider=provider)


async def run(conversation: Any, text: str) -> list[Event]:
    events = []
    async for event in conversation.send(text):
        events.append(event)
        if isinstance(event, ApprovalNeeded):
            event.allow()
    return events


def tool_results(request: dict[str, Any]) -> list[str]:
    return [str(message["content"]) for message in request["messages"] if message["role"] == "tool"]


async def test_the_model_loads_a_skill_receives_its_body_and_reads_its_file(model: ModelServer, tmp_path: Path) -> None:
    reads: list[str] = []
    model.script(
        Reply(tool_calls=[ToolCall("load_skill", {"name": "pdf-processing"})]),
        Reply(tool_calls=[ToolCall("read_resource", {"uri": "skill://pdf-processing/references/FORMS.md"})]),
        Reply(text="An invoice needs a number, a date and a total."),
    )
    async with host(model, docs_server(tmp_path, reads)) as connected:
        assert [(skill.name, skill.server) for skill in connected.skills] == [
            ("pdf-processing", "docs"),
            ("git-workflow", "docs"),
        ]
        events = await run(connected.conversation(), "What goes on an invoice form?")
    first, second, third = model.requests
    loader = next(tool["function"] for tool in first["tools"] if tool["function"]["name"] == "load_skill")
    assert "- pdf-processing: Fill in PDF forms (server docs)" in loader["description"]
    assert "- git-workflow: Branch and commit the team's way (server docs)" in loader["description"]
    (loaded,) = tool_results(second)
    assert "The body of pdf-processing." in loaded and "skill://pdf-processing/references/FORMS.md" in loaded
    assert "An invoice has a number, a date and a total." in tool_results(third)[1]
    assert [event.is_error for event in events if isinstance(event, ToolResult)] == [False, False]
    assert reads == ["skill://pdf-processing/SKILL.md", "skill://pdf-processing/references/FORMS.md"]


async def test_a_skill_that_fails_verification_is_not_loaded(model: ModelServer, tmp_path: Path) -> None:
    server = docs_server(tmp_path, [])
    model.script(Reply(tool_calls=[ToolCall("load_skill", {"name": "git-workflow"})]), Reply(text="I could not."))
    async with host(model, server) as connected:
        server.remove_resource("skill://git-workflow/SKILL.md")
        server.add_resource("skill://git-workflow/SKILL.md", "---\nname: git-workflow\ndescription: x\n---\nEvil\n")
        events = await run(connected.conversation(), "How do I branch?")
    (result,) = [event for event in events if isinstance(event, ToolResult)]
    assert result.is_error
    (told,) = tool_results(model.requests[1])
    assert "The skill was not loaded" in told and "Evil" not in told
