"""The client against hostile or merely busy servers, over real pipes: many calls in flight, a
server that stops reading, lines too long or never ending. An event-loop watchdog fails a
test if the loop is ever held for a second."""

from __future__ import annotations

import asyncio
import gc
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from toolwire.client import Client, ConnectionClosed, OutputSchemaMismatch, RequestTimeout

ROOT = Path(__file__).resolve().parents[2]
ECHO = str(ROOT / "benchmarks" / "echo_server.py")
FLOOR = [sys.executable, str(ROOT / "benchmarks" / "floor_server.py")]
HOSTILE = str(ROOT / "tests" / "servers" / "hostile_peer.py")


@pytest.fixture
async def watchdog() -> AsyncIterator[list[float]]:
    """The event loop's worst lag (seconds) while the test ran; it must stay under 1 s."""
    worst = [0.0]

    async def tick() -> None:
        while True:
            before = time.monotonic()
            await asyncio.sleep(0.05)
            worst[0] = max(worst[0], time.monotonic() - before - 0.05)

    task = asyncio.create_task(tick())
    yield worst
    task.cancel()
    assert worst[0] < 1.0, f"the event loop was held for {worst[0]:.2f} s"


@pytest.mark.parametrize("target", [ECHO, FLOOR], ids=["toolwire", "blocking-loop"])
async def test_ten_thousand_calls_in_flight(target: str | list[str], watchdog: list[float]) -> None:
    # What earlier tests left in this process is frozen, so that a full collection of it does
    # not land among the 10,000 calls and count as the client holding the loop.
    gc.collect()
    gc.freeze()
    try:
        async with Client(target, protocol="2025-11-25", timeout=60) as client:
            texts = [f"call {number} " + "z" * 200 for number in range(10_000)]
            results = await asyncio.wait_for(
                asyncio.gather(*(client.call_tool("echo", {"text": text}) for text in texts)), 60
            )
    finally:
        gc.unfreeze()
    assert [result.content[0].text for result in results] == texts  # type: ignore[union-attr]


async def test_a_server_that_stops_reading_cannot_outlast_the_timeout(watchdog: list[float]) -> None:
    async with Client([sys.executable, HOSTILE, "stall"], timeout=2) as client:
        started = time.monotonic()
        with pytest.raises(RequestTimeout):
            await client.call_tool("echo", {"text": "x" * 3_000_000})  # more than the pipe holds
        assert time.monotonic() - started < 4


async def test_a_line_too_long_ends_the_connection_saying_so(watchdog: list[float]) -> None:
    async with Client([sys.executable, HOSTILE, "huge-line"], timeout=30) as client:
        started = time.monotonic()
        with pytest.raises(ConnectionClosed, match="more than 4194304 bytes"):
            await client.call_tool("echo", {"text": "hi"})
        assert time.monotonic() - started < 10


async def test_a_line_that_never_ends_is_refused_before_the_timeout(watchdog: list[float]) -> None:
    async with Client([sys.executable, HOSTILE, "endless-line"], timeout=30, max_message_bytes=1_000_000) as client:
        with pytest.raises(ConnectionClosed, match="more than 1000000 bytes"):
            await asyncio.wait_for(client.call_tool("echo", {"text": "hi"}), 10)


async def test_an_output_schema_bomb_is_refused_at_once(watchdog: list[float]) -> None:
    async with Client([sys.executable, HOSTILE, "schema-bomb"]) as client:
        started = time.monotonic()
        with pytest.raises(OutputSchemaMismatch, match="too complex to check"):
            await client.call_tool("echo", {})
        assert time.monotonic() - started < 2
