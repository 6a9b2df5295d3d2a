"""Resources and prompts as tools (tests/servers/shelf.py), over real stdio pipes in both
eras, through a proxy, and over HTTP with tokens: the tools list and read what
``resources/list`` and ``resources/read`` would for the same caller (tags, scopes, a mounted
child prefixed), a template by URI, an image as an image, a long text cut, errors a model
can act on; prompts listed and filled in; names already taken refused."""

from __future__ import annotations

import base64
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.support.httpserve import InProcess, fresh_server
from tests.support.rawclient import RawClient, modern_meta, toolwire_command
from tests.support.tokenissuer import TokenIssuer
from toolwire import Client, Context, Server
from toolwire.auth import ProtectedResource

SHELF = str(Path(__file__).resolve().parents[1] / "servers" / "shelf.py")
ERAS = ["legacy", "modern"]


class Shelf:
    """A raw client of one era to a shelf server over stdio."""

    def __init__(self, client: RawClient, era: str) -> None:
        self.client = client
        self.era = era
        if era == "legacy":
            client.initialize()

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if self.era == "modern":
            params["_meta"] = modern_meta()
        answer = self.client.request("tools/call", params, timeout=30)
        assert "result" in answer, answer
        return answer["result"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("target", [f"{SHELF}:server", f"{SHELF}:proxied"], ids=["server", "proxy"])
@pytest.mark.parametrize("era", ERAS)
def test_resources_are_listed_and_read_through_tools_as_resources_read_would(target: str, era: str) -> None:
    with RawClient(toolwire_command(target)) as client:
        shelf = Shelf(client, era)
        listed = shelf.call("list_resources")["structuredContent"]
        today = shelf.call("read_resource", {"uri": "notes://today"})
        old = shelf.call("read_resource", {"uri": "notes://archive/old"})
        book = shelf.call("read_resource", {"uri": "books://42"})
        missing_book = shelf.call("read_resource", {"uri": "books://7"})
        draft = shelf.call("read_resource", {"uri": "notes://draft"})
        pixel = shelf.call("read_resource", {"uri": "pictures://pixel"})
        long = shelf.call("read_resource", {"uri": "notes://long"})
    uris = [resource["uri"] for resource in listed["resources"]]
    assert uris == ["notes://today", "pictures://pixel", "notes://long", "notes://payroll", "notes://archive/old"]
    assert [template["uriTemplate"] for template in listed["resourceTemplates"]] == ["books://{isbn}"]
    assert today["content"] == [
        {"type": "resource", "resource": {"uri": "notes://today", "mimeType": "text/plain", "text": "buy bread"}}
    ]
    assert old["content"][0]["resource"]["text"] == "written long ago"
    assert book["content"][0]["resource"]["text"] == "The Hitchhiker's Guide"
    assert (
        missing_book["isError"] and "Resource not found: books://7 (no such book)" in missing_book["content"][0]["text"]
    )
    assert draft["isError"] and "Unknown resource: notes://draft" in draft["content"][0]["text"]
    assert pixel["content"][0]["type"] == "image" and pixel["content"][0]["mimeType"] == "image/png"
    assert base64.b64decode(pixel["content"][0]["data"]).startswith(b"\x89PNG")
    text = long["content"][0]["resource"]["text"]
    assert text.startswith("x" * 100_000) and text.endswith("[cut: the first 100000 of 300000 characters]")


@pytest.mark.parametrize("era", ERAS)
def test_prompts_are_listed_and_filled_in_through_tools(era: str) -> None:
    with RawClient(toolwire_command(f"{SHELF}:server")) as client:
        shelf = Shelf(client, era)
        listed = shelf.call("list_prompts")["structuredContent"]["prompts"]
        got = shelf.call("get_prompt", {"name": "review", "arguments": {"title": "Dune", "tone": "harsh"}})
        lacking = shelf.call("get_prompt", {"name": "review", "arguments": {}})
        unknown = shelf.call("get_prompt", {"name": "summary"})
    assert [prompt["name"] for prompt in listed] == ["review"]
    assert [argument["name"] for argument in listed[0]["arguments"]] == ["title", "tone"]
    message = got["structuredContent"]["messages"][0]
    assert message["role"] == "user" and message["content"]["text"] == "Write a harsh review of Dune."
    assert lacking["isError"] and "title" in lacking["content"][0]["text"]
    assert unknown["isError"] and "Unknown prompt: summary" in unknown["content"][0]["text"]


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_a_resource_needing_a_scope_is_listed_and_read_only_for_callers_holding_it(era: str) -> None:
    async with TokenIssuer() as issuer:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        app = fresh_server(SHELF).http_app(auth=ProtectedResource.for_issuer(issuer.url, url))
        seen: dict[str, Any] = {}
        async with InProcess(app, listener=listener):
            for scope in ("tools", "tools staff"):
                headers = {"Authorization": f"Bearer {issuer.token(url, scope=scope)}"}
                async with Client(url, protocol=era, headers=headers) as client:
                    listed = await client.call_tool("list_resources")
                    read = await client.call_tool("read_resource", {"uri": "notes://payroll"})
                    seen[scope] = ([r["uri"] for r in listed.structured["resources"]], read)
    assert "notes://payroll" not in seen["tools"][0] and seen["tools"][1].is_error
    assert "notes://payroll" in seen["tools staff"][0]
    assert seen["tools staff"][1].content[0].text == "secret numbers"


async def test_session_rules_hide_a_resource_from_the_tools_as_from_resources_list() -> None:
    server = Server("rules")
    server.add_resource("notes://a", "a")
    server.add_resource("notes://b", "b")
    server.resources_as_tools()

    @server.tool
    def hide_b(ctx: Context) -> str:
        ctx.session_visibility.disable("notes://b")
        return "hidden"

    async with Client(server) as client:
        before = await client.call_tool("list_resources")
        await client.call_tool("hide_b")
        after = await client.call_tool("list_resources")
        listed = [resource.uri for resource in await client.list_resources()]
        refused = await client.call_tool("read_resource", {"uri": "notes://b"})
    assert [r["uri"] for r in before.structured["resources"]] == ["notes://a", "notes://b"]
    assert [r["uri"] for r in after.structured["resources"]] == listed == ["notes://a"]
    assert refused.is_error


def test_a_name_already_taken_is_refused_naming_it_and_nothing_is_added() -> None:
    server = Server("taken")

    @server.tool
    def read_resource(uri: str) -> str:
        return uri

    adds = r"resources_as_tools\(\) adds the tools list_resources and read_resource, .* 'read_resource' already"
    with pytest.raises(ValueError, match=adds):
        server.resources_as_tools()
    assert "list_resources" not in server.registry
    server.prompts_as_tools()
    with pytest.raises(ValueError, match="'list_prompts' already"):
        server.prompts_as_tools()
