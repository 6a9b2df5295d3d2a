"""Benchmark tasks: create a task of an instant tool and poll it to its end, one after the
other, over real stdio pipes, with the tasks in memory and in SQLite; beside it, the same
tool called in its request (the floor a task's bookkeeping is measured against).

    python benchmarks/tasks_run.py [--quick] [--docs | --no-docs]

``benchmarks/tasks_server.py`` is served twice by ``python -m toolwire run``: tasks in memory,
and in a SQLite file (WAL). For each, per second, one at a time:

- *in its request*: ``tools/call`` of ``echo`` without a task (2025-11-25);
- *2025-11-25 task*: ``tools/call`` with ``task``, then ``tasks/result`` (which answers once
  the task has ended);
- *2026-07-28 task*: ``tools/call`` declaring the tasks extension, then ``tasks/get`` until it
  reads ``completed`` (polled at once: the benchmark ignores the suggested interval).

Rounds alternate; each figure is the median of its rounds.
"""

from __future__ import annotations

import datetime
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as stdio

START_MARK = "<!-- tasks-results:start -->"
END_MARK = "<!-- tasks-results:end -->"
SERVER = [sys.executable, "-m", "toolwire", "run", "benchmarks/tasks_server.py"]
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
}


def _request(peer: stdio.Peer, method: str, params: dict[str, Any]) -> Any:
    id = peer.next_id
    peer.next_id += 1
    line = orjson.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params}) + b"\n"
    return peer.request(line, id)


def inline(peer: stdio.Peer, seconds: float) -> float:
    """The same call in its request, sent and read the same way as the tasks' requests."""
    done = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        result = _request(peer, "tools/call", {"name": "echo", "arguments": {"text": "hello"}})
        if result["content"][0]["text"] != "hello":
            raise stdio.BenchError(f"unexpected result {result!r}")
        done += 1
    return done / (time.perf_counter() - start)


def legacy_tasks(peer: stdio.Peer, seconds: float) -> float:
    done = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        created = _request(peer, "tools/call", {"name": "echo", "arguments": {"text": "hello"}, "task": {}})
        result = _request(peer, "tasks/result", {"taskId": created["task"]["taskId"]})
        if result["content"][0]["text"] != "hello":
            raise stdio.BenchError(f"unexpected task result {result!r}")
        done += 1
    return done / (time.perf_counter() - start)


def modern_tasks(peer: stdio.Peer, seconds: float) -> float:
    done = 0
    polls = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        call = {"name": "echo", "arguments": {"text": "hello"}, "_meta": MODERN_META}
        created = _request(peer, "tools/call", call)
        if created.get("resultType") != "task":
            raise stdio.BenchError(f"no task was created: {created!r}")
        while True:
            polls += 1
            task = _request(peer, "tasks/get", {"taskId": created["taskId"], "_meta": MODERN_META})
            if task["status"] == "completed":
                break
        if task["result"]["content"][0]["text"] != "hello":
            raise stdio.BenchError(f"unexpected task result {task!r}")
        done += 1
    return done / (time.perf_counter() - start)


KINDS = {"inline": inline, "legacy": legacy_tasks, "modern": modern_tasks}


def measure(rounds: int, seconds: float) -> dict[str, list[float]]:
    database = Path(tempfile.mkdtemp(prefix="tasks-bench-")) / "tasks.db"
    peers = {
        "memory": stdio.Peer("memory", SERVER),
        "sqlite": stdio.Peer("sqlite", SERVER, env={"BENCH_TASKS_DB": str(database)}),
    }
    samples: dict[str, list[float]] = {f"{store} {kind}": [] for store in peers for kind in KINDS}
    try:
        for peer in peers.values():
            peer.handshake()
            for run in KINDS.values():
                run(peer, 0.2)  # warm-up
        for _ in range(rounds):
            for store, peer in peers.items():
                for kind, run in KINDS.items():
                    samples[f"{store} {kind}"].append(run(peer, seconds))
    finally:
        for peer in peers.values():
            peer.close()
    return samples


def render(samples: dict[str, list[float]], mode: str, rounds: int, seconds: float) -> str:
    text = (
        f"Run of {datetime.date.today().isoformat()} ({mode}: {rounds} rounds of {seconds:g} s), "
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores.\n\n"
        "| one at a time, over stdio | tasks in memory | µs each | tasks in SQLite | µs each |\n"
        "|---|---|---|---|---|\n"
    )
    labels = {
        "inline": "`echo` in its request (the floor)",
        "legacy": "2025-11-25 task: `tools/call` + `tasks/result`",
        "modern": "2026-07-28 task: `tools/call` + `tasks/get`",
    }
    for kind, label in labels.items():
        memory = statistics.median(samples[f"memory {kind}"])
        sqlite = statistics.median(samples[f"sqlite {kind}"])
        text += f"| {label} | {memory:,.0f}/s | {1e6 / memory:.0f} | {sqlite:,.0f}/s | {1e6 / sqlite:.0f} |\n"
    return text


def main(argv: list[str] | None = None) -> int:
    parser = stdio.options(__doc__, "about 10 s")
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full"
    rounds, seconds = (2, 0.5) if args.quick else (7, 1.0)
    text = render(measure(rounds, seconds), mode, rounds, seconds)
    stdio.publish(text, None, None, stdio.wants_docs(args), (START_MARK, END_MARK), "tasks results")
    return 0


if __name__ == "__main__":
    sys.exit(main())
