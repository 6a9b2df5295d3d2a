"""Tasks on workers: replicas in queue mode (``toolwire run --redis URL --queue URL``) queue
the calls that run as tasks, and ``toolwire worker`` processes run them, all real processes
on a real redis-server. What the semantics promise: a plain call runs in the replica; a
task runs once in a worker and is polled through any replica; cancellation reaches the
running tool; a worker killed with SIGKILL has its task run again by another worker (or
failed, for a tool declared ``idempotent=False``); a full queue refuses the call; SIGTERM
lets running tasks finish or hands them back; a task that ended is never run again; a
worker's 2025-11-25 progress and log notifications reach the caller through the replica it
polls, and the tool and the audit trail in the worker see the caller."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import MODERN
from tests.support.httpserve import ROOT, SERVERS, free_port, fresh_server, toolwire_http
from tests.support.redisserve import redis_server
from toolwire.client import Client, ServerError
from toolwire.tasks.queue import Job

QUEUED = str(SERVERS / "queued.py")
ERAS = ["2025-11-25", MODERN]


@pytest.fixture
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the tools note their starts and ends in (the processes started inherit it)."""
    path = tmp_path / "notes.log"
    path.touch()
    monkeypatch.setenv("QUEUED_LOG", str(path))
    return path


@contextlib.contextmanager
def worker(
    redis: str, *options: str, file: str = QUEUED, prefix: tuple[str, ...] = ()
) -> Iterator[subprocess.Popen[bytes]]:
    """``toolwire worker`` on ``file`` (its command after ``prefix``), until the block ends
    (killed if still running)."""
    command = [*prefix, sys.executable, "-m", "toolwire", "worker", file, "--redis", redis, "--queue", redis, *options]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(10)
        assert process.stderr is not None
        process.stderr.close()


def replica(
    redis: str, *options: str, port: int | None = None
) -> contextlib.AbstractContextManager[tuple[str, subprocess.Popen[bytes]]]:
    return toolwire_http(QUEUED, "--redis", redis, "--queue", redis, *options, port=port)


def notes(log: Path) -> list[tuple[str, str, int]]:
    """(what, task id, process id) for each line the tools wrote."""
    return [(what, task, int(pid)) for what, task, pid in (line.split() for line in log.read_text().splitlines())]


async def wait_for_note(log: Path, what: str, task_id: str | None, timeout: float = 60.0) -> int:
    """The process id of the first ``what`` note of ``task_id``, once it is written."""
    deadline = time.monotonic() + timeout
    while True:
        for seen, task, pid in notes(log):
            if seen == what and task == task_id:
                return pid
        assert time.monotonic() < deadline, f"no {what!r} of task {task_id} was noted"
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("era", ERAS)
async def test_a_replica_queues_task_calls_and_a_worker_runs_them(era: str, redis_url: str, log: Path) -> None:
    with (
        replica(redis_url) as (first, first_process),
        replica(redis_url) as (second, _),
        worker(redis_url) as working,
    ):
        async with Client(first, protocol=era) as a, Client(second, protocol=era) as b:
            assert (await a.call_tool("plain")).text == str(first_process.pid)  # not a task: here
            handle = await a.start_task("slow", {"seconds": 0.3})
            assert handle.id is not None
            polled = b.task(handle.id)  # polled through the other replica
            result = await polled.result()
            assert result.text == f"slept in {working.pid}"
            assert (await polled.refresh()).status == "completed"
    assert [(what, pid) for what, _, pid in notes(log)] == [("start", working.pid), ("end", working.pid)]


