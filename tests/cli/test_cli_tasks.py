"""``toolwire call --task``, ``toolwire tasks`` and ``toolwire task``, run as real processes
against ``tests/servers/jobs.py`` served over HTTP (tasks kept in SQLite)."""

from __future__ import annotations

import json
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.clirun import finish, start, toolwire
from tests.support.httpserve import SERVERS, toolwire_http

JOBS = str(SERVERS / "jobs.py")


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    with toolwire_http(JOBS, "--tasks", str(tmp_path / "tasks.db")) as (address, _):
        yield address


def started_id(stderr: str) -> str:
    found = re.search(r"task (\S+) started", stderr)
    assert found is not None, stderr
    return found.group(1)


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_call_as_a_task_says_its_id_and_prints_the_result(url: str, era: str) -> None:
    done = toolwire("call", url, "sleep", "seconds=0.2", "--task", "--protocol", era)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "slept 0.2 s\n"
    task_id = started_id(done.stderr)
    assert f"`toolwire task {url} {task_id}` shows it" in done.stderr
    shown = toolwire("task", url, task_id, "--protocol", era)
    assert shown.returncode == 0 and shown.stdout == "slept 0.2 s\n"
    assert "completed" in shown.stderr


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_task_on_a_tool_that_runs_no_task_prints_its_result_in_both_eras(url: str, era: str) -> None:
    done = toolwire("call", url, "quick", "x=21", "--task", "--protocol", era)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "42\n"


def test_a_tool_that_must_be_a_task_is_called_as_one_without_asking(url: str) -> None:
    done = toolwire("call", url, "build", "target=docs")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"target": "docs", "ok": True}


def test_an_interrupted_call_leaves_its_task_running_and_it_can_be_waited_for(url: str) -> None:
    process = start("call", url, "sleep", "seconds=1.5", "--task")
    deadline = time.monotonic() + 20
    assert process.stderr is not None
    line = process.stderr.readline()
    while "started" not in line and time.monotonic() < deadline:
        line = process.stderr.readline()
    task_id = started_id(line)
    process.send_signal(signal.SIGINT)
    interrupted = finish(process)
    assert interrupted.returncode == 130
    assert f"task {task_id} goes on on the server" in interrupted.stderr
    waited = toolwire("task", url, task_id, "--wait")
    assert waited.returncode == 0, waited.stderr
    assert waited.stdout == "slept 1.5 s\n"


def test_a_task_is_shown_cancelled_and_refused_when_unknown(url: str) -> None:
    started = start("call", url, "sleep", "seconds=30", "--task")
    assert started.stderr is not None
    task_id = started_id(started.stderr.readline())
    working = toolwire("task", url, task_id, "--json")
    assert working.returncode == 0 and json.loads(working.stdout)["status"] == "working"
    cancelled = toolwire("task", url, task_id, "--cancel")
    assert cancelled.returncode == 0 and "cancelled: The task was cancelled by request." in cancelled.stderr
    assert finish(started).returncode == 1  # the waiting call learns its task was cancelled
    unknown = toolwire("task", url, "no-such-task")
    assert unknown.returncode == 1
    assert unknown.stderr.startswith("toolwire: no task 'no-such-task' here: Failed to retrieve task: Task not found")


def test_a_failed_task_fails_the_command(url: str) -> None:
    done = toolwire("call", url, "protocol_failure", "--task")
    assert done.returncode == 1
    assert "the backend is down" in done.stderr


def test_tasks_lists_what_a_2025_11_25_connection_sees(url: str) -> None:
    listed = toolwire("tasks", url)
    assert listed.returncode == 0, listed.stderr
    assert "jobs 0.1.0: no tasks (protocol 2025-11-25)" in listed.stdout
    modern = toolwire("tasks", url, "--protocol", "2026-07-28")
    assert modern.returncode == 1 and "2026-07-28 has no list of tasks" in modern.stderr
