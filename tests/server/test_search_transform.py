"""The search transform: a server of the search catalog's 93 tools lists ``search_tools`` and
``call_tool`` only; a search finds the right tool, ``call_tool`` runs it, in both eras; the
tools stay callable by name; visibility applies; a missing extra says what to install."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from tests.servers.catalog import TARGETS
from tests.support.helpers import LEGACY, MODERN, open_peer
from toolwire import Client, Context, Server
from toolwire.cli.common import load_server
from toolwire.extras import ExtraMissing
from toolwire.guards import Call, Next, Result, refusal


def catalog_server(**options: Any) -> Server:
    """Every catalog server mounted in one (``mail_send_email``...), searchable."""
    server = Server("everything", **options)
    for target in TARGETS:
        name, _, path = target.partition("=")
        server.mount(load_server(path), name)
    return server


@pytest.mark.parametrize("version", [LEGACY[-1], MODERN])
async def test_a_big_server_lists_two_tools_and_finds_and_runs_the_one_needed(version: str) -> None:
    server = catalog_server(tool_search=True)
    assert len(server.registry) > 80
    peer = await open_peer(server, version)
    try:
        listed = (await peer.request("tools/list"))["result"]["tools"]
        found = await peer.call("search_tools", {"query": "what's the weather going to be in Paris", "limit": 3})
        tools = found["result"]["structuredContent"]["tools"]
        ran = await peer.call("call_tool", {"name": tools[0]["name"], "arguments": {"city": "Paris"}})
        unknown = await peer.call("call_tool", {"name": "no_such_tool", "arguments": {}})
        invalid = await peer.call("call_tool", {"name": tools[0]["name"], "arguments": {"city": 3}})
    finally:
        await peer.connection.close()
    assert [tool["name"] for tool in listed] == ["search_tools", "call_tool"]
    assert len(tools) == 3 and tools[0]["name"].startswith("weather_")
    assert "inputSchema" in tools[0]
    assert not ran["result"].get("isError"), ran
    assert unknown["result"]["isError"] and "Unknown tool: no_such_tool" in unknown["result"]["content"][0]["text"]
    assert invalid["result"]["isError"]


async def test_the_tools_stay_callable_by_name_and_hidden_ones_are_not_found() -> None:
    server = Server("small")

    @server.tool
    def send_email(to: str, subject: str) -> str:
        """Send an email message."""
        return f"sent to {to}"

    @server.tool
    def delete_email(message_id: str) -> str:
        """Delete an email message."""
        return f"deleted {message_id}"

    @server.tool
    def lock(ctx: Context) -> str:
        ctx.session_visibility.disable("delete_email")
        return "locked"

    server.expose_search(limit=10)
    async with Client(server, protocol=LEGACY[-1]) as client:
        assert [tool.name for tool in await client.list_tools()] == ["search_tools", "call_tool"]
        direct = await client.call_tool("send_email", {"to": "ada", "subject": "hi"})
        before = await client.call_tool("search_tools", {"query": "email"})
        await client.call_tool("lock")
        after = await client.call_tool("search_tools", {"query": "email"})
        refused = await client.call_tool("call_tool", {"name": "delete_email", "arguments": {"message_id": "1"}})
    assert direct.content[0].text == "sent to ada"
    assert [t["name"] for t in before.structured["tools"]] == ["send_email", "delete_email"]
    assert [t["name"] for t in after.structured["tools"]] == ["send_email"]
    assert refused.is_error


async def test_include_tags_keep_the_two_search_tools_and_narrow_what_is_found() -> None:
    server = Server("tagged", tool_search=True, include_tags=["mail"])

    @server.tool(tags={"mail"})
    def send_email(to: str) -> str:
        """Send an email message."""
        return f"sent to {to}"

    @server.tool(tags={"chat"})
    def send_chat_message(channel: str) -> str:
        """Send a chat message."""
        return f"posted to {channel}"

    async with Client(server, protocol=LEGACY[-1]) as client:
        listed = [tool.name for tool in await client.list_tools()]
        found = await client.call_tool("search_tools", {"query": "send a message"})
        refused = await client.call_tool("call_tool", {"name": "send_chat_message", "arguments": {"channel": "x"}})
    assert listed == ["search_tools", "call_tool"]
    assert [tool["name"] for tool in found.structured["tools"]] == ["send_email"]
    assert refused.is_error


def test_without_the_search_extra_exposing_search_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "bm25s", None)
    with pytest.raises(ExtraMissing, match=r"toolwire\[search\]"):
        Server("x", tool_search=True)


def test_the_ranking_library_is_imported_at_the_first_search_not_when_serving_starts() -> None:
    started = "from toolwire import Server; Server('x', tool_search=True); import sys; print('bm25s' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", started], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "False\n"), done.stderr


def test_search_is_exposed_once() -> None:
    server = Server("y", tool_search=True)
    with pytest.raises(ValueError, match="already"):
        server.expose_search()


async def test_a_query_over_the_cap_is_refused_before_it_is_ranked() -> None:
    server = catalog_server(tool_search=True)
    too_long = " ".join(f"word{number}" for number in range(100_000))  # about 1 MB, distinct words
    async with Client(server, protocol=LEGACY[-1]) as client:
        [search] = [tool for tool in await client.list_tools() if tool.name == "search_tools"]
        refused = await client.call_tool("search_tools", {"query": too_long})
        fits = await client.call_tool("search_tools", {"query": "forward an email " + "x" * 900})
    assert search.input_schema["properties"]["query"]["maxLength"] == 1000
    assert refused.is_error and "1000" in refused.content[0].text
    assert not fits.is_error and fits.structured["tools"][0]["name"] == "mail_forward_email"


async def test_call_tool_passes_the_guards_as_a_call_of_the_tool_it_runs() -> None:
    seen: list[tuple[str | None, dict[str, Any] | None, str | None]] = []

    async def record(call: Call, next: Next) -> Result:
        seen.append((call.name, call.arguments, call.tool.name if call.tool is not None else None))
        if call.name == "wipe":
            return refusal("wipe is refused here")
        return await next(call)

    server = Server("guarded", guards=[record], tool_search=True, timeout=5)

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool
    def wipe() -> str:
        return "wiped"

    async with Client(server) as client:
        added = await client.call_tool("call_tool", {"name": "add", "arguments": {"a": 2, "b": 3}})
        wiped = await client.call_tool("call_tool", {"name": "wipe"})
        unknown = await client.call_tool("call_tool", {"name": "nothing"})
    assert added.structured == {"result": 5} and not added.is_error
    assert wiped.is_error and wiped.content[0].text == "wipe is refused here"
    assert unknown.is_error and "Unknown tool: nothing" in unknown.content[0].text
    assert seen == [
        ("add", {"a": 2, "b": 3}, "add"),
        ("wipe", {}, "wipe"),
        ("call_tool", {"name": "nothing"}, "call_tool"),
    ]