@pytest.mark.parametrize("era", ERAS)
async def test_progress_and_questions_from_a_worker_reach_the_caller_through_either_replica(
    era: str, redis_url: str, log: Path
) -> None:
    async def answer_name(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada"}}

    with replica(redis_url) as (first, _), replica(redis_url) as (second, _), worker(redis_url):
        async with (
            Client(first, protocol=era, elicitation=answer_name) as a,
            Client(second, protocol=era, elicitation=answer_name) as b,
        ):
            slow = await a.start_task("slow", {"seconds": 30})
            assert slow.id is not None
            await wait_for_note(log, "start", slow.id)
            deadline = time.monotonic() + 30
            while "step" not in ((await b.task(slow.id).refresh()).message or ""):
                assert time.monotonic() < deadline, "the worker's progress never reached the other replica"
                await asyncio.sleep(0.02)
            await b.task(slow.id).cancel()
            asked = await a.start_task("ask_name")  # asked through one replica, answered through the other
            assert asked.id is not None
            assert (await b.task(asked.id).result()).text == "Hello, Ada"


@pytest.mark.parametrize("era", ERAS)
async def test_cancelling_a_task_cancels_the_tool_running_in_the_worker(era: str, redis_url: str, log: Path) -> None:
    with replica(redis_url) as (url, _), worker(redis_url) as working:
        async with Client(url, protocol=era) as client:
            handle = await client.start_task("slow", {"seconds": 60})
            assert handle.id is not None
            assert await wait_for_note(log, "start", handle.id) == working.pid
            await handle.cancel()
            assert await wait_for_note(log, "cancelled", handle.id) == working.pid
            assert (await handle.refresh()).status == "cancelled"
            again = await client.start_task("slow", {"seconds": 0})  # the worker goes on
            assert (await again.result()).text == f"slept in {working.pid}"


async def test_a_task_whose_worker_is_killed_runs_again_on_another_worker(redis_url: str, log: Path) -> None:
    with replica(redis_url) as (url, _), worker(redis_url, "--lease", "1") as one:
        async with Client(url, protocol=MODERN) as client:
            handle = await client.start_task("slow", {"seconds": 2})
            assert handle.id is not None
            assert await wait_for_note(log, "start", handle.id) == one.pid
            os.kill(one.pid, signal.SIGKILL)
            one.wait(10)
            with worker(redis_url, "--lease", "1") as other:
                assert (await handle.result()).text == f"slept in {other.pid}"
    assert [(what, pid) for what, _, pid in notes(log)] == [
        ("start", one.pid),
        ("start", other.pid),
        ("end", other.pid),
    ]


async def test_a_tool_declared_not_idempotent_fails_rather_than_run_twice(redis_url: str, log: Path) -> None:
    with replica(redis_url) as (url, _), worker(redis_url, "--lease", "1") as one:
        async with Client(url, protocol=MODERN) as client:
            handle = await client.start_task("charge", {"seconds": 30})
            assert handle.id is not None
            await wait_for_note(log, "start", handle.id)
            os.kill(one.pid, signal.SIGKILL)
            one.wait(10)
            with (
                worker(redis_url, "--lease", "1"),
                pytest.raises(ServerError, match="idempotent=False, so it is not run again"),
            ):
                await handle.result()
            info = await handle.refresh()
    assert info.status == "failed" and "stopped before it finished" in (info.message or "")
    assert [what for what, _, _ in notes(log)] == ["start"]


async def test_a_full_queue_refuses_the_call_and_the_replica_serves_on(redis_url: str, log: Path) -> None:
    with replica(redis_url, "--max-queued", "1") as (url, _):  # no worker: jobs stay queued
        async with Client(url, protocol=MODERN) as client:
            queued = await client.start_task("slow", {"seconds": 0})
            with pytest.raises(ServerError, match="the task queue is full") as refused:
                await client.start_task("slow", {"seconds": 0})
            assert refused.value.code == -32603
            assert (await client.call_tool("plain")).text.isdigit()  # the replica serves on
            with worker(redis_url) as working:
                assert (await queued.result()).text == f"slept in {working.pid}"


async def test_sigterm_lets_a_running_task_finish(redis_url: str, log: Path) -> None:
    with replica(redis_url) as (url, _), worker(redis_url, "--grace", "60") as working:
        async with Client(url, protocol=MODERN) as client:
            handle = await client.start_task("slow", {"seconds": 1})
            assert handle.id is not None
            await wait_for_note(log, "start", handle.id)
            working.send_signal(signal.SIGTERM)
            assert working.wait(60) == 0
            assert (await handle.result()).text == f"slept in {working.pid}"


async def test_sigterm_hands_back_what_does_not_finish_in_the_grace_period(redis_url: str, log: Path) -> None:
    with replica(redis_url) as (url, _), worker(redis_url, "--grace", "0", "--lease", "1") as one:
        async with Client(url, protocol=MODERN) as client:
            handle = await client.start_task("slow", {"seconds": 2})
            assert handle.id is not None
            await wait_for_note(log, "start", handle.id)
            one.send_signal(signal.SIGTERM)
            assert one.wait(60) == 0
            assert (await handle.refresh()).status == "working"  # handed back, not failed
            with worker(redis_url, "--lease", "1") as other:
                assert (await handle.result()).text == f"slept in {other.pid}"
    assert [(what, pid) for what, _, pid in notes(log)] == [
        ("start", one.pid),
        ("cancelled", one.pid),
        ("start", other.pid),
        ("end", other.pid),
    ]


async def test_a_task_that_ended_is_never_run_again(redis_url: str, log: Path) -> None:
    """At-least-once delivery: a job delivered again after its task ended (its worker died
    between storing the result and acknowledging it) is dropped by the next worker."""
    from toolwire.tasks.worker import TaskWorker

    with replica(redis_url) as (url, _), worker(redis_url) as working:
        async with Client(url, protocol=MODERN) as client:
            handle = await client.start_task("slow", {"seconds": 0})
            assert (await handle.result()).text == f"slept in {working.pid}"
    assert handle.id is not None
    server = fresh_server(QUEUED)
    server.use_redis(redis_url)
    server.use_queue(redis_url)
    again = TaskWorker(server, server.tasks.queue)  # type: ignore[arg-type]
    again._session = server.open_session(lambda data: None)
    await again._run(Job(handle.id, "slow", {"seconds": 0}, MODERN))  # the same job, delivered again
    assert [what for what, _, _ in notes(log)] == ["start", "end"]
    record = await server.tasks.store.get(handle.id)
    assert record is not None and record.status == "completed"
    await server.tasks.store.close()
    await server.tasks.queue.close()  # type: ignore[union-attr]


async def test_two_replicas_behind_haproxy_and_two_workers_run_200_tasks(redis_url: str, log: Path) -> None:
    from tests.project.test_scaling import haproxy

    ports = [free_port(), free_port()]
    with (
        replica(redis_url, "--allow-host", "127.0.0.1", port=ports[0]) as (_, first),
        replica(redis_url, "--allow-host", "127.0.0.1", port=ports[1]) as (direct, _),
        haproxy([ports[0], ports[1], ports[1]]) as balanced,
        worker(redis_url) as one,
        worker(redis_url) as two,
    ):
        async with Client(balanced, protocol=MODERN) as starter, Client(direct, protocol=MODERN) as poller:
            handles, results = [], []
            for _ in range(10):  # 20 at once: a client's connections to one replica are capped
                handles += await asyncio.gather(*(starter.start_task("slow", {"seconds": 0}) for _ in range(20)))
            for start in range(0, 200, 20):
                batch = handles[start : start + 20]
                results += await asyncio.gather(*(poller.task(handle.id).result() for handle in batch if handle.id))
            assert len(results) == 200
            assert {result.text for result in results} <= {f"slept in {one.pid}", f"slept in {two.pid}"}
            waiting = await starter.start_task("slow", {"seconds": 1})
            assert waiting.id is not None
            await wait_for_note(log, "start", waiting.id)
            os.kill(first.pid, signal.SIGKILL)  # a replica dies while the client waits through the balancer
            first.wait(10)
            assert (await waiting.result()).text in {f"slept in {one.pid}", f"slept in {two.pid}"}
    started = [task for what, task, _ in notes(log) if what == "start"]
    assert len(started) == len(set(started)) == 201  # each ran once


async def test_the_tasks_conformance_scenarios_pass_against_a_replica_in_queue_mode(
    redis_url: str, tmp_path: Path
) -> None:
    from tests.conformance.run import SERVER_EXTENSIONS, results, suite, verdict
    from tests.support.httpserve import free_port

    server = str(ROOT / "examples" / "conformance_server.py")
    port = free_port()
    scenarios = [name for name in SERVER_EXTENSIONS if name.startswith("tasks-")]
    assert len(scenarios) == 9
    failed = {}
    with (
        toolwire_http(server, "--redis", redis_url, "--queue", redis_url, port=port),
        worker(redis_url, file=server) as working,
    ):
        for name in scenarios:
            output = tmp_path / name
            done = suite("server", "--url", f"http://localhost:{port}/mcp", "--scenario", name, output=output)
            checks = next(iter(results(output).values()), [])
            ok, detail = verdict(checks, strict=True)
            if not ok or not checks:
                failed[name] = detail if checks else f"the suite ran no check: {done.stderr[-300:]}"
    assert not failed, failed
    assert f"#{working.pid}" in " ".join(await runners(redis_url))  # the worker ran the tasks


async def runners(redis_url: str) -> list[str]:
    """The runner of every task in the store."""
    import orjson
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(redis_url)
    try:
        keys = [key async for key in client.scan_iter("toolwire:tasks:task:*")]
        return [orjson.loads(data)["runner"] for data in await client.mget(keys) if data is not None]
    finally:
        await client.aclose()


def queue_status(redis_url: str) -> Any:
    """What ``toolwire tasks --queue URL --json`` says."""
    import orjson

    command = [sys.executable, "-m", "toolwire", "tasks", "--queue", redis_url, "--json"]
    done = subprocess.run(command, capture_output=True, cwd=ROOT, timeout=60, check=True)
    return orjson.loads(done.stdout)


async def test_toolwire_tasks_shows_the_queue_depth_and_which_worker_runs_what(redis_url: str, log: Path) -> None:
    with replica(redis_url) as (url, _):
        async with Client(url, protocol=MODERN) as client:
            first = await client.start_task("slow", {"seconds": 60})
            await client.start_task("slow", {"seconds": 60})
            assert queue_status(redis_url) == {"waiting": 2, "running": {}}  # no worker yet
            with worker(redis_url, "--concurrency", "1") as working:
                assert first.id is not None
                running = await wait_for_note(log, "start", first.id)
                assert running == working.pid
                status = queue_status(redis_url)
                assert status["waiting"] == 1
                assert list(status["running"]) == [first.id]
                assert status["running"][first.id].endswith(f"#{working.pid}")


async def test_a_worker_writes_the_audit_trail_of_the_runs_it_makes(
    redis_url: str, log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import orjson

    monkeypatch.setenv("QUEUED_AUDIT", str(tmp_path / "audit.jsonl"))
    with replica(redis_url) as (url, _), worker(redis_url) as working:
        async with Client(url, protocol=MODERN) as client:
            handle = await client.start_task("slow", {"seconds": 0})
            assert (await handle.result()).text == f"slept in {working.pid}"
    records = [orjson.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    started = {record["id"] for record in records if record["phase"] == "start" and record["name"] == "slow"}
    outcomes = [record["outcome"] for record in records if record["phase"] == "end" and record["id"] in started]
    assert outcomes == ["ok", "ok"]  # queued by the replica, then run by the worker


async def test_one_trace_goes_from_the_call_to_the_worker(
    redis_url: str, log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import orjson

    monkeypatch.setenv("QUEUED_SPANS", str(tmp_path / "spans.jsonl"))
    with replica(redis_url) as (url, accepting), worker(redis_url) as working:
        async with Client(url, protocol=MODERN) as client:
            handle = await client.start_task("slow", {"seconds": 0})
            assert (await handle.result()).text == f"slept in {working.pid}"
            spans = tmp_path / "spans.jsonl"
            deadline = time.monotonic() + 30
            while len(spans.read_text().splitlines() if spans.exists() else []) < 3:  # ended spans are written
                assert time.monotonic() < deadline, "the spans were not written"
                await asyncio.sleep(0.02)
    recorded = [orjson.loads(line) for line in spans.read_text().splitlines()]
    called = next(span for span in recorded if span["pid"] == accepting.pid and span["kind"] == "SERVER")
    consumed = next(span for span in recorded if span["pid"] == working.pid and span["kind"] == "CONSUMER")
    ran = next(span for span in recorded if span["pid"] == working.pid and span["kind"] == "SERVER")
    assert called["name"] == consumed["name"] == ran["name"] == "tools/call slow"
    assert called["trace"] == consumed["trace"] == ran["trace"]  # one trace, across the queue
    assert consumed["parent"] == called["span"] and ran["parent"] == consumed["span"]


async def test_a_task_expires_with_its_ttl_and_an_expired_tasks_job_is_dropped(
    redis_url: str, log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QUEUED_TTL", "1")  # seconds
    with replica(redis_url) as (url, _):  # no worker yet: the job waits
        async with Client(url, protocol=MODERN) as client:
            handle = await client.start_task("slow", {"seconds": 0})
            assert handle.id is not None
            deadline = time.monotonic() + 30
            while True:  # until Redis drops the task, at its TTL
                try:
                    await handle.refresh()
                except ServerError as gone:
                    assert gone.code == -32602
                    break
                assert time.monotonic() < deadline, "the task outlived its TTL"
                await asyncio.sleep(0.05)
            assert queue_status(redis_url)["waiting"] == 1
            with worker(redis_url):
                while queue_status(redis_url) != {"waiting": 0, "running": {}}:
                    assert time.monotonic() < deadline + 30, "the worker never took the job"
                    await asyncio.sleep(0.05)
    assert notes(log) == []  # dropped, not run


async def test_a_worker_started_in_the_background_leaves_sigint_ignored_and_stops_on_sigterm(
    redis_url: str, log: Path
) -> None:
    from tests.project.test_backgrounded import SIGINT_IGNORED, signals

    with replica(redis_url) as (url, _), worker(redis_url, prefix=tuple(SIGINT_IGNORED)) as working:
        async with Client(url, protocol=MODERN) as client:
            handle = await client.start_task("slow", {"seconds": 0})
            assert (await handle.result()).text == f"slept in {working.pid}"  # serving: its handlers are set
        assert signals(working.pid, "SigIgn") & (1 << (signal.SIGINT - 1))
        working.send_signal(signal.SIGTERM)
        assert working.wait(60) == 0


async def test_2025_11_25_log_messages_and_progress_from_a_worker_reach_the_caller_through_the_replica_it_polls(
    redis_url: str, log: Path
) -> None:
    era = "2025-11-25"
    reports: list[tuple[float, float | None, str | None]] = []
    logged: list[dict[str, Any]] = []
    elsewhere: list[dict[str, Any]] = []
    on_get: list[tuple[float, float | None, str | None]] = []
    in_thread: list[tuple[float, float | None, str | None]] = []
    with replica(redis_url) as (first, _), replica(redis_url) as (second, _), worker(redis_url):
        async with (
            Client(first, protocol=era, log_level="info", on_log=logged.append) as a,
            Client(second, protocol=era, log_level="info", on_log=elsewhere.append) as b,
        ):
            handle = await a.start_task("chatty", {"steps": 3}, progress=lambda *report: reports.append(report))
            assert (await handle.result()).text == "chatted"
            other = await a.start_task("chatty", {"steps": 2})
            assert other.id is not None
            assert (await b.task(other.id).result()).text == "chatted"  # relayed by the other replica
            threaded = await a.start_task("chatty_in_thread", {"steps": 2}, progress=lambda *r: in_thread.append(r))
            assert (await threaded.result()).text == "chatted"
            polled = await a.start_task("chatty", {"steps": 2}, progress=lambda *report: on_get.append(report))
            deadline = time.monotonic() + 30
            while (await polled.refresh()).status != "completed":  # tasks/get alone relays them too
                assert time.monotonic() < deadline, "the polled task never completed"
                await asyncio.sleep(0.02)
    assert reports == [(1, 3, "step 1 of 3"), (2, 3, "step 2 of 3"), (3, 3, "step 3 of 3")]
    assert on_get == in_thread == [(1, 2, "step 1 of 2"), (2, 2, "step 2 of 2")]
    tasks = [message["_meta"]["io.modelcontextprotocol/related-task"]["taskId"] for message in logged]
    assert [message["data"] for message in logged] == ["line 1", "line 2", "line 3"] + ["line 1", "line 2"] * 2
    assert tasks == [handle.id] * 3 + [threaded.id] * 2 + [polled.id] * 2
    assert [message["data"] for message in elsewhere] == ["line 1", "line 2"]


async def test_2026_07_28_sends_no_log_messages_for_a_worker_task_as_for_one_in_process(
    redis_url: str, log: Path
) -> None:
    logged: list[dict[str, Any]] = []
    with replica(redis_url) as (url, _), worker(redis_url):
        async with Client(url, protocol=MODERN, log_level="info", on_log=logged.append) as client:
            handle = await client.start_task("chatty", {"steps": 2})
            assert (await handle.result()).text == "chatted"
            assert (await client.call_tool("chatty", {"steps": 1})).text == "chatted"  # not a task: logs
    assert [message["data"] for message in logged] == ["line 1"]  # the tasks extension has none for tasks


@pytest.mark.parametrize("era", ERAS)
async def test_the_tool_and_the_audit_trail_in_a_worker_see_the_caller(
    era: str, redis_url: str, log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import orjson

    from tests.support.tokenissuer import TokenIssuer

    monkeypatch.setenv("QUEUED_AUDIT", str(tmp_path / "audit.jsonl"))
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    async with TokenIssuer() as issuer:
        alice = {"Authorization": f"Bearer {issuer.token(url, subject='alice', scope='tools reports')}"}
        with replica(redis_url, "--issuer", issuer.url, "--audience", url, port=port), worker(redis_url):
            async with Client(url, protocol=era, headers=alice) as client:
                handle = await client.start_task("whoami")
                assert (await handle.result()).text == "alice reports tools"
    records = [orjson.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    ran = [record for record in records if record["phase"] == "start" and record.get("name") == "whoami"]
    assert [record["caller"] for record in ran] == ["alice", "alice"]  # queued by the replica, run by the worker
