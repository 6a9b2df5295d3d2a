"""Benchmark toolwire's Streamable HTTP server against a raw floor, side by side, in one run.

    python benchmarks/http_run.py [--quick] [--runner toolwire,uvicorn,granian] [--json PATH] [--docs]
                                  [--strict]

The floor (``http_floor.py``) is a bare ASGI application with orjson under uvicorn (httptools,
uvloop); toolwire serves ``echo_server.py``'s server (``http_echo_server.py``, through
``Server.run_http``) with each runner asked for: its own HTTP server and uvicorn by default,
granian (one worker) when named. Each is a process of its own on 127.0.0.1.
The load generator (``http_load.py``) is a process of its own: 16 keep-alive connections,
each sending ``tools/call`` requests one after the other for a fixed time, in three cases:
2025-11-25 sessions with JSON answers, the same with SSE answers (a tool that reports one
progress step), and 2026-07-28 stateless requests.

Rounds are interleaved (each case: the floor, then toolwire under each runner; then the next
case; then again), and
each figure is the median over the rounds. Per case: calls/s, the server's CPU time per
call (its user + system time from ``/proc``, with its child processes, over the round) and
the calls' latency (p50, p99) under that load, each against its target as a ratio to the
floor. The table goes to stdout; ``--docs`` also writes it into docs/performance.md.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as stdio  # the stdio driver, next to this file: machine info, errors, the watchdog

ROOT = stdio.ROOT
START_MARK = "<!-- http-results:start -->"
END_MARK = "<!-- http-results:end -->"

SERVERS = {"floor": "benchmarks/http_floor.py", "toolwire": "benchmarks/http_echo_server.py"}
#: toolwire's runners, as ``run_http(runner=...)`` names them, and how the tables name them.
RUNNERS = {"toolwire": "its own HTTP server", "uvicorn": "uvicorn", "granian": "granian (one worker)"}
CASES = {
    "legacy_json": "2025-11-25 session, JSON answers",
    "legacy_sse": "2025-11-25 session, SSE answers (one progress step)",
    "modern": "2026-07-28 stateless, JSON answers",
    "modern_sse": "2026-07-28 stateless, SSE answers (one progress step)",
}
CONNECTIONS = 16
MODES: dict[str, dict[str, Any]] = {
    "full": {"rounds": 7, "seconds": 2.0, "warmup": 1.0},
    "quick": {"rounds": 3, "seconds": 1.2, "warmup": 0.4},
}

BenchError = stdio.BenchError
_log = stdio._log


def _die_with_parent() -> None:
    """In a child, before it runs: SIGTERM when this driver dies, even by SIGKILL (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Server:
    """An HTTP server process (in a process group of its own, so that granian's workers end
    with it), on a free port of 127.0.0.1."""

    def __init__(self, kind: str, runner: str, options: tuple[str, ...] = ()) -> None:
        self.label = f"{kind} ({runner})"
        self.port = _free_port()
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by stop())
        self.process = subprocess.Popen(
            [sys.executable, SERVERS[kind], str(self.port), "--runner", runner, *options],
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=self.log,
            cwd=ROOT,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )

    def died(self, what: str) -> BenchError:
        self.log.seek(0)
        text = self.log.read().decode(errors="replace")[-3000:]
        return BenchError(f"{self.label}: {what} (exit code {self.process.poll()})\n{text}")

    def wait_ready(self, seconds: float = 30.0) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise self.died("exited before listening")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return
            time.sleep(0.05)
        raise self.died(f"not listening on port {self.port} after {seconds:g} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        with contextlib.suppress(ProcessLookupError):  # workers left behind, if any
            os.killpg(self.process.pid, signal.SIGKILL)
        self.log.close()


class Load:
    """The load generator process: one command line in, one result line out."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "benchmarks/http_load.py"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            cwd=ROOT,
            start_new_session=True,  # Ctrl-C reaches the driver only, which ends it
            preexec_fn=_die_with_parent,
        )

    def run(
        self, server: Server, case: str, seconds: float, connections: int = CONNECTIONS, authorization: str = ""
    ) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        command = {"port": server.port, "case": case, "seconds": seconds, "connections": connections}
        command["pid"] = server.process.pid
        if authorization:
            command["authorization"] = authorization
        with stdio.Watchdog(int(seconds) + 45):
            self.process.stdin.write(orjson.dumps(command) + b"\n")
            self.process.stdin.flush()
            line = self.process.stdout.readline()
        if not line:
            raise BenchError(f"the load generator exited (exit code {self.process.wait()})")
        result: dict[str, Any] = orjson.loads(line)
        if "error" in result:
            if server.process.poll() is not None:
                raise server.died(f"{case}: {result['error']}")
            raise BenchError(f"{server.label}, {case}: {result['error']}")
        calls = result["calls"]
        return {
            "rate": calls / result["seconds"],
            "cpu_us": result["server_cpu"] / calls * 1e6,
            "p50_ms": result["p50_ms"],
            "p99_ms": result["p99_ms"],
            "server_cores": result["server_cpu"] / result["seconds"],
            "client_cores": result["client_cpu"] / result["seconds"],
        }

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def run(mode: str, runners: list[str]) -> dict[str, Any]:
    """Every round of every case, per server: ``results["samples"][case]["floor" or runner]``."""
    settings = MODES[mode]
    rounds, seconds, warmup = settings["rounds"], settings["seconds"], settings["warmup"]
    began = time.perf_counter()
    results: dict[str, Any] = {"mode": mode, "settings": settings, "machine": stdio._machine(), "runners": runners}
    servers: dict[str, Server] = {}
    load: Load | None = None
    try:
        servers["floor"] = Server("floor", "uvicorn")
        for runner in runners:
            servers[runner] = Server("toolwire", runner)
        load = Load()
        for server in servers.values():
            server.wait_ready()
        _log(f"warm-up: {warmup:g} s per server and case")
        for server in servers.values():
            for case in CASES:
                load.run(server, case, warmup)
        samples: dict[str, Any] = {case: {name: [] for name in servers} for case in CASES}
        _log(f"{rounds} interleaved rounds of {seconds:g} s per server and case, {CONNECTIONS} connections")
        for number in range(rounds):
            for case in CASES:
                for name, server in servers.items():
                    samples[case][name].append(load.run(server, case, seconds))
            _log(f"  round {number + 1}/{rounds} done")
        results["samples"] = samples
    finally:
        if load is not None:
            load.close()
        for server in servers.values():
            server.stop()
    results["duration_s"] = time.perf_counter() - began
    return results


# -- report ----------------------------------------------------------------------------------

#: metric key, label, unit, then the target's text and its test of the ratio (for JSON
#: answers, then for SSE answers, whose throughput target is lower).
METRICS: list[tuple[str, str, str, tuple[str, Any], tuple[str, Any]]] = [
    (
        "rate",
        "throughput",
        "calls/s",
        (">= 80% of floor", lambda ratio: ratio >= 0.8),
        (">= 70% of floor", lambda ratio: ratio >= 0.7),
    ),
    ("cpu_us", "server CPU per call", "µs", *[("<= 1.5x floor", lambda ratio: ratio <= 1.5)] * 2),
    ("p50_ms", "latency p50", "ms", *[("", None)] * 2),
    ("p99_ms", "latency p99", "ms", *[("<= 2x floor", lambda ratio: ratio <= 2.0)] * 2),
]


def summarize(samples: dict[str, dict[str, list[dict[str, float]]]], runner: str) -> list[dict[str, Any]]:
    """The rows of one runner's table: per case and metric, the medians, their ratio
    (toolwire under ``runner`` / floor), the range of each round's own ratio, and the verdict."""
    rows = []
    for case, label in CASES.items():
        floor, toolwire = samples[case]["floor"], samples[case][runner]
        for key, metric, unit, json_target, sse_target in METRICS:
            target, passes = sse_target if case.endswith("_sse") else json_target
            f = statistics.median(s[key] for s in floor)
            t = statistics.median(s[key] for s in toolwire)
            paired = [b[key] / a[key] for a, b in zip(floor, toolwire, strict=True)]
            ratio = t / f
            rows.append(
                {
                    "case": label,
                    "metric": metric,
                    "unit": unit,
                    "floor": f,
                    "toolwire": t,
                    "ratio": ratio,
                    "round_ratios": (min(paired), max(paired)),
                    "target": target,
                    "passed": passes(ratio) if passes else None,
                }
            )
    return rows


def _number(value: float, unit: str) -> str:
    if unit == "calls/s":
        return f"{value:,.0f}"
    if unit == "µs":
        return f"{value:.0f}"
    return f"{value:.2f}"


def render_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| case | metric | floor | toolwire | ratio toolwire / floor (range over rounds) | target | result |",
        "|---|---|---:|---:|---:|---|---|",
    ]
    for r in rows:
        verdict = "info" if r["passed"] is None else "PASS" if r["passed"] else "FAIL"
        ratio = "{:.2f}x ({:.2f}-{:.2f})".format(r["ratio"], *r["round_ratios"])
        lines.append(
            f"| {r['case']} | {r['metric']} ({r['unit']}) | {_number(r['floor'], r['unit'])} | "
            f"{_number(r['toolwire'], r['unit'])} | {ratio} | {r['target'] or '-'} | {verdict} |"
        )
    return "\n".join(lines)


