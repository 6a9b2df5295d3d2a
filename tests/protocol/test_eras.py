"""Lifecycle and per-version behaviour: handshake, discovery, per-request _meta, envelopes."""

from __future__ import annotations

import pytest

from tests.support.helpers import LEGACY, MODERN, meta, open_peer
from toolwire import Context, Server
from toolwire.transports.memory import MemoryConnection


def make_server() -> Server:
    server = Server("eras", "2.0.0", instructions="Use echo to echo.")

    @server.tool
    async def echo(text: str) -> str:
        """Echo the text."""
        return text

    return server


@pytest.mark.parametrize("version", LEGACY)
async def test_initialize_answers_the_clients_version(version: str) -> None:
    async with MemoryConnection(make_server()) as connection:
        await connection.send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": version, "capabilities": {}},
            }
        )
        result = (await connection.receive())["result"]
    assert result["protocolVersion"] == version
    assert result["capabilities"]["tools"] == {"listChanged": True}
    assert result["serverInfo"] == {"name": "eras", "version": "2.0.0"}
    assert result["instructions"] == "Use echo to echo."
    assert "resultType" not in result


async def test_initialize_with_an_unknown_version_answers_our_latest_legacy() -> None:
    async with MemoryConnection(make_server()) as connection:
        await connection.send(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "1999-01-01"}}
        )
        assert (await connection.receive())["result"]["protocolVersion"] == "2025-11-25"


async def test_requests_before_initialize_are_refused_but_ping_is_answered() -> None:
    async with MemoryConnection(make_server()) as connection:
        await connection.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        error = (await connection.receive())["error"]
        assert error["code"] == -32602
        assert "initialize" in error["message"] and "_meta" in error["message"]
        await connection.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert await connection.receive() == {"jsonrpc": "2.0", "id": 2, "result": {}}


async def test_initialize_twice_is_refused() -> None:
    peer = await open_peer(make_server(), "2025-11-25")
    answer = await peer.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
    assert answer["error"]["code"] == -32600


async def test_discover_describes_the_server_with_cache_hints() -> None:
    peer = await open_peer(make_server(), MODERN)
    result = (await peer.request("server/discover"))["result"]
    assert result["supportedVersions"][0] == MODERN
    assert set(LEGACY) <= set(result["supportedVersions"])
    assert result["capabilities"]["tools"] == {"listChanged": True}
    assert result["instructions"] == "Use echo to echo."
    assert result["resultType"] == "complete"
    assert result["ttlMs"] == 60_000 and result["cacheScope"] == "public"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "eras"


async def test_modern_request_without_capabilities_is_invalid_params() -> None:
    async with MemoryConnection(make_server()) as connection:
        params = {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}
        await connection.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params})
        error = (await connection.receive())["error"]
    assert error["code"] == -32602
    assert "clientCapabilities" in error["message"]


@pytest.mark.parametrize("requested", ["2030-01-01", "2025-11-25"])
async def test_unsupported_modern_version_lists_the_supported_ones(requested: str) -> None:
    async with MemoryConnection(make_server()) as connection:
        params = {"_meta": {**meta(), "io.modelcontextprotocol/protocolVersion": requested}}
        await connection.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params})
        error = (await connection.receive())["error"]
    assert error["code"] == -32022
    assert error["data"]["requested"] == requested
    assert MODERN in error["data"]["supported"]


async def test_era_specific_methods_are_unknown_in_the_other_era() -> None:
    modern = await open_peer(make_server(), MODERN)
    assert (await modern.request("ping"))["error"]["code"] == -32601
    assert (await modern.request("logging/setLevel", {"level": "info"}))["error"]["code"] == -32601
    legacy = await open_peer(make_server(), "2025-11-25")
    assert (await legacy.request("server/discover"))["error"]["code"] == -32601
    assert (await legacy.request("subscriptions/listen"))["error"]["code"] == -32601
    assert (await legacy.request("no/such/method"))["error"] == {
        "code": -32601,
        "message": "Method not found: no/such/method",
    }


async def test_both_eras_on_one_connection() -> None:
    server = make_server()
    legacy = await open_peer(server, "2025-06-18")
    answer = await legacy.call("echo", {"text": "old"})
    assert answer["result"] == {"content": [{"type": "text", "text": "old"}]}
    # a modern request on the same (initialized) connection is served statelessly
    await legacy.connection.send(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {
                "name": "echo",
                "arguments": {"text": "new"},
                "_meta": meta(),
            },
        }
    )
    modern_answer = await legacy.answer(7)
    assert modern_answer["result"]["resultType"] == "complete"
    assert modern_answer["result"]["content"] == [{"type": "text", "text": "new"}]


async def test_modern_results_carry_result_type_and_server_info_legacy_do_not() -> None:
    server = make_server()
    modern = await open_peer(server, MODERN)
    result = (await modern.call("echo", {"text": "x"}))["result"]
    assert result["resultType"] == "complete"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"] == "2.0.0"
    listed = (await modern.request("tools/list"))["result"]
    assert listed["resultType"] == "complete" and listed["ttlMs"] == 60_000 and listed["cacheScope"] == "public"
    legacy = await open_peer(server, "2025-11-25")
    listed = (await legacy.request("tools/list"))["result"]
    assert set(listed) == {"tools"}


async def test_logging_set_level_filters_legacy_log_messages() -> None:
    server = Server("logs")

    @server.tool
    async def chatty(ctx: Context) -> str:
        ctx.debug("d")
        ctx.info("i")
        ctx.log("error", {"code": 7}, logger="db")
        return "done"

    peer = await open_peer(server, "2025-11-25")
    await peer.call("chatty")
    assert [n["params"]["level"] for n in peer.notifications] == ["info", "error"]
    assert peer.notifications[1]["params"] == {"level": "error", "data": {"code": 7}, "logger": "db"}
    assert (await peer.request("logging/setLevel", {"level": "error"}))["result"] == {}
    peer.notifications.clear()
    await peer.call("chatty")
    assert [n["params"]["level"] for n in peer.notifications] == ["error"]
    assert (await peer.request("logging/setLevel", {"level": "loud"}))["error"]["code"] == -32602


async def test_modern_logging_only_with_a_per_request_log_level() -> None:
    server = Server("logs")

    @server.tool
    async def chatty(ctx: Context) -> str:
        ctx.debug("d")
        ctx.warning("w")
        return "done"

    peer = await open_peer(server, MODERN)
    await peer.call("chatty")
    assert peer.notifications == []
    await peer.call("chatty", **{"io.modelcontextprotocol/logLevel": "warning"})
    assert [n["params"]["level"] for n in peer.notifications] == ["warning"]
    answer = await peer.call("chatty", **{"io.modelcontextprotocol/logLevel": "verbose"})
    assert answer["error"]["code"] == -32602
