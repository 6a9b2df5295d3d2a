"""What the gateway adds to a call: latency and instructions, side by side with the direct server.

    python benchmarks/gateway_overhead.py [--calls N] [--latency-calls M] [--only stdio|http]
                                          [--era 2025-11-25|2026-07-28] [--functions K] [--json]

The client (this process, raw JSON-RPC as ``instructions.py`` sends it) calls ``echo`` on
``echo_server.py``'s server directly, and ``echo.echo`` through ``toolwire gateway`` whose one
upstream is that server, over the same transport on both legs:

- ``stdio``: the client writes to ``python -m toolwire run benchmarks/echo_server.py``'s
  stdin, or to ``python -m toolwire gateway`` whose upstream is that command (run by the gateway
  over its pipes);
- ``http``: the client posts to ``benchmarks/http_echo_server.py`` on 127.0.0.1, or to
  ``toolwire gateway --http`` whose upstream is that server's URL.

**Latency**: the median of M calls made one at a time (after 200 not counted), each timed by
this process from its write to its answer; the gateway's added latency is the difference of
the medians (target: under 0.3 ms).

**CPU**: the instructions the processes execute, counted by ``valgrind --tool=callgrind`` as
``instructions.py`` counts them (each run with N and 2N calls, the difference over N; calls
in bursts of 64 over stdio, one at a time over HTTP): the server alone, against the gateway
process plus its upstream process (target: within 1.3x). ``--functions K`` lists the gateway
process's K toolwire functions with the most time of their own per call under cProfile (M
calls), to see where its cost is.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import pstats
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import callgrind
import instructions
from instructions import BURST, DISCOVER, INITIALIZE, INITIALIZED, LEGACY, MODERN, Pipes

DEFAULT_CALLS = {"stdio": 1024, "http": 300}
DEFAULT_LATENCY_CALLS = 3000
WARMUP = 200
STDIO_SERVER = ["-m", "toolwire", "run", "benchmarks/echo_server.py"]
HTTP_SERVER = ["benchmarks/http_echo_server.py"]
_configs = itertools.count()
#: The gateway's upstream is named ``echo``: its tool is ``echo.echo``.
THROUGH = "echo.echo"


def gateway_config(folder: Path, upstream: str) -> Path:
    """A gateway.toml with one upstream (the TOML of its ``command = [...]`` or ``url = "..."``),
    started with the gateway, the file not watched (nothing polled while counting)."""
    path = folder / f"gateway.{next(_configs)}.toml"
    path.write_text(f'[gateway]\nreload = false\n[upstreams.echo]\n{upstream}\nstart = "eager"\n')
    return path


def command_upstream(command: Sequence[str]) -> str:
    """The TOML of an upstream running ``command`` in the repository's root."""
    return f"command = {json.dumps(list(command))}\ncwd = {json.dumps(str(callgrind.ROOT))}"


def gateway_arguments(config: Path, *http: str) -> list[str]:
    return ["-m", "toolwire", "gateway", str(config), *http]


@contextlib.contextmanager
def running(command: Sequence[str], stdio: bool) -> Iterator[subprocess.Popen[bytes]]:
    """``command`` running (its stdin and stdout piped for stdio) until the block ends; then
    stopped as a user stops it (end of input, or SIGTERM) and waited for."""
    log = tempfile.TemporaryFile()  # noqa: SIM115  # closed at the end of the block, below
    process = subprocess.Popen(
        command,
        env=callgrind.environment(),
        cwd=callgrind.ROOT,
        stdin=subprocess.PIPE if stdio else subprocess.DEVNULL,
        stdout=subprocess.PIPE if stdio else log,
        stderr=log,
    )
    try:
        yield process
        if stdio:
            assert process.stdin is not None
            process.stdin.close()
        else:
            process.send_signal(signal.SIGTERM)
        code = process.wait(300)
        if code not in (0, -signal.SIGTERM):
            log.seek(0)
            raise SystemExit(f"{command} exited with {code}:\n{log.read().decode(errors='replace')[-3000:]}")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        log.close()


def opened_pipes(process: subprocess.Popen[bytes], era: str) -> Pipes:
    pipes = Pipes(process)
    handshake = INITIALIZE + INITIALIZED if era == LEGACY else DISCOVER
    (answer,) = pipes.ask(handshake, 1)
    if b'"error"' in answer:
        raise SystemExit(f"unexpected answer to the handshake: {answer[:300]!r}")
    return pipes


# -- latency ---------------------------------------------------------------------------------


def stdio_latency(process: subprocess.Popen[bytes], era: str, tool: str, calls: int) -> list[float]:
    """Seconds per call of ``calls`` calls made one at a time over the process's pipes."""
    pipes = opened_pipes(process, era)
    template = instructions.calls_template(era, tool)
    times = []
    for id in range(1, WARMUP + calls + 1):
        began = time.perf_counter()
        (answer,) = pipes.ask(template % id + b"\n", 1)
        times.append(time.perf_counter() - began)
        instructions.check(answer, id, "stdio")
    return times[WARMUP:]


