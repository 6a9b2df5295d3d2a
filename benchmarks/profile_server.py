"""Profile the toolwire echo server under the benchmark's load, with py-spy.

    python benchmarks/profile_server.py [--load sequential|in-flight] [--tool echo|echo_sync]
                                 [--seconds 8] [--rate 500] [--idle] [--native] [-o out.txt]
                                 [--src DIR] [--server FILE]

Starts ``python -m toolwire run benchmarks/echo_server.py``, drives it with the client of
``run.py`` (one call in flight, or 64), and has ``py-spy record`` sample it meanwhile in raw
(collapsed stacks) form. Prints where the samples fall: by function (own time and with what
it calls), and by area (event loop, our code, orjson, validation...). ``--server`` profiles
another server file (its directory and ``benchmarks/`` on ``PYTHONPATH``). ``-o`` keeps the raw
stacks (``--svg`` for a flame graph instead). Needs py-spy (``pip install py-spy``).
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as bench  # the driver, next to this file

#: Areas of the code, by the first matching piece of a frame's file path or name.
AREAS = [
    ("orjson", ("orjson", "loads (", "dumps (")),
    ("validation (jsonschema_rs)", ("jsonschema_rs", "is_valid")),
    ("toolwire protocol (connection, codec)", ("toolwire/protocol/",)),
    ("toolwire session (dispatch, tasks)", ("toolwire/server/",)),
    ("toolwire tools (call, results)", ("toolwire/tools/",)),
    ("toolwire stdio transport", ("toolwire/transports/",)),
    ("the tool itself", ("echo_server.py",)),
    ("asyncio (loop, tasks, transports)", ("asyncio/",)),
    ("threads / executor", ("threading.py", "concurrent/futures")),
    ("selectors (epoll)", ("selectors.py",)),
]


def area_of(frame: str) -> str:
    for area, needles in AREAS:
        if any(needle in frame for needle in needles):
            return area
    return "other"


def _function(frame: str) -> str:
    """``name (file:line)`` without the line: samples per function rather than per line."""
    head, _, place = frame.rpartition(" (")
    return f"{head} ({place.rpartition(':')[0]})" if head and ":" in place else frame


def analyze(raw: str, top: int) -> str:
    own: collections.Counter[str] = collections.Counter()
    own_lines: collections.Counter[str] = collections.Counter()
    total: collections.Counter[str] = collections.Counter()
    areas: collections.Counter[str] = collections.Counter()
    samples = 0
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [frame for frame in stack.split(";") if frame]
        if frames and frames[0].startswith(("process ", "thread ")):
            frames = frames[1:]
        if not frames:
            continue
        samples += count
        own_lines[frames[-1]] += count
        own[_function(frames[-1])] += count
        # The area of a sample: its innermost frame that belongs to a known area.
        areas[next((area_of(f) for f in reversed(frames) if area_of(f) != "other"), "other")] += count
        for function in {_function(frame) for frame in frames}:
            total[function] += count
    if not samples:
        return "no samples (is the server busy? try --idle)"
    out = [f"{samples} samples"]
    out.append("\nby area (innermost known frame):")
    out += [f"  {100 * n / samples:5.1f}%  {area}" for area, n in areas.most_common()]
    out.append(f"\nown time by function, top {top}:")
    out += [f"  {100 * n / samples:5.1f}%  {frame}" for frame, n in own.most_common(top)]
    out.append(f"\nown time by line (a C call's time counts on the line that calls it), top {top}:")
    out += [f"  {100 * n / samples:5.1f}%  {frame}" for frame, n in own_lines.most_common(top)]
    out.append(f"\nwith callees, top {top}:")
    out += [f"  {100 * n / samples:5.1f}%  {frame}" for frame, n in total.most_common(top)]
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--load", choices=("sequential", "in-flight"), default="in-flight")
    parser.add_argument("--tool", default="echo")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--rate", type=int, default=500, help="samples per second")
    parser.add_argument("--idle", action="store_true", help="also sample threads waiting (epoll, locks)")
    parser.add_argument("--native", action="store_true", help="include native (C) frames")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("-o", "--output", help="keep the raw collapsed stacks (or the flame graph) here")
    parser.add_argument("--svg", action="store_true", help="write a flame graph to --output instead")
    parser.add_argument("--src", help="import toolwire from this directory instead (a snapshot of src/)")
    parser.add_argument("--server", help="serve this file instead of benchmarks/echo_server.py")
    args = parser.parse_args()
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not os.path.exists(spy):
        print("py-spy is not installed: pip install py-spy", file=sys.stderr)
        return 2
    command, paths = bench.TOOLWIRE, [args.src] if args.src else []
    if args.server:
        command = [*bench.TOOLWIRE[:-1], args.server]
        paths += [str(Path(args.server).resolve().parent), str(Path(__file__).resolve().parent)]
    peer = bench.Peer("toolwire", command, {"PYTHONPATH": os.pathsep.join(paths)} if paths else None)
    try:
        peer.handshake()
        load = bench.sequential if args.load == "sequential" else bench.in_flight
        load(peer, args.tool, 0.5)  # warm-up
        with tempfile.TemporaryDirectory() as tmp:
            out = args.output if args.svg and args.output else os.path.join(tmp, "stacks.txt")
            command = [spy, "record", "--pid", str(peer.process.pid), "--rate", str(args.rate)]
            command += ["--duration", str(int(args.seconds)), "-o", out]
            if not args.native:  # native stacks need the process paused while sampled
                command.append("--nonblocking")
            command += ["--format", "flamegraph" if args.svg else "raw"]
            if args.idle:
                command.append("--idle")
            if args.native:
                command.append("--native")
            with tempfile.TemporaryFile() as errors:
                spy_process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors)
                rates: list[float] = []
                time.sleep(0.3)  # let py-spy attach
                deadline = time.perf_counter() + args.seconds + 1.0
                while time.perf_counter() < deadline and spy_process.poll() is None:
                    rates.append(load(peer, args.tool, 1.0))
                spy_process.wait()
                errors.seek(0)
                err = errors.read()
            if spy_process.returncode:
                print(err.decode(errors="replace"), file=sys.stderr)
                return 2
            rate_text = ", ".join(f"{r:,.0f}" for r in rates)
            print(f"{args.load} {args.tool}: calls/s while sampled: {rate_text}")
            if args.svg:
                print(f"flame graph written to {out}")
                return 0
            raw = Path(out).read_text()
            if args.output:
                Path(args.output).write_text(raw)
            print(analyze(raw, args.top))
    finally:
        peer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
