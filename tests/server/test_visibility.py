"""Visibility per session and per caller: a tool hidden for one session or one authenticated
caller, the others unaffected (their lists, their calls, the pages they share), and
``list_changed`` sent to the affected sessions only. In memory in both eras, and over HTTP
with two sessions of one server (and two callers) on real sockets."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.support.helpers import LEGACY, MODERN, Peer, open_peer
from tests.support.httpserve import (
    BASE,
    InProcess,
    initialize,
    legacy_call,
    modern_call,
    modern_headers,
    read_sse,
)
from toolwire import Context, Server
from toolwire.auth import Identity, ProtectedResource

CHANGED = "notifications/tools/list_changed"


def shop() -> Server:
    server = Server("shop")

    @server.tool
    def browse() -> str:
        return "items"

    @server.tool
    def refund(order: str) -> str:
        return f"refunded {order}"

    @server.tool
    def hide_refunds(ctx: Context) -> str:
        """Hide ``refund`` from this session only."""
        ctx.session_visibility.disable("refund")
        return "hidden"

    @server.tool
    def hide_refunds_for_me(ctx: Context) -> str:
        ctx.caller_visibility.disable("refund")
        return "hidden"

    @server.tool
    def show_refunds(ctx: Context) -> str:
        ctx.session_visibility.reset()
        return "shown"

    return server


async def names(peer: Peer) -> list[str]:
    return [tool["name"] for tool in (await peer.request("tools/list"))["result"]["tools"]]


def changed(peer: Peer) -> int:
    return sum(1 for n in peer.notifications if n.get("method") == CHANGED)


def text(answer: dict[str, Any]) -> str:
    if "error" in answer:
        return str(answer["error"]["message"])
    return str(answer["result"]["content"][0]["text"])


@pytest.mark.parametrize("version", [LEGACY[0], LEGACY[-1], MODERN])
async def test_a_session_hides_a_tool_for_itself_only(version: str) -> None:
    server = shop()
    one, other = await open_peer(server, version), await open_peer(server, version)
    try:
        if one.modern:  # 2026-07-28: list changes come on a subscription
            for peer in (one, other):
                await peer.send("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        everything = await names(other)  # a page cached before the rules
        assert text(await one.call("hide_refunds")) == "hidden"
        assert "refund" not in await names(one)
        assert "Unknown tool" in text(await one.call("refund", {"order": "7"}))
        assert await names(other) == everything
        assert text(await other.call("refund", {"order": "7"})) == "refunded 7"
        await asyncio.sleep(0.05)
        assert (changed(one), changed(other)) == (1, 0)
        assert text(await one.call("show_refunds")) == "shown"
        assert await names(one) == everything
    finally:
        await one.connection.close()
        await other.connection.close()


async def test_caller_rules_need_an_authenticated_caller() -> None:
    peer = await open_peer(shop(), LEGACY[-1])
    try:
        answer = await peer.call("hide_refunds_for_me")
    finally:
        await peer.connection.close()
    assert answer["result"]["isError"] and "no authenticated caller" in text(answer)


async def test_the_server_hides_a_tool_from_one_caller_and_refuses_unknown_names() -> None:
    server = shop()
    server.disable_tool("refund", caller="alice")
    with pytest.raises(KeyError):
        server.disable_tool("nothing", caller="alice")
    peer = await open_peer(server, LEGACY[-1])  # no caller: not alice
    try:
        assert "refund" in await names(peer)
    finally:
        await peer.connection.close()


# -- over HTTP, two sessions and two callers -------------------------------------------------


async def verify(token: str) -> Identity | None:
    return Identity(token) if token in ("alice", "bob") else None


@pytest.fixture
async def served() -> AsyncIterator[tuple[Server, str]]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    server = shop()
    auth = ProtectedResource(url, ["https://issuer.example"], verify)
    async with InProcess(server.http_app(auth=auth), listener=listener):
        yield server, url


def as_caller(headers: dict[str, str], who: str) -> dict[str, str]:
    return {**headers, "Authorization": f"Bearer {who}"}


async def open_session(http: httpx.AsyncClient, url: str, who: str) -> dict[str, str]:
    """A legacy session opened by ``who``: the headers its later requests carry."""
    opening = as_caller({**BASE, "MCP-Protocol-Version": LEGACY[-1]}, who)
    reply = await http.post(url, json=initialize(LEGACY[-1]), headers=opening)
    assert reply.status_code == 200, reply.text
    headers = {**opening, "Mcp-Session-Id": reply.headers["mcp-session-id"]}
    await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    return headers


async def legacy_names(http: httpx.AsyncClient, url: str, headers: dict[str, str]) -> list[str]:
    reply = await http.post(url, json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"}, headers=headers)
    return [tool["name"] for tool in reply.json()["result"]["tools"]]


async def modern_names(http: httpx.AsyncClient, url: str, who: str) -> list[str]:
    body = {**modern_call("x"), "method": "tools/list", "params": {"_meta": modern_call("x")["params"]["_meta"]}}
    reply = await http.post(url, json=body, headers=as_caller(modern_headers("tools/list"), who))
    return [tool["name"] for tool in reply.json()["result"]["tools"]]


async def next_change(http: httpx.AsyncClient, url: str, headers: dict[str, str], wait: float) -> list[str]:
    """The list changes announced on the session's GET stream within ``wait`` seconds."""
    seen: list[str] = []

    async def read() -> None:
        async with http.stream("GET", url, headers={**headers, "Accept": "text/event-stream"}) as stream:
            async for event in read_sse(stream):
                if event.data:
                    seen.append(event.message["method"])

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(read(), wait)
    return seen


