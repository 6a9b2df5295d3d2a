"""Guards: the seam and the built-in limits, in both eras, in memory, over stdio and over HTTP."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import LEGACY, MODERN, open_peer
from tests.support.httpserve import fresh_server, toolwire_http
from toolwire import Server
from toolwire.client import Client, ServerError
from toolwire.guards import Call, Next

GUARDED = str(Path(__file__).resolve().parents[1] / "servers" / "guarded.py")
ERAS = ["2025-11-25", "2026-07-28"]


def text(result: Any) -> str:
    return " ".join(block.text for block in result.content if hasattr(block, "text"))


@pytest.fixture(scope="module")
def http_url() -> Any:
    with toolwire_http(GUARDED) as (url, _process):
        yield url


@pytest.fixture(params=["memory", "stdio", "http"])
def target(request: pytest.FixtureRequest) -> Any:
    if request.param == "memory":
        return fresh_server(GUARDED)
    if request.param == "stdio":
        return GUARDED
    return request.getfixturevalue("http_url")


@pytest.fixture(params=ERAS)
async def client(target: Any, request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    async with Client(target, protocol=request.param, timeout=20) as connected:
        yield connected


async def test_a_guard_sees_every_call_and_may_change_the_result(client: Client) -> None:
    result = await client.call_tool("echo", {"text": "hi"})
    assert text(result) == f"hi [guarded {client.version}]"


async def test_a_tool_runs_in_a_task_of_its_own_from_its_first_line(client: Client) -> None:
    assert text(await client.call_tool("own_task", {})).startswith("own task")


async def test_a_guard_may_refuse_a_call_with_an_error_the_model_reads(client: Client) -> None:
    result = await client.call_tool("echo", {"text": "my secret"})
    assert result.is_error and text(result) == "tools/call echo was refused: it mentions a secret"


async def test_a_tool_past_its_timeout_is_cancelled_and_says_so(client: Client) -> None:
    for tool in ("slow", "slow_sync"):
        started = time.monotonic()
        result = await client.call_tool(tool, {"seconds": 5})
        assert time.monotonic() - started < 2
        assert result.is_error and text(result) == f"Tool '{tool}' timed out after 0.5 s and was cancelled."
    assert text(await client.call_tool("slow", {"seconds": 0.01})).startswith("woke up")


async def test_the_servers_timeout_covers_tools_without_their_own_and_resources(client: Client) -> None:
    result = await client.call_tool("forever", {})
    assert result.is_error and text(result) == "Tool 'forever' timed out after 1 s and was cancelled."
    with pytest.raises(ServerError, match="resources/read note://slow timed out after 1 s"):
        await client.read_resource("note://slow")


async def test_calls_beyond_a_tools_concurrency_wait_for_a_slot(client: Client) -> None:
    started = time.monotonic()
    results = await asyncio.gather(*(client.call_tool("single", {"seconds": 0.3}) for _ in range(3)))
    assert [text(result).split()[0] for result in results] == ["done"] * 3
    assert time.monotonic() - started >= 0.85  # one after another


async def test_deadlines_of_different_lengths_share_one_timer_and_each_fires_on_time() -> None:
    server = Server("deadlines", timeout=0.6)

    @server.tool(timeout=0.2)
    async def short(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "short done"

    @server.tool()
    async def long(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "long done"

    async with Client(server, timeout=10) as client:
        started = time.monotonic()

        async def timed(tool: str, seconds: float) -> tuple[str, float]:
            result = await client.call_tool(tool, {"seconds": seconds})
            return text(result), time.monotonic() - started

        # The long deadline starts first; a shorter one after it must still fire first.
        outcomes = await asyncio.gather(timed("long", 5), timed("short", 5), timed("short", 0.01), timed("long", 0.3))
    (long_out, long_at), (short_out, short_at), (quick, _), (finished, _) = outcomes
    assert short_out == "Tool 'short' timed out after 0.2 s and was cancelled." and 0.15 < short_at < 0.5
    assert long_out == "Tool 'long' timed out after 0.6 s and was cancelled." and 0.55 < long_at < 1.0
    assert (quick, finished) == ("short done", "long done")


async def test_calls_beyond_the_limit_are_refused_once_the_wait_is_over() -> None:
    from toolwire.guards import Limits

    server = Server("busy", guards=[Limits(queue_timeout=0.2)])

    @server.tool(max_concurrency=1)
    async def single(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "done"

    for version in (LEGACY[-1], MODERN):
        peer = await open_peer(server, version)
        ids = [
            await peer.send("tools/call", {"name": "single", "arguments": {"seconds": seconds}}) for seconds in (0.5, 0)
        ]
        answers = {
            answer["id"]: answer for answer in [await peer.connection.receive(), await peer.connection.receive()]
        }
        first, second = answers[ids[0]], answers[ids[1]]
        assert first["result"]["content"][0]["text"] == "done"
        assert second["result"]["isError"] is True
        assert second["result"]["content"][0]["text"] == (
            "Tool 'single' is busy: 1 of its calls are already running and none finished within 0.2 s. Try again later."
        )


async def test_guards_see_who_calls_what_in_which_era() -> None:
    seen: list[tuple[Any, ...]] = []

    async def record(call: Call, next: Next) -> dict[str, Any]:
        seen.append((call.method, call.name, call.arguments, call.version, call.client, call.caller, call.subject))
        assert call.session_id and call.request_id is not None and isinstance(call.meta, dict)
        return await next(call)

    server = Server("seen", guards=[record])

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b

    @server.resource("note://a")
    def note() -> str:
        return "a"

    @server.prompt
    def review(code: str) -> str:
        return code

    for version in (LEGACY[-1], MODERN):
        peer = await open_peer(server, version)
        await peer.call("add", {"a": 1, "b": 2})
        await peer.call("nope", {})
        await peer.request("resources/read", {"uri": "note://a"})
        await peer.request("prompts/get", {"name": "review", "arguments": {"code": "x"}})
        await peer.request("tools/list")  # lists do not run your code: no guard
    methods = [(entry[0], entry[1], entry[3]) for entry in seen]
    assert methods == [
        ("tools/call", "add", LEGACY[-1]),
        ("tools/call", "nope", LEGACY[-1]),
        ("resources/read", "note://a", LEGACY[-1]),
        ("prompts/get", "review", LEGACY[-1]),
        ("tools/call", "add", MODERN),
        ("tools/call", "nope", MODERN),
        ("resources/read", "note://a", MODERN),
        ("prompts/get", "review", MODERN),
    ]
    assert seen[0][2] == {"a": 1, "b": 2} and seen[0][4] == {"name": "t", "version": "1"}
    assert seen[0][6] == "tools/call add"


def test_limits_are_checked_when_a_tool_is_defined() -> None:
    server = Server("bad")

    def tool() -> None:
        """Nothing."""

    with pytest.raises(ValueError, match="timeout must be a number of seconds above 0"):
        server.tool(timeout=0)(tool)
    with pytest.raises(ValueError, match="max_concurrency must be 1 or more"):
        server.tool(max_concurrency=0)(tool)
