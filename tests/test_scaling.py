"""Replicas behind a load balancer: three ``toolwire run --http --redis`` processes behind a real
``haproxy`` (round robin, no stickiness) sharing a real ``redis-server``. On the 2026-07-28
wire every request may land on another replica: calls, the rounds of a question, tasks
polled, answered and cancelled anywhere."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from httpserve import SERVERS, free_port, toolwire_http, wait_for_port
from redisserve import redis_server
from toolwire.client import Client

JOBS = str(SERVERS / "jobs.py")
MODERN = "2026-07-28"


@contextlib.contextmanager
def haproxy(ports: list[int], directory: Path) -> Iterator[str]:
    """``haproxy`` on a free port of 127.0.0.1, round robin over ``ports``; yields its URL."""
    binary = shutil.which("haproxy") or "/usr/sbin/haproxy"
    assert Path(binary).exists(), "these tests need haproxy (scripts/setup.sh installs it when run as root)"
    port = free_port()
    servers = "\n".join(f"    server r{index} 127.0.0.1:{replica}" for index, replica in enumerate(ports))
    config = directory / "haproxy.cfg"
    config.write_text(
        "defaults\n    mode http\n    timeout connect 5s\n    timeout client 60s\n    timeout server 60s\n"
        f"frontend mcp\n    bind 127.0.0.1:{port}\n    default_backend replicas\n"
        f"backend replicas\n    balance roundrobin\n{servers}\n"
    )
    process = subprocess.Popen([binary, "-f", str(config), "-db"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture(scope="module")
def balanced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with contextlib.ExitStack() as stack:
        redis = stack.enter_context(redis_server())
        ports = [free_port() for _ in range(3)]
        for port in ports:
            stack.enter_context(toolwire_http(JOBS, "--redis", redis, "--allow-host", "127.0.0.1", port=port))
        yield stack.enter_context(haproxy(ports, tmp_path_factory.mktemp("haproxy")))


async def answer_name(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


async def test_requests_go_round_robin_to_every_replica(balanced: str) -> None:
    async with Client(balanced, protocol=MODERN) as client:
        answered = {(await client.call_tool("whoami")).text for _ in range(6)}
    assert len(answered) == 3  # three processes answered: nothing sticks


async def test_a_questions_rounds_land_on_different_replicas(balanced: str) -> None:
    async with Client(balanced, protocol=MODERN, elicitation=answer_name) as client:
        for _ in range(3):  # each round may reach another replica: the sealing key is shared
            assert (await client.call_tool("ask_name")).text == "Hello, Ada"


async def test_tasks_are_polled_answered_and_cancelled_through_any_replica(balanced: str) -> None:
    async with Client(balanced, protocol=MODERN, elicitation=answer_name) as client:
        handle = await client.start_task("sleep", {"seconds": 0.3})
        assert (await handle.result()).text == "slept 0.3 s"
        asking = await client.start_task("ask_name")  # tasks/update lands wherever it lands
        assert (await asking.result(timeout=30)).text == "Hello, Ada"
        long = await client.start_task("sleep", {"seconds": 30})
        started = time.monotonic()
        await long.cancel()  # maybe through another replica than the one running it
        for _ in range(3):
            assert (await long.refresh()).status == "cancelled"
        assert time.monotonic() - started < 10


async def test_many_calls_at_once_through_the_balancer(balanced: str) -> None:
    async with Client(balanced, protocol=MODERN) as client:
        results = await asyncio.gather(*(client.call_tool("quick", {"x": n}) for n in range(60)))
    assert [result.text for result in results] == [str(2 * n) for n in range(60)]
