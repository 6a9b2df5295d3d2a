"""Benchmark tasks on workers against tasks run in the replica, side by side in one run, on
a real ``redis-server`` this starts on 127.0.0.1.

    python benchmarks/workers_run.py [--tasks N] [--rounds N]

``benchmarks/tasks_server.py`` (an ``echo`` tool that may run as a task) is served over HTTP
by ``python -m toolwire run --redis URL`` three ways: tasks run in the replica; and in queue
mode (``--queue URL``) with 1 and with 2 ``toolwire worker`` processes. For each:

- *latency*: one 2026-07-28 task at a time, from sending ``tools/call`` to reading
  ``completed`` in ``tasks/get`` (polled at once, again and again), median of ``--rounds``;
- *throughput*: ``--tasks`` tasks started by 16 callers at once, each polled to its end;
  tasks a second from the first call to the last ``completed``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.queue_engines import redis_server  # noqa: E402

from toolwire.client import Client  # noqa: E402

SERVER = "benchmarks/tasks_server.py"
CALLERS = 16


@contextlib.contextmanager
def processes(commands: list[list[str]]) -> Iterator[None]:
    started = [subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL) for command in commands]
    try:
        yield
    finally:
        for process in started:
            process.terminate()
        for process in started:
            process.wait(30)


async def wait_for_server(url: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            async with Client(url, protocol="2026-07-28"):
                return
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


async def one_task(client: Client) -> None:
    handle = await client.start_task("echo", {"text": "hi"})
    while (await handle.refresh()).status != "completed":
        pass


async def measure(url: str, tasks: int, rounds: int) -> tuple[float, float]:
    async with Client(url, protocol="2026-07-28") as client:
        await one_task(client)  # warm
        lags = []
        for _ in range(rounds):
            started = time.perf_counter()
            await one_task(client)
            lags.append(time.perf_counter() - started)
        left = iter(range(tasks))

        async def caller() -> None:
            for _ in left:
                await one_task(client)

        started = time.perf_counter()
        await asyncio.gather(*(caller() for _ in range(CALLERS)))
        return statistics.median(lags) * 1000, tasks / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=100)
    options = parser.parse_args()
    server, redis = redis_server()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    run = [sys.executable, "-m", "toolwire", "run", SERVER, "--http", str(port), "--redis", redis]
    worker = [sys.executable, "-m", "toolwire", "worker", SERVER, "--redis", redis, "--queue", redis]
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        print(f"{'tasks run':24} {'latency p50 ms':>15} {'tasks/s':>8}")
        for label, commands in (
            ("in the replica", [run]),
            ("on 1 worker", [[*run, "--queue", redis], worker]),
            ("on 2 workers", [[*run, "--queue", redis], worker, worker]),
        ):
            with processes(commands):
                asyncio.run(wait_for_server(url))
                latency, throughput = asyncio.run(measure(url, options.tasks, options.rounds))
            print(f"{label:24} {latency:>15.2f} {throughput:>8.0f}", flush=True)
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
