"""Task stores and what outlives a process: the memory and SQLite stores behind one interface,
a task whose process died reading as interrupted, a server killed with SIGKILL and started
again on the same SQLite file, and tasks bound to the caller that made them (over HTTP with
real tokens)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from helpers import MODERN, open_peer
from httpserve import SERVERS, InProcess, fresh_server, toolwire_http
from redisserve import redis_server
from tokenissuer import TokenIssuer
from toolwire.auth import ProtectedResource
from toolwire.client import Client, ServerError
from toolwire.stores.redis import RedisTaskStore
from toolwire.stores.sqlite import SQLiteTaskStore
from toolwire.tasks import MemoryTaskStore, TaskRecord, TaskStore
from toolwire.tasks.model import INTERRUPTED

JOBS = str(SERVERS / "jobs.py")
ERAS = ["2025-11-25", MODERN]


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture(params=["memory", "sqlite", "redis"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TaskStore]:
    if request.param == "memory":
        made: TaskStore = MemoryTaskStore()
    elif request.param == "sqlite":
        made = SQLiteTaskStore(tmp_path / "t" / "tasks.db")
    else:
        made = RedisTaskStore(request.getfixturevalue("redis_url"), prefix=f"test:{tmp_path.name}:")
    yield made
    await made.close()


async def test_a_store_keeps_changes_and_hands_out_copies(store: TaskStore) -> None:
    record = TaskRecord("t1", "sleep", MODERN, owner="alice", ttl_ms=60_000)
    await store.create(record)
    record.status = "completed"  # the caller's object is not the stored one
    found = await store.get("t1")
    assert found is not None and found.status == "working" and found.owner == "alice"

    def finish(task: TaskRecord) -> bool:
        task.status, task.result = "completed", {"content": [{"type": "text", "text": "done"}]}
        return True

    updated = await store.update("t1", finish)
    assert updated is not None and updated.status == "completed" and updated.updated >= updated.created
    again = await store.get("t1")
    assert again is not None and again.result == {"content": [{"type": "text", "text": "done"}]}
    assert await store.update("t1", lambda task: False) is not None  # no change: still there
    assert await store.update("nope", finish) is None and await store.get("nope") is None


async def test_a_store_pages_an_owners_tasks_or_a_sessions(store: TaskStore) -> None:
    for number in range(5):
        await store.create(TaskRecord(f"a{number}", "t", MODERN, owner="alice", created=100.0 + number))
    await store.create(TaskRecord("b0", "t", MODERN, owner="bob", created=100.0))
    await store.create(TaskRecord("s0", "t", "2025-11-25", session="S", created=100.0))
    first = await store.page("alice", None, None, 3)
    assert [task.id for task in first] == ["a0", "a1", "a2"]
    rest = await store.page("alice", None, (first[-1].created, first[-1].id), 3)
    assert [task.id for task in rest] == ["a3", "a4"]
    assert [task.id for task in await store.page(None, "S", None, 10)] == ["s0"]
    assert await store.page(None, "other", None, 10) == []


async def test_a_store_forgets_expired_tasks(store: TaskStore) -> None:
    await store.create(TaskRecord("old", "t", MODERN, ttl_ms=1, created=time.time() - 1))
    await store.create(TaskRecord("forever", "t", MODERN, ttl_ms=None))
    await store.create(TaskRecord("gone", "t", MODERN, ttl_ms=1, created=time.time() - 1))
    assert await store.get("old") is None
    assert [task.id for task in await store.page(None, None, None, 10)] == ["forever"]
    await store.purge()
    assert await store.get("gone") is None and await store.get("forever") is not None


def test_the_sqlite_store_writes_ahead(tmp_path: Path) -> None:
    SQLiteTaskStore(tmp_path / "tasks.db")
    mode = sqlite3.connect(tmp_path / "tasks.db").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def dead_runner() -> str:
    """The runner name of a process that has ended."""
    code = "from toolwire.tasks.model import RUNNER; print(RUNNER)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


async def test_a_task_whose_process_died_reads_as_interrupted(tmp_path: Path) -> None:
    database = tmp_path / "tasks.db"
    store = SQLiteTaskStore(database)
    await store.create(TaskRecord("left-behind", "sleep", MODERN, runner=dead_runner()))
    await store.create(TaskRecord("elsewhere", "sleep", MODERN, runner="another-host/1/1"))
    await store.close()
    server = fresh_server(JOBS)
    server.use_task_store(database)
    peer = await open_peer(server, MODERN, {"extensions": {"io.modelcontextprotocol/tasks": {}}})
    task = (await peer.request("tasks/get", {"taskId": "left-behind"}))["result"]
    assert task["status"] == "failed" and task["statusMessage"] == INTERRUPTED
    assert task["error"]["code"] == -32603 and "interrupted" in task["error"]["message"]
    # a task of another host's process may still be running there: it is left as it is
    assert (await peer.request("tasks/get", {"taskId": "elsewhere"}))["result"]["status"] == "working"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("era", ERAS)
async def test_tasks_outlive_a_server_killed_with_sigkill(era: str, tmp_path: Path) -> None:
    database = str(tmp_path / "tasks.db")
    with toolwire_http(JOBS, "--tasks", database) as (url, process):
        async with Client(url, protocol=era) as client:
            finished = await client.start_task("sleep", {"seconds": 0})
            assert (await finished.result()).text == "slept 0 s"
            running = await client.start_task("sleep", {"seconds": 60})
            await asyncio.sleep(0.2)
            assert (await running.refresh()).status == "working"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
    with toolwire_http(JOBS, "--tasks", database) as (url, _):
        async with Client(url, protocol=era) as client:
            assert finished.id is not None and running.id is not None
            done = client.task(finished.id)
            assert (await done.refresh()).status == "completed"
            assert (await done.result()).text == "slept 0 s"
            cut = client.task(running.id)
            info = await cut.refresh()
            assert info.status == "failed" and info.message == INTERRUPTED
            with pytest.raises(ServerError, match="interrupted"):
                await cut.result()


@pytest.fixture
async def issuer() -> AsyncIterator[TokenIssuer]:
    async with TokenIssuer() as running:
        yield running


@pytest.mark.parametrize("era", ERAS)
async def test_one_caller_cannot_read_or_cancel_anothers_task(era: str, issuer: TokenIssuer) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    auth = ProtectedResource.for_issuer(issuer.url, url)
    alice = {"Authorization": f"Bearer {issuer.token(url, subject='alice')}"}
    mallory = {"Authorization": f"Bearer {issuer.token(url, subject='mallory')}"}
    async with InProcess(fresh_server(JOBS).http_app(auth=auth), listener=listener):
        async with Client(url, protocol=era, headers=alice) as client:
            handle = await client.start_task("sleep", {"seconds": 30})
        assert handle.id is not None
        async with Client(url, protocol=era, headers=mallory) as intruder:
            stolen = intruder.task(handle.id)
            for attempt in (stolen.refresh, stolen.cancel, stolen.result):
                with pytest.raises(ServerError, match="Task not found") as refused:
                    await attempt()
                assert refused.value.code == -32602
            if era != MODERN:
                assert await intruder.list_tasks() == []
        async with Client(url, protocol=era, headers=alice) as owner:  # a new session, the same caller
            mine = owner.task(handle.id)
            assert (await mine.refresh()).status == "working"
            if era != MODERN:
                assert [info.id for info in await owner.list_tasks()] == [handle.id]
            await mine.cancel()
            assert (await mine.refresh()).status == "cancelled"


async def test_replicas_sharing_redis_serve_each_others_tasks(redis_url: str) -> None:
    with (
        toolwire_http(JOBS, "--tasks", redis_url) as (first, one),
        toolwire_http(JOBS, "--tasks", redis_url) as (
            second,
            _,
        ),
    ):
        async with Client(first, protocol=MODERN) as a, Client(second, protocol=MODERN) as b:
            quick = await a.start_task("sleep", {"seconds": 0})
            assert quick.id is not None
            assert (await b.task(quick.id).result()).text == "slept 0 s"  # polled on the other replica
            slow = await a.start_task("sleep", {"seconds": 30})
            assert slow.id is not None
            assert (await b.task(slow.id).refresh()).status == "working"  # its runner is alive
            await b.task(slow.id).cancel()
            assert (await slow.refresh()).status == "cancelled"
            dying = await a.start_task("sleep", {"seconds": 30})
            assert dying.id is not None
        os.kill(one.pid, signal.SIGKILL)
        one.wait(10)
        async with Client(second, protocol=MODERN) as b:
            info = await b.task(dying.id).refresh()
        assert info.status == "failed" and info.message == INTERRUPTED


async def test_a_server_that_stops_stores_its_running_tasks_as_interrupted(tmp_path: Path) -> None:
    database = tmp_path / "tasks.db"
    server = fresh_server(JOBS)
    server.use_task_store(database)
    peer = await open_peer(server, MODERN, {"extensions": {"io.modelcontextprotocol/tasks": {}}})
    task_id = (await peer.call("sleep", {"seconds": 30}))["result"]["taskId"]
    await server.close_tasks()  # what stdio's end and the HTTP app's shutdown do
    later = fresh_server(JOBS)
    later.use_task_store(database)
    peer = await open_peer(later, MODERN, {"extensions": {"io.modelcontextprotocol/tasks": {}}})
    task = (await peer.request("tasks/get", {"taskId": task_id}))["result"]
    assert task["status"] == "failed" and task["statusMessage"] == INTERRUPTED


class BrokenStore(MemoryTaskStore):
    async def create(self, task: TaskRecord) -> None:
        raise OSError("disk full")


async def test_a_store_that_fails_is_an_internal_error_and_the_server_goes_on() -> None:
    server = fresh_server(JOBS)
    server.use_task_store(BrokenStore())
    peer = await open_peer(server, MODERN, {"extensions": {"io.modelcontextprotocol/tasks": {}}})
    error = (await peer.call("sleep", {"seconds": 0}))["error"]
    assert error["code"] == -32603 and "the task store failed (OSError)" in error["message"]
    assert (await peer.call("quick", {"x": 2}))["result"]["structuredContent"] == 4
