"""Benchmark toolwire's Client over Streamable HTTP against a raw HTTP client, in one run.

    python benchmarks/http_client_run.py [--quick] [--json PATH] [--docs] [--strict]

Serves ``http_echo_server.py`` (toolwire's application on its own HTTP server, the default) on
127.0.0.1 and measures ``tools/call`` of ``echo`` in calls/s, one call at a time and with 64
in flight, each measurement from a client process of its own (``http_client_driver.py``):

- the raw client: hand-written HTTP/1.1 on asyncio protocols with keep-alive connections
  (``http_load.py``'s), the floor, for both eras (a 2025-11-25 session; 2026-07-28 stateless);
- toolwire's ``Client`` in both eras, as it is (``client``), with the HTTP it had before
  (``client-httpx``: httpx on its own transport) and through httpx's client layer on
  toolwire's transport (``client-no-direct``: requests with ``auth=``, cookies or redirects);
- the HTTP stacks the Client could be built on, each making the same 2026-07-28 POST bare:
  httpx as the Client used it, httpx tuned, httpcore, aiohttp (when installed), toolwire's
  HTTP/1.1 client on httptools (``lean``) and httpx's client over it (``httpx-lean``).

Rounds are interleaved (every measurement once, then again), each figure is the median over
the rounds, and the ratio is to the raw client of the same era and concurrency in the same
run (with the range of each round's own ratio), beside each process's CPU time per call (the
client's and the server's, from ``/proc``). The target: the Client at >= 0.5x of the raw
client, one at a time and with 64 in flight, in both eras. The table goes to stdout;
``--docs`` also writes it into docs/performance.md.
"""

from __future__ import annotations

import argparse
import importlib.util
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

import http_run  # the HTTP benchmark's server process, next to this file
import run as stdio  # machine info, errors, the docs writer

ROOT = stdio.ROOT
START_MARK = "<!-- http-client-results:start -->"
END_MARK = "<!-- http-client-results:end -->"
IN_FLIGHT = (1, 64)
TARGET = 0.5
MODES: dict[str, dict[str, Any]] = {"full": {"rounds": 5, "seconds": 1.0}, "quick": {"rounds": 2, "seconds": 0.5}}
#: stack: (label, eras measured)
STACKS: dict[str, tuple[str, tuple[str, ...]]] = {
    "raw": ("raw client (the floor)", ("legacy", "modern")),
    "client": ("toolwire Client", ("legacy", "modern")),
    "client-httpx": ("toolwire Client on httpx's own transport (before)", ("legacy", "modern")),
    "client-no-direct": ("toolwire Client through httpx's client layer (auth=, cookies, redirects)", ("modern",)),
    "lean": ("bare: toolwire's HTTP/1.1 client (httptools)", ("modern",)),
    "httpx-lean": ("bare: httpx's AsyncClient on toolwire's transport", ("modern",)),
    "aiohttp": ("bare: aiohttp", ("modern",)),
    "httpcore": ("bare: httpcore's connection pool", ("modern",)),
    "httpx-tuned": ("bare: httpx tuned (no trust_env, 100 keep-alive)", ("modern",)),
    "httpx": ("bare: httpx as the Client used it", ("modern",)),
}
ERAS = {"legacy": "2025-11-25 session", "modern": "2026-07-28 stateless"}

BenchError = stdio.BenchError
_log = stdio._log


def measure(server: http_run.Server, stack: str, era: str, in_flight: int, seconds: float) -> dict[str, float]:
    command = [sys.executable, "benchmarks/http_client_driver.py", stack, str(server.port)]
    command += ["--era", era, "--in-flight", str(in_flight), "--seconds", str(seconds)]
    command += ["--server-pid", str(server.process.pid)]
    with stdio.Watchdog(int(seconds) + 60):
        done = subprocess.run(command, cwd=ROOT, capture_output=True, check=False)
    if done.returncode != 0:
        raise BenchError(f"{stack} ({era}, {in_flight} in flight): {done.stderr.decode(errors='replace')[-2000:]}")
    result: dict[str, float] = orjson.loads(done.stdout.splitlines()[-1])
    return result


