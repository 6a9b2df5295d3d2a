"""Task stores and what outlives a process: the memory and SQLite stores behind one interface,
a task whose process died reading as interrupted, a server killed with SIGKILL and started
again on the same SQLite file, and tasks bound to the caller that made them (over HTTP with
real tokens)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.helpers import MODERN, open_peer
from tests.support.httpserve import SERVERS, InProcess, fresh_server, modern_call, modern_headers, toolwire_http
from tests.support.redisserve import redis_server
from tests.support.tokenissuer import TokenIssuer
from toolwire.auth import ProtectedResource
from toolwire.client import Client, ServerError
from toolwire.protocol.tokens import new_id
from toolwire.server.lifespan import LifespanFailed
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
    left_behind, elsewhere = new_id(), new_id()  # ids as the server makes them: others are never looked up
    await store.create(TaskRecord(left_behind, "sleep", MODERN, runner=dead_runner()))
    await store.create(TaskRecord(elsewhere, "sleep", MODERN, runner="another-host/1/1"))
    await store.close()
    server = fresh_server(JOBS)
    server.use_task_store(database)
    peer = await open_peer(server, MODERN, {"extensions": {"io.modelcontextprotocol/tasks": {}}})
    task = (await peer.request("tasks/get", {"taskId": left_behind}))["result"]
    assert task["status"] == "failed" and task["statusMessage"] == INTERRUPTED
    assert task["error"]["code"] == -32603 and "interrupted" in task["error"]["message"]
    # a task of another host's process may still be running there: it is left as it is
    assert (await peer.request("tasks/get", {"taskId": elsewhere}))["result"]["status"] == "working"


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


HOLD_EXCLUSIVE = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(60)
"""


@contextlib.contextmanager
def held_exclusive(database: Path) -> Iterator[None]:
    """Another process holding ``BEGIN EXCLUSIVE`` on ``database`` until the block ends."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD_EXCLUSIVE, str(database)], stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"locked\n"
        yield
    finally:
        holder.kill()
        holder.wait(10)
        if holder.stdout is not None:
            holder.stdout.close()


def tasks_call(name: str, arguments: dict[str, Any], id: int) -> dict[str, Any]:
    return modern_call(name, arguments, id=id, capabilities={"extensions": {"io.modelcontextprotocol/tasks": {}}})


async def test_a_file_locked_by_another_process_holds_up_only_task_operations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    database = tmp_path / "tasks.db"
    monkeypatch.setenv("TOOLWIRE_TASKS_DB", str(database))
    monkeypatch.setenv("JOBS_SQLITE_TIMEOUT", "3")
    with toolwire_http(JOBS) as (url, _):
        async with httpx.AsyncClient(timeout=30) as http:

            async def post(body: dict[str, Any]) -> tuple[dict[str, Any], float]:
                start = time.monotonic()
                response = await http.post(url, json=body, headers=modern_headers("tools/call", body["params"]["name"]))
                return response.json(), time.monotonic() - start

            with held_exclusive(database):
                task_call = asyncio.create_task(post(tasks_call("sleep", {"seconds": 0}, 1)))
                await asyncio.sleep(0.3)  # the task's write waits for the lock
                for number in range(3):
                    answer, took = await post(modern_call("quick", {"x": number}, id=10 + number))
                    assert answer["result"]["structuredContent"] == number * 2
                    assert took < 0.5, f"an unrelated tools/call took {took:.2f} s while the task store was locked"
                answer, took = await task_call
                assert answer["error"]["code"] == -32603 and 2.5 < took < 6
                assert "locked by another process for 3 s" in answer["error"]["message"]
                assert str(tmp_path) not in answer["error"]["message"]
            # the lock released, tasks go on
            answer, _ = await post(tasks_call("sleep", {"seconds": 0}, 2))
            assert answer["result"]["resultType"] == "task"


def garbage_file(path: Path) -> Path:
    path.write_bytes(b"this is not a database, it was overwritten by mistake\n" * 100)
    return path


def corrupted_database(path: Path) -> Path:
    """A real SQLite file whose pages past the header were overwritten."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE tasks (id TEXT PRIMARY KEY, data BLOB)")
    db.executemany("INSERT INTO tasks VALUES (?, ?)", [(str(n), b"x" * 500) for n in range(200)])
    db.commit()
    db.close()
    with open(path, "r+b") as file:
        file.seek(4096 + 100)
        file.write(os.urandom(8192))
    return path