def render(results: dict[str, Any], tables: dict[str, list[dict[str, Any]]]) -> str:
    machine, settings = results["machine"], results["settings"]
    every = [
        (name, sample)
        for servers in results["samples"].values()
        for name, rounds in servers.items()
        for sample in rounds
    ]
    client = max(sample["client_cores"] for _, sample in every)
    busiest = ", ".join(
        f"{max(sample['server_cores'] for n, sample in every if n == name):.0%} ({_server_name(name)})"
        for name in ("floor", *results["runners"])
    )
    header = (
        f"{results['mode']} run, {machine['date']}, commit {machine['commit']}: {machine['cores']} cores "
        f"({machine['cpu']}), Python {machine['python']}, {machine['platform']}; median of {settings['rounds']} "
        f"interleaved rounds of {settings['seconds']:g} s per case and server, {CONNECTIONS} keep-alive "
        f"connections with one call in flight each; the load generator used at most {client:.0%} of a core, "
        f"the servers at most {busiest}; "
        f"the run took {results['duration_s']:.0f} s."
    )
    parts = [header]
    for runner, rows in tables.items():
        parts.append(f"**toolwire on {RUNNERS[runner]}**, floor on uvicorn\n\n" + render_table(rows))
    return "\n\n".join(parts) + "\n"


