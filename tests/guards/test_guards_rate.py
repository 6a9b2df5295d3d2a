"""Rate limits: token buckets per caller and tool, in memory and shared through a real Redis
by two server processes (one over stdio, one over HTTP)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.helpers import LEGACY, MODERN, open_peer
from tests.support.httpserve import free_port, wait_for_port
from tests.support.redisserve import redis_server
from toolwire import Server
from toolwire.client import Client
from toolwire.guards import RateLimit
from toolwire.guards.rate import MemoryLimiter, parse_rate

RATE_LIMITED = str(Path(__file__).resolve().parents[1] / "servers" / "rate_limited.py")


def limited_server(rate: str, burst: int) -> Server:
    server = Server("limited", guards=[RateLimit(rate, burst=burst)])

    @server.tool
    async def echo(text: str) -> str:
        return text

    @server.tool
    async def other() -> str:
        return "other"

    return server


@pytest.mark.parametrize("version", [LEGACY[-1], MODERN])
async def test_a_caller_past_the_rate_waits_for_the_bucket_to_refill(version: str) -> None:
    server = limited_server("4/second", burst=2)
    peer = await open_peer(server, version)
    texts = [(await peer.call("echo", {"text": "hi"}))["result"]["content"][0]["text"] for _ in range(3)]
    assert texts[:2] == ["hi", "hi"]
    assert texts[2] == "Rate limit: echo may be called 4 times a second (bursts of 2); try again in 0.2 s."
    assert (await peer.call("other"))["result"]["content"][0]["text"] == "other"  # its own bucket
    neighbour = await open_peer(server, version)  # another session: its own buckets
    assert (await neighbour.call("echo", {"text": "yo"}))["result"]["content"][0]["text"] == "yo"
    await asyncio.sleep(0.3)
    assert (await peer.call("echo", {"text": "again"}))["result"]["content"][0]["text"] == "again"


def test_rates_are_read_as_people_write_them() -> None:
    assert parse_rate("30/minute") == (0.5, "30 times a minute")
    assert parse_rate("5 / second") == (5.0, "5 times a second")
    assert parse_rate("3/10 seconds") == (0.3, "3 times per 10 seconds")
    assert parse_rate("20/hour")[1] == "20 times an hour"
    assert parse_rate(2) == (2.0, "2 times a second")
    for bad in ("fast", "0/minute", "5/fortnight"):
        with pytest.raises(ValueError):
            parse_rate(bad)


async def test_memory_buckets_are_bounded() -> None:
    limiter = MemoryLimiter(max_keys=100)
    for number in range(10_000):
        await limiter.take(f"key{number}", 1.0, 1)
    assert len(limiter._buckets) == 100


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


async def test_redis_buckets_are_atomic(redis_url: str) -> None:
    from toolwire.stores.redis import RedisLimiter

    limiters = [RedisLimiter(redis_url, prefix=f"atomic{os.getpid()}:") for _ in range(4)]
    waits = await asyncio.gather(*(limiters[n % 4].take("shared", 0.001, 50) for n in range(400)))
    for limiter in limiters:
        await limiter.close()
    assert sum(1 for wait in waits if wait == 0) == 50
    assert all(wait > 0 for wait in waits if wait != 0)


async def test_two_server_processes_share_one_limit_through_redis(redis_url: str) -> None:
    port = free_port()
    environment = {**os.environ, "REDIS_URL": redis_url}
    command = [sys.executable, "-m", "toolwire", "run", RATE_LIMITED, "--http", str(port)]
    http = await asyncio.create_subprocess_exec(
        *command, env=environment, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    try:
        await asyncio.to_thread(wait_for_port, port, _Poll(http))
        async with (
            Client(RATE_LIMITED, env={"REDIS_URL": redis_url}) as stdio,
            Client(f"http://127.0.0.1:{port}/mcp") as web,
        ):
            results = []
            for number in range(8):
                client = stdio if number % 2 else web
                results.append(await client.call_tool("echo", {"text": str(number)}))
    finally:
        http.kill()
        await http.wait()
    allowed = [result for result in results if not result.is_error]
    assert len(allowed) == 5
    assert all(
        "Rate limit: echo may be called 5 times a minute" in result.content[0].text
        for result in results
        if result.is_error
    )  # type: ignore[union-attr]


class _Poll:
    """What ``wait_for_port`` asks of a process, for an asyncio one."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.returncode = None

    def poll(self) -> int | None:
        return self.process.returncode