def run(mode: str) -> dict[str, Any]:
    settings = MODES[mode]
    began = time.perf_counter()
    installed = importlib.util.find_spec("aiohttp") is not None
    stacks = {stack: spec for stack, spec in STACKS.items() if stack != "aiohttp" or installed}
    cases = [(stack, era, n) for stack, (_, eras) in stacks.items() for era in eras for n in IN_FLIGHT]
    samples: dict[str, list[dict[str, float]]] = {_key(*case): [] for case in cases}
    server = http_run.Server("toolwire", "toolwire")
    try:
        server.wait_ready()
        _log(f"{settings['rounds']} interleaved rounds of {len(cases)} measurements of {settings['seconds']:g} s")
        for number in range(settings["rounds"]):
            for case in cases:
                samples[_key(*case)].append(measure(server, *case, settings["seconds"]))
            _log(f"  round {number + 1}/{settings['rounds']} done")
    finally:
        server.stop()
    return {
        "mode": mode,
        "settings": settings,
        "machine": stdio._machine(),
        "cases": cases,
        "samples": samples,
        "duration_s": time.perf_counter() - began,
    }


def _key(stack: str, era: str, in_flight: int) -> str:
    return f"{stack} {era} {in_flight}"


def summarize(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Per measurement: median calls/s and CPU per call, the raw client's beside it, the
    ratio and the range of each round's own ratio."""
    samples = results["samples"]
    rows = []
    for stack, era, n in results["cases"]:
        own = samples[_key(stack, era, n)]
        floor = samples[_key("raw", era, n)]
        rate = statistics.median(s["calls_per_second"] for s in own)
        raw = statistics.median(s["calls_per_second"] for s in floor)
        paired = [a["calls_per_second"] / b["calls_per_second"] for a, b in zip(own, floor, strict=True)]
        target = stack == "client"
        rows.append(
            {
                "stack": stack,
                "label": STACKS[stack][0],
                "era": era,
                "in_flight": n,
                "rate": rate,
                "cpu_us": statistics.median(s["cpu_per_call_us"] for s in own),
                "server_cpu_us": statistics.median(s["server_cpu_per_call_us"] for s in own),
                "raw": raw,
                "ratio": rate / raw,
                "round_ratios": (min(paired), max(paired)),
                "passed": rate / raw >= TARGET if target else None,
            }
        )
    return rows


def render(results: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    machine, settings = results["machine"], results["settings"]
    header = (
        f"{results['mode']} run, {machine['date']}, commit {machine['commit']}: {machine['cores']} cores "
        f"({machine['cpu']}), Python {machine['python']}, {machine['platform']}; median of {settings['rounds']} "
        f"interleaved rounds of {settings['seconds']:g} s per measurement, each from a process of its own; "
        f"the run took {results['duration_s']:.0f} s."
    )
    lines = [
        "| client | era | in flight | calls/s | raw client calls/s | ratio (range over rounds) "
        "| client CPU per call (µs) | server CPU per call (µs) | target | result |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for r in rows:
        if r["stack"] == "raw":
            continue
        verdict = "info" if r["passed"] is None else "PASS" if r["passed"] else "FAIL"
        ratio = "{:.2f}x ({:.2f}-{:.2f})".format(r["ratio"], *r["round_ratios"])
        target = f">= {TARGET}x raw" if r["passed"] is not None else "-"
        lines.append(
            f"| {r['label']} | {ERAS[r['era']]} | {r['in_flight']} | {r['rate']:,.0f} | {r['raw']:,.0f} | "
            f"{ratio} | {r['cpu_us']:.0f} | {r['server_cpu_us']:.0f} | {target} | {verdict} |"
        )
    raw_cpu = "; ".join(
        f"{ERAS[r['era']]}, {r['in_flight']} in flight: {r['cpu_us']:.0f} µs (the server's {r['server_cpu_us']:.0f} µs)"
        for r in rows
        if r["stack"] == "raw"
    )
    return f"{header}\n\n" + "\n".join(lines) + f"\n\nThe raw client's CPU per call: {raw_cpu}.\n"


def _interrupted(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run (about a minute)")
    parser.add_argument("--json", metavar="PATH", help="also write the results (with every round) as JSON")
    parser.add_argument("--docs", action="store_true", help="write the results into docs/performance.md")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if a target is missed")
    args = parser.parse_args(argv)
    for signum in (signal.SIGINT, signal.SIGTERM):  # so that the server is stopped
        signal.signal(signum, _interrupted)
    try:
        results = run("quick" if args.quick else "full")
    except BenchError as exc:
        print(f"benchmark failed: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    rows = summarize(results)
    results["rows"] = rows
    marks = (START_MARK, END_MARK)
    stdio.publish(render(results, rows), results, args.json, args.docs, marks, "Client-over-HTTP results")
    failed = [f"{r['era']}, {r['in_flight']} in flight" for r in rows if r["passed"] is False]
    if failed:
        _log("targets missed: " + "; ".join(failed))
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