def http_latency(port: int, process: subprocess.Popen[bytes], era: str, tool: str, calls: int) -> list[float]:
    """Seconds per call of ``calls`` calls made one at a time on one keep-alive connection."""
    client = instructions.Client(port, process)
    case = instructions.http_load.Case("legacy_json" if era == LEGACY else "modern", port)
    try:
        session = None
        if case.legacy:
            load = instructions.http_load
            _, head, _ = client.send(case.head(None) % len(load.INITIALIZE) + load.INITIALIZE)
            session = load.header(head, b"mcp-session-id")
            client.send(case.head(session) % len(load.INITIALIZED) + load.INITIALIZED)
        head = case.head(session).replace(b"Mcp-Name: echo\r\n", b"Mcp-Name: " + tool.encode() + b"\r\n")
        template = instructions.calls_template(era, tool)
        times = []
        for id in range(1, WARMUP + calls + 1):
            body = template % id
            began = time.perf_counter()
            status, _, answer = client.send(head % len(body) + body)
            times.append(time.perf_counter() - began)
            if status != 200:
                raise SystemExit(f"HTTP {status}: {answer[:300]!r}")
            instructions.check(answer, id, "HTTP")
        return times[WARMUP:]
    finally:
        client.close()


def latency(path: str, era: str, calls: int, folder: Path) -> dict[str, float]:
    """Median microseconds per call, directly and through the gateway."""
    medians = {}
    python = sys.executable
    if path == "stdio":
        with running([python, *STDIO_SERVER], stdio=True) as server:
            medians["direct"] = statistics.median(stdio_latency(server, era, "echo", calls))
        config = gateway_config(folder, command_upstream([python, *STDIO_SERVER]))
        with running([python, *gateway_arguments(config)], stdio=True) as gateway:
            medians["gateway"] = statistics.median(stdio_latency(gateway, era, THROUGH, calls))
    else:
        port, front = instructions.free_port(), instructions.free_port()
        with running([python, *HTTP_SERVER, str(port)], stdio=False) as server:
            medians["direct"] = statistics.median(http_latency(port, server, era, "echo", calls))
            config = gateway_config(folder, f'url = "http://127.0.0.1:{port}/mcp"')
            with running([python, *gateway_arguments(config, "--http", str(front))], stdio=False) as gateway:
                medians["gateway"] = statistics.median(http_latency(front, gateway, era, THROUGH, calls))
    return {name: seconds * 1e6 for name, seconds in medians.items()}


# -- instructions ----------------------------------------------------------------------------


def count_stdio(era: str, calls: int, folder: Path, through: bool) -> dict[str, Path]:
    """The callgrind files of ``calls`` calls over stdio: the server's, and (``through``) the gateway's."""
    server_out = folder / f"callgrind.stdio.{era}.{through}.server.{calls}"
    server = callgrind.command(server_out, STDIO_SERVER)
    if not through:
        with running(server, stdio=True) as process:
            instructions.stdio_calls(Pipes(process), era, "echo", calls)
        return {"server": server_out}
    gateway_out = folder / f"callgrind.stdio.{era}.gateway.{calls}"
    config = gateway_config(folder, command_upstream(server))
    with running(callgrind.command(gateway_out, gateway_arguments(config)), stdio=True) as process:
        instructions.stdio_calls(Pipes(process), era, THROUGH, calls)
    return {"server": server_out, "gateway": gateway_out}


def count_http(era: str, calls: int, folder: Path, through: bool) -> dict[str, Path]:
    """The callgrind files of ``calls`` calls over HTTP: the server's, and (``through``) the gateway's."""
    port = instructions.free_port()
    server_out = folder / f"callgrind.http.{era}.{through}.server.{calls}"
    with running(callgrind.command(server_out, [*HTTP_SERVER, str(port)]), stdio=False) as server:
        if not through:
            client = instructions.Client(port, server)
            try:
                instructions.http_calls(client, era, "echo", calls, port)
            finally:
                client.close()
            return {"server": server_out}
        instructions.Client(port, server).close()  # listening: the gateway can connect
        front = instructions.free_port()
        gateway_out = folder / f"callgrind.http.{era}.gateway.{calls}"
        config = gateway_config(folder, f'url = "http://127.0.0.1:{port}/mcp"')
        with running(callgrind.command(gateway_out, gateway_arguments(config, "--http", str(front))), False) as gw:
            client = instructions.Client(front, gw)
            try:
                instructions.http_calls(client, era, THROUGH, calls, front)
            finally:
                client.close()
    return {"server": server_out, "gateway": gateway_out}


