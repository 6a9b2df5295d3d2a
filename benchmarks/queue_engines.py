"""Benchmark the queue engines toolwire's workers could run on, on this machine, against a
real ``redis-server`` it starts on 127.0.0.1: Docket (``pydocket``), taskiq (with
``taskiq-redis``'s stream broker) and Celery (Redis broker).

    python benchmarks/queue_engines.py [--jobs N] [--engines docket,taskiq,celery]

For each engine, with 1 and then 2 worker processes (each running up to 10 jobs at once):

- *latency*: one job enqueued at a time on an idle queue; the time from just before the
  enqueue to the job's first line (both clocks are this host's), median and 95th percentile;
- *throughput*: ``--jobs`` short jobs (each writes one Redis list entry) enqueued by 16
  senders at once;
  jobs a second from the first enqueue to the last job's end.

An engine whose library is not installed is left out (and said so); ``pip install pydocket
taskiq-redis celery`` to have all three. Workers are this file run as
``queue_engines.py worker ENGINE URL``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

DONE = "bench:done"  # each job pushes "sent started" here
READY = "bench:ready"  # each worker pushes its pid here once it listens
CONCURRENCY = 10
SENDERS = 16  # enqueuers at once in the throughput run (a pool's connections are bounded)


# -- the engines: a job, a worker and an enqueuer each --------------------------------------


def docket_engine(url: str) -> tuple[Any, Any]:
    from docket import Docket

    async def job(sent: float) -> None:
        await _record(url, sent)

    return Docket(name="bench", url=url), job


async def docket_worker(url: str) -> None:
    from datetime import timedelta

    from docket import Worker

    docket, job = docket_engine(url)
    async with docket:
        docket.register(job)
        async with Worker(docket, concurrency=CONCURRENCY, minimum_check_interval=timedelta(milliseconds=10)) as worker:
            await _ready(url)
            await worker.run_forever()


async def docket_enqueue(url: str, sends: int, each: Any) -> None:
    docket, job = docket_engine(url)
    async with docket:
        docket.register(job)
        await each(lambda: docket.add(job)(time.time()), sends)


def taskiq_broker(url: str) -> tuple[Any, Any]:
    from taskiq_redis import RedisStreamBroker

    broker = RedisStreamBroker(url, queue_name="bench")

    @broker.task(task_name="job")
    async def job(sent: float) -> None:
        await _record(url, sent)

    return broker, job


async def taskiq_worker(url: str) -> None:
    from taskiq.api import run_receiver_task

    broker, _ = taskiq_broker(url)
    broker.is_worker_process = True
    await broker.startup()
    receiver = asyncio.ensure_future(run_receiver_task(broker, max_async_tasks=CONCURRENCY))
    await _ready(url)
    await receiver


async def taskiq_enqueue(url: str, sends: int, each: Any) -> None:
    broker, job = taskiq_broker(url)
    await broker.startup()
    try:
        await each(lambda: job.kiq(time.time()), sends)
    finally:
        await broker.shutdown()


def celery_app(url: str) -> tuple[Any, Any]:
    from celery import Celery

    app = Celery("bench", broker=url)
    app.conf.update(worker_hijack_root_logger=False, broker_connection_retry_on_startup=True, task_ignore_result=True)

    @app.task(name="job")
    def job(sent: float) -> None:
        import redis

        started = time.time()
        redis.Redis.from_url(url).rpush(DONE, f"{sent} {started} {time.time()}")

    return app, job


def celery_worker(url: str) -> None:
    import redis
    from celery.signals import worker_ready

    app, _ = celery_app(url)
    worker_ready.connect(lambda **_: redis.Redis.from_url(url).rpush(READY, os.getpid()), weak=False)
    app.worker_main(["worker", "--pool=threads", f"--concurrency={CONCURRENCY}", "--loglevel=WARNING"])


async def celery_enqueue(url: str, sends: int, each: Any) -> None:
    _, job = celery_app(url)

    async def send() -> None:
        job.delay(time.time())

    await each(send, sends)


ENGINES = {
    "docket": ("docket", docket_worker, docket_enqueue),
    "taskiq": ("taskiq_redis", taskiq_worker, taskiq_enqueue),
    "celery": ("celery", celery_worker, celery_enqueue),
}


async def _record(url: str, sent: float) -> None:
    import redis.asyncio as aioredis

    started = time.time()
    client = _CLIENTS.get(url)
    if client is None:
        client = _CLIENTS[url] = aioredis.Redis.from_url(url)
    await client.rpush(DONE, f"{sent} {started} {time.time()}")


_CLIENTS: dict[str, Any] = {}


async def _ready(url: str) -> None:
    import redis.asyncio as aioredis

    client = aioredis.Redis.from_url(url)
    await client.rpush(READY, os.getpid())
    await client.aclose()


# -- measuring -------------------------------------------------------------------------------


def measure(engine: str, url: str, workers: int, jobs: int, latency_jobs: int) -> dict[str, float]:
    import redis

    client = redis.Redis.from_url(url, socket_timeout=None)  # waits longer than the default 5 s
    client.flushall()
    processes = [
        subprocess.Popen([sys.executable, __file__, "worker", engine, url], stdin=subprocess.DEVNULL)
        for _ in range(workers)
    ]
    try:
        for _ in range(workers):
            assert client.blpop([READY], timeout=60), f"a {engine} worker did not start"
        _, _, enqueue = ENGINES[engine]

        client.delete(DONE)
        lags: list[float] = []

        async def timed(send: Any, sends: int) -> None:
            for _ in range(sends):
                await send()
                _, entry = client.blpop([DONE], timeout=30)
                sent, started, _ = (float(part) for part in entry.split())
                lags.append(started - sent)

        asyncio.run(enqueue(url, latency_jobs, timed))

        async def all_at_once(send: Any, sends: int) -> None:
            left = iter(range(sends))

            async def sender() -> None:
                for _ in left:
                    await send()

            await asyncio.gather(*(sender() for _ in range(SENDERS)))

        client.delete(DONE)
        first = time.time()
        asyncio.run(enqueue(url, jobs, all_at_once))
        while client.llen(DONE) < jobs:
            client.blpop([READY], timeout=0.05)  # nothing comes here: a short wait between looks
        ends = [float(entry.split()[2]) for entry in client.lrange(DONE, 0, -1)]
        lags.sort()
        return {
            "p50_ms": statistics.median(lags) * 1000,
            "p95_ms": lags[int(len(lags) * 0.95) - 1] * 1000,
            "jobs_s": jobs / (max(ends) - first),
        }
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def redis_server() -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    assert binary, "this benchmark needs redis-server"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return process, f"redis://127.0.0.1:{port}/0"
        assert time.monotonic() < deadline, "redis-server did not start"
        time.sleep(0.02)


def installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "worker":
        engine, url = sys.argv[2], sys.argv[3]
        run = ENGINES[engine][1]
        if asyncio.iscoroutinefunction(run):
            asyncio.run(run(url))
        else:
            run(url)
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2000, help="jobs of the throughput run (default 2000)")
    parser.add_argument("--latency-jobs", type=int, default=200, help="jobs timed one at a time (default 200)")
    parser.add_argument("--engines", default=",".join(ENGINES))
    options = parser.parse_args()
    server, url = redis_server()
    try:
        print(f"{'engine':8} {'workers':>7} {'start p50 ms':>13} {'start p95 ms':>13} {'jobs/s':>8}")
        for engine in options.engines.split(","):
            if not installed(ENGINES[engine][0]):
                print(f"{engine:8} (not installed: left out)")
                continue
            for workers in (1, 2):
                figures = measure(engine, url, workers, options.jobs, options.latency_jobs)
                print(
                    f"{engine:8} {workers:>7} {figures['p50_ms']:>13.2f} {figures['p95_ms']:>13.2f} "
                    f"{figures['jobs_s']:>8.0f}",
                    flush=True,
                )
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
