"""Guards marked ``lists_too`` see list requests and their pages, which they may log, filter or
refuse; other guards never see a list, and a server without such a guard answers lists as before."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.helpers import LEGACY, MODERN, open_peer
from toolwire import ProtocolError, Server
from toolwire.guards import Call, Next, lists_too


def listing_server(*guards: Any) -> Server:
    server = Server("guarded", guards=guards)

    @server.tool
    def read_file(path: str) -> str:
        return path

    @server.tool
    def delete_file(path: str) -> str:
        return f"deleted {path}"

    @server.prompt
    def summary() -> str:
        return "Summarise."

    return server


@pytest.mark.parametrize("version", [LEGACY[0], LEGACY[-1], MODERN])
async def test_a_list_guard_filters_the_page_and_the_call_guard_sees_calls_only(version: str) -> None:
    seen: list[str] = []

    @lists_too
    async def read_only_lists(call: Call, next: Next) -> dict[str, Any]:
        result = await next(call)
        seen.append(call.subject)
        if call.method == "tools/list":
            result["tools"] = [tool for tool in result["tools"] if not tool["name"].startswith("delete")]
        return result

    async def calls_only(call: Call, next: Next) -> dict[str, Any]:
        seen.append(f"calls_only {call.subject}")
        return await next(call)

    peer = await open_peer(listing_server(read_only_lists, calls_only), version)
    try:
        tools = (await peer.request("tools/list"))["result"]
        prompts = (await peer.request("prompts/list"))["result"]["prompts"]
        await peer.call("read_file", {"path": "a"})
    finally:
        await peer.connection.close()
    assert [tool["name"] for tool in tools["tools"]] == ["read_file"]
    if peer.modern:  # the answer is still a whole 2026-07-28 list result
        assert tools["resultType"] == "complete" and "ttlMs" in tools
    assert [prompt["name"] for prompt in prompts] == ["summary"]
    assert seen == ["tools/list", "prompts/list", "calls_only tools/call read_file", "tools/call read_file"]


async def test_a_list_guard_may_refuse_a_list() -> None:
    @lists_too
    async def no_lists(call: Call, next: Next) -> dict[str, Any]:
        if call.method.endswith("/list"):
            raise ProtocolError(-32600, "lists are closed")
        return await next(call)

    peer = await open_peer(listing_server(no_lists), LEGACY[-1])
    try:
        refused = await peer.request("tools/list")
        called = await peer.call("read_file", {"path": "a"})
    finally:
        await peer.connection.close()
    assert refused["error"] == {"code": -32600, "message": "lists are closed"}
    assert called["result"]["content"][0]["text"] == "a"


def test_only_marked_guards_are_composed_for_lists() -> None:
    async def plain(call: Call, next: Next) -> dict[str, Any]:
        return await next(call)

    @lists_too
    async def listing(call: Call, next: Next) -> dict[str, Any]:
        return await next(call)

    assert listing_server().list_guarded is None
    assert listing_server(plain).list_guarded is None
    assert listing_server(plain, listing).list_guarded is not None