def cpu(path: str, era: str, calls: int, folder: Path) -> dict[str, Any]:
    """Instructions per call: the server alone; the server and the gateway through it."""
    count = count_stdio if path == "stdio" else count_http
    if path == "stdio":
        calls = max(calls // BURST, 1) * BURST
    figures: dict[str, Any] = {"calls": calls}
    runs = {
        through: (count(era, calls, folder, through), count(era, 2 * calls, folder, through))
        for through in (False, True)
    }
    for through, (small, large) in runs.items():
        for process in small:
            key = f"{process}{' (through the gateway)' if through and process == 'server' else ''}"
            figures[key] = (callgrind.total(large[process]) - callgrind.total(small[process])) / calls
    return figures


# -- where the gateway's time goes ------------------------------------------------------------


def profile(path: str, era: str, calls: int, folder: Path, top: int) -> list[dict[str, Any]]:
    """The gateway process's ``top`` toolwire functions by their own time under cProfile, over
    ``calls`` calls: microseconds per call, their own and with what they call."""
    out = folder / f"profile.{path}.{era}"
    python = sys.executable
    profiled = [python, "-m", "cProfile", "-o", str(out)]
    if path == "stdio":
        config = gateway_config(folder, command_upstream([python, *STDIO_SERVER]))
        with running([*profiled, *gateway_arguments(config)], stdio=True) as gateway:
            instructions.stdio_calls(Pipes(gateway), era, THROUGH, max(calls // BURST, 1) * BURST)
    else:
        port, front = instructions.free_port(), instructions.free_port()
        with running([python, *HTTP_SERVER, str(port)], stdio=False) as server:
            instructions.Client(port, server).close()
            config = gateway_config(folder, f'url = "http://127.0.0.1:{port}/mcp"')
            with running([*profiled, *gateway_arguments(config, "--http", str(front))], stdio=False) as gateway:
                client = instructions.Client(front, gateway)
                try:
                    instructions.http_calls(client, era, THROUGH, calls, front)
                finally:
                    client.close()
    stats = pstats.Stats(str(out)).stats  # {(file, line, name): (cc, nc, tt, ct, callers)}
    own = [
        (own_time, cumulative, f"{Path(file).name}:{line}({name})")
        for (file, line, name), (_, _, own_time, cumulative, _) in stats.items()
        if f"{os.sep}toolwire{os.sep}" in file
    ]
    return [
        {"name": name, "own_us": own_time / calls * 1e6, "cumulative_us": cumulative / calls * 1e6}
        for own_time, cumulative, name in sorted(own, reverse=True)[:top]
    ]


# -- the run ---------------------------------------------------------------------------------


def report(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| path | era | direct (µs) | gateway (µs) | added (µs) | server (instr.) | gateway + server | ratio |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        timed, counted = row["latency"], row["cpu"]
        both = counted["gateway"] + counted["server (through the gateway)"]
        lines.append(
            f"| {row['path']} | {row['era']} | {timed['direct']:.0f} | {timed['gateway']:.0f} "
            f"| {timed['gateway'] - timed['direct']:.0f} | {counted['server']:,.0f} | {both:,.0f} "
            f"| {both / counted['server']:.2f}x |"
        )
    for row in rows:
        if "functions" in row:
            lines.append(f"\n{row['path']}, {row['era']}: the gateway's toolwire functions by own time (µs per call,")
            lines.append("under cProfile, which slows them: compare them with each other), own and cumulative")
            for function in row["functions"]:
                lines.append(f"{function['own_us']:8.1f} {function['cumulative_us']:8.1f}  {function['name']}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, help=f"N for the instructions: N and 2N calls (default {DEFAULT_CALLS})")
    parser.add_argument("--latency-calls", type=int, default=DEFAULT_LATENCY_CALLS, help="M calls timed")
    parser.add_argument("--only", choices=("stdio", "http"), help="one transport only")
    parser.add_argument("--era", choices=(LEGACY, MODERN), default=MODERN, help="the protocol version")
    parser.add_argument("--functions", type=int, default=0, help="profile the gateway: its K costliest functions")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    args = parser.parse_args()
    callgrind.prepare()
    rows = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        for path in [args.only] if args.only else ["stdio", "http"]:
            row: dict[str, Any] = {"path": path, "era": args.era}
            row["latency"] = latency(path, args.era, args.latency_calls, Path(folder))
            print(f"{path}: latency {row['latency']}", file=sys.stderr)
            row["cpu"] = cpu(path, args.era, args.calls or DEFAULT_CALLS[path], Path(folder))
            if args.functions:
                row["functions"] = profile(path, args.era, args.latency_calls, Path(folder), args.functions)
            print(f"{path}: instructions {row['cpu']}", file=sys.stderr)
            rows.append(row)
    if args.json:
        print(json.dumps({"commit": instructions.revision(), "rows": rows}, indent=2))
    else:
        print(f"commit {instructions.revision()}, {time.monotonic() - started:.0f} s\n")
        print(report(rows))


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