@pytest.mark.parametrize("http", [False, True], ids=["stdio", "http"])
@pytest.mark.parametrize("damage", [garbage_file, corrupted_database], ids=["not-a-database", "corrupted"])
def test_a_damaged_file_is_refused_at_start_in_one_line(tmp_path: Path, damage: Any, http: bool) -> None:
    database = damage(tmp_path / "tasks.db")
    command = [sys.executable, "-m", "toolwire", "run", JOBS, "--tasks", str(database)]
    if http:
        command += ["--http", str(free_port())]
    ran = subprocess.run(command, input=b"", capture_output=True, timeout=30)
    lines = ran.stderr.decode().splitlines()
    assert ran.returncode == 1 and len(lines) == 1, ran.stderr.decode()
    assert lines[0].startswith(f"toolwire: cannot use {database} as the task store: the file is not an SQLite")


@pytest.fixture
def read_only_directory(tmp_path: Path) -> Iterator[Path]:
    """A directory holding a task database, mounted read-only (root ignores file modes)."""
    directory = tmp_path / "ro"
    directory.mkdir()
    sqlite3.connect(directory / "tasks.db").execute("CREATE TABLE t (x)").connection.commit()
    mounted = subprocess.run(["mount", "--bind", str(directory), str(directory)], capture_output=True)
    assert mounted.returncode == 0, (
        f"cannot bind-mount here (the tests run as root, as CI does): {mounted.stderr.decode().strip()}"
    )
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(directory)], check=True)
        yield directory
    finally:
        subprocess.run(["umount", str(directory)], check=True)


@pytest.mark.parametrize("http", [False, True], ids=["stdio", "http"])
def test_a_read_only_file_is_refused_at_start_in_one_line(read_only_directory: Path, http: bool) -> None:
    database = read_only_directory / "tasks.db"
    command = [sys.executable, "-m", "toolwire", "run", JOBS, "--tasks", str(database)]
    if http:
        command += ["--http", str(free_port())]
    ran = subprocess.run(command, input=b"", capture_output=True, timeout=30)
    lines = ran.stderr.decode().splitlines()
    assert ran.returncode == 1 and len(lines) == 1, ran.stderr.decode()
    assert lines[0].startswith(f"toolwire: cannot use {database} as the task store: the file cannot be written")


async def test_a_server_refuses_to_start_on_a_damaged_file(tmp_path: Path) -> None:
    server = fresh_server(JOBS)
    server.use_task_store(garbage_file(tmp_path / "tasks.db"))
    with pytest.raises(LifespanFailed, match="the file is not an SQLite database"):
        await server.start()


async def test_a_store_opens_at_once_on_a_file_another_process_holds_locked(tmp_path: Path) -> None:
    database = tmp_path / "tasks.db"
    await SQLiteTaskStore(database).close()
    with held_exclusive(database):
        started = time.monotonic()
        store = SQLiteTaskStore(database, timeout=3)
        assert time.monotonic() - started < 1
        await store.close()


async def test_operations_keep_their_order_and_the_store_its_sanity_when_a_waiter_gives_up(tmp_path: Path) -> None:
    database = tmp_path / "tasks.db"
    store = SQLiteTaskStore(database, timeout=5)
    await store.create(TaskRecord("before", "t", MODERN))

    def note(task: TaskRecord) -> bool:
        task.message = "noted"
        return True

    with held_exclusive(database):
        waiting = asyncio.ensure_future(store.create(TaskRecord("given-up", "t", MODERN)))
        await asyncio.sleep(0.2)
        waiting.cancel()  # its write still waits on the store's thread
        queued = asyncio.ensure_future(store.update("before", note))
        read = asyncio.ensure_future(store.get("before"))
        await asyncio.sleep(0.3)
        assert not queued.done() and not read.done()  # behind the write, never beside it
    updated, found = await queued, await read
    assert updated is not None and updated.message == "noted" and found is not None and found.message == "noted"
    assert await store.get("given-up") is not None  # written once the file was free
    await store.close()
