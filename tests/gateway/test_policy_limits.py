"""Per-caller limits of the gateway's policy: ``rate`` and ``concurrency``, in one process
over stdio, and shared by two server processes through a real redis-server (a replica
killed with SIGKILL while a call is in flight does not hold its slot for good)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gateway.support import SERVER, served_over_http, stdio_client, write_config
from tests.support.httpserve import toolwire_http
from tests.support.redisserve import redis_server
from toolwire.client import Client

RATE = """
[policy.default]
allow = ["files/*", "github/get_*"]
rate = "3/minute"
"""

CONCURRENCY = """
[policy.default]
allow = ["files/*"]
concurrency = 1
"""


class Holding:
    """Set when the server says a ``files.hold`` call is in flight."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    def heard(self, message: dict[str, Any]) -> None:
        if message.get("data") == "holding":
            self.started.set()


async def test_a_callers_rate_is_kept_and_the_refusal_says_when_to_try_again(tmp_path: Path) -> None:
    async with stdio_client(write_config(tmp_path, RATE)) as client:
        for number in range(3):
            assert not (await client.call_tool("github.get_issue", {"number": number})).is_error
        refused = await client.call_tool("files.list_files")
        assert refused.is_error
        assert refused.text.startswith(
            "Rate limit: anonymous may call the gateway's tools 3 times a minute; try again in"
        )


async def test_a_call_beyond_a_callers_concurrency_is_refused_at_once_and_others_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    holding = Holding()
    async with (
        served_over_http(write_config(tmp_path, CONCURRENCY), monkeypatch) as served,
        served.client("alice", on_log=holding.heard, log_level="info") as alice,
        served.client("bob") as bob,
    ):
        held = asyncio.create_task(alice.call_tool("files.hold"))
        await holding.started.wait()
        refused = await alice.call_tool("files.list_files")
        assert refused.is_error
        assert refused.text == (
            "files.list_files was not run: alice already has 1 calls in flight through the gateway (its limit);"
            " try again when one has finished."
        )
        assert (await bob.call_tool("files.release")).text == "done"  # bob's calls are his own
        assert (await held).text == "released"
        assert (await alice.call_tool("files.list_files")).text == "a.txt b.txt"


@contextlib.contextmanager
def two_replicas(config: Path, monkeypatch: pytest.MonkeyPatch, lease: float = 30.0) -> Iterator[list[Any]]:
    """Two processes serving the policy server over HTTP, sharing a redis-server."""
    with redis_server() as redis:
        monkeypatch.setenv("TOOLWIRE_TEST_GATEWAY", str(config))
        monkeypatch.setenv("TOOLWIRE_TEST_REDIS", redis)
        monkeypatch.setenv("TOOLWIRE_TEST_LEASE", str(lease))
        with toolwire_http(SERVER) as first, toolwire_http(SERVER) as second:
            yield [first, second]


async def test_two_replicas_share_a_callers_rate_through_redis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with two_replicas(write_config(tmp_path, RATE), monkeypatch) as replicas:
        async with Client(replicas[0][0]) as first, Client(replicas[1][0]) as second:
            for client in (first, second, first):
                assert not (await client.call_tool("files.list_files")).is_error
            refused = await second.call_tool("files.list_files")
            assert refused.is_error and "3 times a minute" in refused.text


async def test_two_replicas_share_concurrency_and_a_dead_replicas_slot_comes_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with two_replicas(write_config(tmp_path, CONCURRENCY), monkeypatch, lease=1.0) as replicas:
        holding = Holding()
        async with Client(replicas[1][0]) as second:
            async with Client(replicas[0][0], on_log=holding.heard, log_level="info") as first:
                held = asyncio.create_task(first.call_tool("files.hold"))
                await holding.started.wait()
                refused = await second.call_tool("files.list_files")
                assert refused.is_error and "already has 1 calls in flight" in refused.text
                killed_at = time.monotonic()
                replicas[0][1].kill()  # SIGKILL: the lease is never given back, nor renewed again
                replicas[0][1].wait(10)
                with contextlib.suppress(Exception):
                    await held
            while (result := await second.call_tool("files.list_files")).is_error:
                assert time.monotonic() - killed_at < 20, "the dead replica's slot never came back"
                await asyncio.sleep(0.1)  # polling for the lease's end, which is the event awaited
            assert result.text == "a.txt b.txt"
