"""Benchmark what sharing state through Redis costs a call: the HTTP benchmark's server
without ``--redis`` (twice: the second shows the noise between two identical servers) and
with it (a real ``redis-server`` on 127.0.0.1), side by side in one run; then three replicas
with ``--redis`` behind haproxy (examples/deploy/haproxy.cfg) against one.

    python benchmarks/scaling_run.py [--quick] [--docs | --no-docs]

``http_load.py`` sends each server ``tools/call`` requests over 16 keep-alive connections:
2026-07-28 (stateless; a call that needs no shared state touches no Redis) and 2025-11-25
sessions (each request renews its session in Redis first). The server's CPU time per call
is the measure; the Redis server's own CPU is not counted. Targets: 2026-07-28 calls cost
nothing extra, legacy calls at most +150 µs.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import http_run
import run as stdio

START_MARK = "<!-- scaling-results:start -->"
END_MARK = "<!-- scaling-results:end -->"
DEPLOY = Path(__file__).resolve().parent.parent / "examples" / "deploy"
CASES = {"modern": "2026-07-28, JSON answers", "legacy_json": "2025-11-25 session, JSON answers"}
#: "again" is a second server like "off": how far two identical servers differ (the noise).
KINDS = {"off": "in this process", "again": "in this process, a second server", "redis": "shared through Redis"}


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise stdio.BenchError("this benchmark needs redis-server (apt-get install redis-server)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while socket.socket().connect_ex(("127.0.0.1", port)) != 0:
            if time.monotonic() > deadline:
                raise stdio.BenchError("redis-server did not start")
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(10)


def measure(rounds: int, seconds: float, warmup: float) -> dict[str, dict[str, list[dict[str, float]]]]:
    with redis_server() as redis:
        servers: dict[str, http_run.Server] = {}
        load: http_run.Load | None = None
        try:
            for kind in KINDS:
                servers[kind] = http_run.Server("toolwire", "toolwire", ("--redis", redis) if kind == "redis" else ())
            load = http_run.Load()
            for server in servers.values():
                server.wait_ready()
            for case in CASES:
                for server in servers.values():
                    load.run(server, case, warmup)
            samples: dict[str, dict[str, list[dict[str, float]]]] = {
                case: {kind: [] for kind in KINDS} for case in CASES
            }
            for number in range(rounds):
                for case in CASES:
                    for kind, server in servers.items():
                        samples[case][kind].append(load.run(server, case, seconds))
                stdio._log(f"  round {number + 1}/{rounds} done")
            return samples
        finally:
            if load is not None:
                load.close()
            for server in servers.values():
                server.stop()


class Balanced:
    """``haproxy`` (round robin) in front of three replicas with ``--redis``, looking to
    ``http_load.py`` like one server (the CPU it reports is haproxy's alone: not used). The
    configuration is the shipped one, examples/deploy/haproxy.cfg."""

    def __init__(self, redis: str) -> None:
        self.replicas = [http_run.Server("toolwire", "toolwire", ("--redis", redis)) for _ in range(3)]
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        addresses = {f"REPLICA_{n}": f"127.0.0.1:{replica.port}" for n, replica in enumerate(self.replicas)}
        environment = {**os.environ, "MCP_BIND": f"127.0.0.1:{self.port}", **addresses}
        binary = shutil.which("haproxy") or "/usr/sbin/haproxy"
        command = [binary, "-f", str(DEPLOY / "haproxy.cfg"), "-db"]
        self.process = subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.label = "three replicas behind haproxy"

    def wait_ready(self) -> None:
        for replica in self.replicas:
            replica.wait_ready()
        deadline = time.monotonic() + 10
        while socket.socket().connect_ex(("127.0.0.1", self.port)) != 0:
            if time.monotonic() > deadline:
                raise stdio.BenchError("haproxy did not start")
            time.sleep(0.05)

    def died(self, what: str) -> stdio.BenchError:
        return stdio.BenchError(f"{self.label}: {what}")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)
        for replica in self.replicas:
            replica.stop()


def measure_balanced(rounds: int, seconds: float, warmup: float) -> dict[str, list[float]]:
    """Calls per second (2026-07-28) of one replica, and of three behind haproxy."""
    with redis_server() as redis:
        one = http_run.Server("toolwire", "toolwire", ("--redis", redis))
        three = Balanced(redis)
        load = http_run.Load()
        try:
            one.wait_ready()
            three.wait_ready()
            rates: dict[str, list[float]] = {"one": [], "three": []}
            for target in (one, three):
                load.run(target, "modern", warmup)  # type: ignore[arg-type]
            for _ in range(rounds):
                for name, target in (("one", one), ("three", three)):
                    rates[name].append(load.run(target, "modern", seconds)["rate"])  # type: ignore[arg-type]
            return rates
        finally:
            load.close()
            one.stop()
            three.stop()


def render(samples: dict[str, dict[str, list[dict[str, float]]]], mode: str, rounds: int, seconds: float) -> str:
    text = (
        f"Run of {datetime.date.today().isoformat()} ({mode}: {rounds} rounds of {seconds:g} s, "
        f"{http_run.CONNECTIONS} connections), Python {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} cores.\n\n"
        "| case | state | calls/s | server CPU per call | added per call | target |\n"
        "|---|---|---|---|---|---|\n"
    )
    targets = {"modern": "+0 µs", "legacy_json": "<= +150 µs"}
    for case, case_label in CASES.items():
        plain = statistics.median(s["cpu_us"] for s in samples[case]["off"])
        for kind, label in KINDS.items():
            rate = statistics.median(s["rate"] for s in samples[case][kind])
            cpu = statistics.median(s["cpu_us"] for s in samples[case][kind])
            added = f"{cpu - plain:+.1f} µs" if kind != "off" else ""
            target = targets[case] if kind == "redis" else "(noise)" if kind == "again" else ""
            text += f"| {case_label} | {label} | {rate:,.0f} | {cpu:.1f} µs | {added} | {target} |\n"
    return text


def render_balanced(rates: dict[str, list[float]]) -> str:
    one, three = statistics.median(rates["one"]), statistics.median(rates["three"])
    return (
        "\n| 2026-07-28, 16 connections, all on this machine | calls/s |\n|---|---|\n"
        f"| one replica | {one:,.0f} |\n| three replicas behind haproxy | {three:,.0f} ({three / one:.2f}x) |\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = stdio.options(__doc__, "about 20 s")
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full"
    rounds, seconds, warmup = (2, 1.0, 0.5) if args.quick else (5, 2.0, 1.0)
    text = render(measure(rounds, seconds, warmup), mode, rounds, seconds)
    text += render_balanced(measure_balanced(rounds, seconds, warmup))
    stdio.publish(text, None, None, stdio.wants_docs(args), (START_MARK, END_MARK), "scaling results")
    return 0


if __name__ == "__main__":
    sys.exit(main())
