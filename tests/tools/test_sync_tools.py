"""Plain-function tools: the worker lane (batches, blocking functions, cancellation, its
thread's lifetime) and ``inline=True``, directly and through a server in memory and over stdio."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import open_peer
from tests.support.httpserve import fresh_server
from toolwire import Server
from toolwire.client import Client
from toolwire.tools import threads

SYNC_TOOLS = str(Path(__file__).resolve().parents[1] / "servers" / "sync_tools.py")
CALLER = contextvars.ContextVar("caller", default="nobody")


def text(result: Any) -> str:
    return " ".join(block.text for block in result.content if hasattr(block, "text"))


def lane_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "toolwire-sync"]


async def test_results_exceptions_and_the_callers_context_reach_the_caller() -> None:
    CALLER.set("the test")
    assert await threads.run_sync(lambda a, b=0: (a, b, CALLER.get()), 1, b=2) == (1, 2, "the test")
    with pytest.raises(ZeroDivisionError):
        await threads.run_sync(lambda: 1 / 0)
    with pytest.raises(KeyboardInterrupt):  # BaseException too, as run_in_executor does
        await threads.run_sync(_interrupt)


def _interrupt() -> None:
    raise KeyboardInterrupt


async def test_many_calls_at_once_run_on_one_thread_and_wake_the_loop_once_per_batch() -> None:
    loop = asyncio.get_running_loop()
    wakes = 0
    original = loop.call_soon_threadsafe

    def counting(*args: Any, **kwargs: Any) -> Any:
        nonlocal wakes
        wakes += 1
        return original(*args, **kwargs)

    loop.call_soon_threadsafe = counting  # type: ignore[method-assign]
    try:
        names = await asyncio.gather(*[threads.run_sync(lambda: threading.current_thread().name) for _ in range(200)])
    finally:
        del loop.call_soon_threadsafe
    assert set(names) == {"toolwire-sync"}
    assert wakes < 50, f"{wakes} wake-ups of the loop for 200 calls"


async def test_a_blocking_call_holds_up_the_others_only_briefly() -> None:
    blocked = threads.run_sync(time.sleep, 1.0)
    await asyncio.sleep(0.01)  # the lane is now inside the blocking call
    started = time.monotonic()
    quick = await asyncio.gather(*[threads.run_sync(lambda n=n: n) for n in range(5)])
    assert quick == list(range(5))
    assert time.monotonic() - started < 0.5
    await blocked


async def test_calls_queued_behind_a_blocking_one_move_to_other_threads() -> None:
    started = time.monotonic()
    await asyncio.gather(*[threads.run_sync(time.sleep, 0.3) for _ in range(4)])
    assert time.monotonic() - started < 0.9  # in parallel, not 1.2 s one after another


async def test_a_call_cancelled_before_it_starts_never_runs() -> None:
    ran: list[int] = []
    blocked = threads.run_sync(time.sleep, 0.2)
    waiting = threads.run_sync(ran.append, 1)
    waiting.cancel()
    await blocked
    await asyncio.sleep(0.05)
    assert ran == []


async def test_the_lane_thread_ends_when_idle_and_the_next_call_starts_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(threads, "IDLE", 0.05)
    first = await threads.run_sync(threading.current_thread)
    deadline = time.monotonic() + 2
    while asyncio.get_running_loop() in threads._lanes and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert asyncio.get_running_loop() not in threads._lanes, "the idle lane kept its thread"
    second = await threads.run_sync(threading.current_thread)
    assert second is not first and not first.is_alive()
    assert await threads.run_sync(lambda: "still served") == "still served"


def test_a_lane_lets_go_once_its_loop_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads, "IDLE", 0.05)
    loop = asyncio.new_event_loop()
    assert loop.run_until_complete(_call_on_lane()) == 42
    loop.close()
    deadline = time.monotonic() + 2
    while loop in threads._lanes and time.monotonic() < deadline:
        time.sleep(0.02)
    assert loop not in threads._lanes


async def _call_on_lane() -> int:
    return await threads.run_sync(lambda: 42)  # type: ignore[no-any-return]


def test_inline_is_for_plain_functions_only() -> None:
    server = Server("s")

    async def coroutine() -> str:
        return ""

    with pytest.raises(ValueError, match="inline=True is for plain functions"):
        server.tool(inline=True)(coroutine)


@pytest.fixture(params=["memory", "stdio"])
def target(request: pytest.FixtureRequest) -> Any:
    return fresh_server(SYNC_TOOLS) if request.param == "memory" else SYNC_TOOLS


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_through_a_server_plain_functions_run_off_the_loop_unless_inline(target: Any, era: str) -> None:
    async with Client(target, protocol=era, timeout=20) as client:
        assert text(await client.call_tool("where")) == "toolwire-sync"
        assert text(await client.call_tool("where_inline")) == "MainThread"
        failed = await client.call_tool("fail", {"text": "luck"})
        assert failed.is_error and "no luck" in text(failed)
        napping = asyncio.ensure_future(client.call_tool("nap", {"seconds": 0.5}))
        await asyncio.sleep(0.05)
        started = time.monotonic()
        assert text(await client.call_tool("ping")) == "pong"
        assert text(await client.call_tool("where")) != "MainThread"
        assert time.monotonic() - started < 0.4, "a blocking tool held up the others"
        assert text(await napping) == "slept 0.5"


def _tenth(x: int) -> int:
    return 10 // x


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_a_failed_tools_logged_traceback_keeps_the_frames_that_ran_on_a_worker_thread(version: str) -> None:
    """The exception of a plain function reaches the call's coroutines thrown in by the event
    loop (as what the future awaited raised): its frames on the worker thread stay in the
    traceback logged, in both builds (mypyc's generators dropped them: docs/performance.md)."""
    server = Server("frames")

    @server.tool()
    def divide(x: int) -> int:
        return _tenth(x)

    @server.tool()
    async def divide_later(x: int) -> int:
        return await asyncio.to_thread(_tenth, x)

    logged: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = logged.append  # type: ignore[method-assign]
    logger = logging.getLogger("toolwire")
    logger.addHandler(handler)
    try:
        peer = await open_peer(server, version)
        for name in ("divide", "divide_later"):
            answer = await peer.call(name, {"x": 0})
            assert answer["result"]["isError"] is True, answer
    finally:
        logger.removeHandler(handler)
    frames = [
        [frame.name for frame in traceback.extract_tb(record.exc_info[2])] for record in logged if record.exc_info
    ]
    assert len(frames) == 2 and all(names[-1] == "_tenth" for names in frames), frames
    assert "divide" in frames[0] and "divide_later" in frames[1], frames
