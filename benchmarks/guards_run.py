"""Benchmark the guards: sequential ``tools/call`` with guards on, against the same server
without them, side by side over real stdio pipes in one run.

    python benchmarks/guards_run.py [--quick] [--docs | --no-docs]

``benchmarks/echo_server.py`` is served twice by ``python -m toolwire run``: as it is, and as
``benchmarks/guarded_echo_server.py`` (a timeout, an in-memory rate limit that never refuses,
and the audit trail in a file flushed per record). The client is ``run.py``'s raw one. Rounds
alternate (plain, guarded, plain...); each figure is the median of its rounds, and the ratio
is what carries over between machines. Targets: guarded >= 85% of plain, and the same for
``benchmarks/traced_echo_server.py`` (OpenTelemetry, spans to an exporter that drops them).
"""

from __future__ import annotations

import datetime
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as stdio

START_MARK = "<!-- guards-results:start -->"
END_MARK = "<!-- guards-results:end -->"
PLAIN = [sys.executable, "-m", "toolwire", "run", "benchmarks/echo_server.py"]
GUARDED = [sys.executable, "-m", "toolwire", "run", "benchmarks/guarded_echo_server.py"]
TRACED = [sys.executable, "-m", "toolwire", "run", "benchmarks/traced_echo_server.py"]


def measure(rounds: int, seconds: float) -> dict[str, list[float]]:
    audit = Path(tempfile.mkdtemp(prefix="guards-bench-")) / "audit.jsonl"
    plain = stdio.Peer("plain", PLAIN)
    guarded = stdio.Peer("guarded", GUARDED, env={"BENCH_AUDIT_FILE": str(audit), "PYTHONPATH": "benchmarks"})
    traced = stdio.Peer("traced", TRACED, env={"PYTHONPATH": "benchmarks"})
    peers = {"plain": plain, "guarded": guarded, "traced": traced}
    samples: dict[str, list[float]] = {name: [] for name in peers}
    try:
        for peer in peers.values():
            peer.handshake()
            stdio.sequential(peer, "echo", 0.3)  # warm-up
        for _ in range(rounds):
            for name, peer in peers.items():
                samples[name].append(stdio.sequential(peer, "echo", seconds))
    finally:
        for peer in peers.values():
            peer.close()
    records = audit.read_bytes().count(b"\n")
    if records < 2:
        raise stdio.BenchError(f"the guarded server wrote {records} audit records")
    return samples


def render(samples: dict[str, list[float]], mode: str, rounds: int, seconds: float) -> tuple[str, bool]:
    plain = statistics.median(samples["plain"])
    rows = [
        ("timeout, rate limit, audit file flushed per record", "guarded"),
        ("OpenTelemetry, spans to an exporter that drops them", "traced"),
    ]
    text = (
        f"Run of {datetime.date.today().isoformat()} ({mode}: {rounds} rounds of {seconds:g} s), "
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores.\n\n"
        "| sequential tools/call (calls/s) | with | plain | ratio | added per call | target | |\n"
        "|---|---|---|---|---|---|---|\n"
    )
    passed = True
    for label, name in rows:
        figure = statistics.median(samples[name])
        ratio = figure / plain
        ok = ratio >= 0.85
        passed = passed and ok
        mark = "pass" if ok else "**missed**"
        added = 1e6 / figure - 1e6 / plain
        text += f"| {label} | {figure:,.0f} | {plain:,.0f} | {ratio:.2f}x | {added:.0f} µs | >= 0.85x | {mark} |\n"
    return text, passed


def main(argv: list[str] | None = None) -> int:
    parser = stdio.options(__doc__, "about 10 s")
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full"
    rounds, seconds = (3, 0.5) if args.quick else (9, 1.0)
    samples = measure(rounds, seconds)
    text, passed = render(samples, mode, rounds, seconds)
    stdio.publish(text, None, None, stdio.wants_docs(args), (START_MARK, END_MARK), "guards results")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