async def test_two_http_sessions_of_one_caller_differ_by_their_session_rules(served: tuple[Server, str]) -> None:
    _, url = served
    async with httpx.AsyncClient() as http:
        one = await open_session(http, url, "alice")
        other = await open_session(http, url, "alice")
        everything = await legacy_names(http, url, other)
        one_hears = asyncio.create_task(next_change(http, url, one, 1.0))
        other_hears = asyncio.create_task(next_change(http, url, other, 1.0))
        await asyncio.sleep(0.2)  # both streams open
        reply = await http.post(url, json=legacy_call("hide_refunds"), headers=one)
        assert reply.json()["result"]["content"][0]["text"] == "hidden"
        assert "refund" not in await legacy_names(http, url, one)
        assert await legacy_names(http, url, other) == everything
        assert (await one_hears, await other_hears) == ([CHANGED], [])


async def test_caller_rules_reach_that_callers_sessions_in_both_eras_and_no_one_elses(
    served: tuple[Server, str],
) -> None:
    server, url = served
    async with httpx.AsyncClient() as http:
        alice = await open_session(http, url, "alice")
        bob = await open_session(http, url, "bob")
        alice_hears = asyncio.create_task(next_change(http, url, alice, 1.0))
        bob_hears = asyncio.create_task(next_change(http, url, bob, 1.0))
        await asyncio.sleep(0.2)
        server.disable_tool("refund", caller="alice")
        assert "refund" not in await legacy_names(http, url, alice)
        assert "refund" not in await modern_names(http, url, "alice")
        assert "refund" in await legacy_names(http, url, bob)
        assert "refund" in await modern_names(http, url, "bob")
        refused = await http.post(url, json=legacy_call("refund", {"order": "1"}), headers=alice)
        assert "Unknown tool" in text(refused.json())
        assert (await alice_hears, await bob_hears) == ([CHANGED], [])
        server.enable_tool("refund", caller="alice")
        assert "refund" in await legacy_names(http, url, alice)


async def test_a_stateless_request_cannot_keep_session_rules(served: tuple[Server, str]) -> None:
    _, url = served
    async with httpx.AsyncClient() as http:
        reply = await http.post(
            url,
            json=modern_call("hide_refunds"),
            headers=as_caller(modern_headers("tools/call", "hide_refunds"), "bob"),
        )
        result = reply.json()["result"]
        assert result["isError"] and "ctx.caller_visibility" in result["content"][0]["text"]
        reply = await http.post(
            url,
            json=modern_call("hide_refunds_for_me"),
            headers=as_caller(modern_headers("tools/call", "hide_refunds_for_me"), "bob"),
        )
        assert reply.json()["result"]["content"][0]["text"] == "hidden"
        assert "refund" not in await modern_names(http, url, "bob")
        assert "refund" in await modern_names(http, url, "alice")