def _server_name(name: str) -> str:
    return "floor, uvicorn" if name == "floor" else f"toolwire, {RUNNERS[name]}"


def _runners(text: str) -> list[str]:
    """``--runner``'s comma-separated names, checked."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in RUNNERS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"runners are {', '.join(RUNNERS)} (comma-separated), not {text!r}")
    return list(dict.fromkeys(names))


def _interrupted(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run (about a minute)")
    parser.add_argument(
        "--runner", type=_runners, default=["toolwire", "uvicorn"], help="toolwire's runners: toolwire,uvicorn,granian"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results (with every round) as JSON")
    parser.add_argument("--docs", action="store_true", help="write the results into docs/performance.md")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if a target is missed")
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full"
    runners: list[str] = args.runner
    for signum in (signal.SIGINT, signal.SIGTERM):  # so that the servers are stopped
        signal.signal(signum, _interrupted)
    try:
        results = run(mode, runners)
    except BenchError as exc:
        print(f"benchmark failed: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    tables = {runner: summarize(results["samples"], runner) for runner in runners}
    results["tables"] = tables
    stdio.publish(render(results, tables), results, args.json, args.docs, (START_MARK, END_MARK), "HTTP results")
    failed = [f"{r['case']}: {r['metric']}" for rows in tables.values() for r in rows if r["passed"] is False]
    if failed:
        _log("targets missed: " + "; ".join(failed))
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
