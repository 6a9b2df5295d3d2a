"""Benchmark toolwire against a raw floor, side by side over real stdio pipes, in one run.

    python benchmarks/run.py [--quick] [--json PATH] [--docs | --no-docs] [--strict]

The floor (``floor_server.py``) is the least a Python MCP server can do: a blocking loop over
stdin lines with orjson. toolwire serves ``echo_server.py`` with ``python -m toolwire run``.
This driver is the client, in a process of its own: raw pipes, ``os.write`` / ``os.read``
with its own line splitting, requests encoded from byte templates. Both servers get the same
messages, in interleaved rounds (floor, toolwire, floor, toolwire, ...), so that noise on
the machine hits both alike; each figure is the median over the rounds, and the ratio
(toolwire / floor) is what carries over from machine to machine.

Metrics: sequential ``tools/call`` (one in flight), 64 calls in flight, ``tools/list`` of
1,000 tools (round-trip p50/p95), cold start (spawn to the ``initialize`` answer, and to the
``server/discover`` answer) and the servers' resident memory after the throughput runs, each
against its target; then rows without a target that explain them (time to the first
``tools/call`` answer, cold start with 1,000 tools, a sync tool, the floor making its answers
on a worker thread, the first ``tools/list``).

A full run rewrites the results section of ``docs/performance.md`` (``--no-docs``: leave it);
``--quick`` is a short run that leaves it alone unless ``--docs`` is given.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "performance.md"
START_MARK = "<!-- results:start (written by benchmarks/run.py) -->"
END_MARK = "<!-- results:end -->"

FLOOR = [sys.executable, "benchmarks/floor_server.py"]
TOOLWIRE = [sys.executable, "-m", "toolwire", "run", "benchmarks/echo_server.py"]
LIST_TOOLS = 1000

INITIALIZE = (
    orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "toolwire-bench", "version": "1"},
            },
        }
    )
    + b"\n"
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
DISCOVER = (
    orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "server/discover",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                }
            },
        }
    )
    + b"\n"
)

# The whole opening of a session, written at once: handshake, then one echo call.
FIRST_CALL = (
    INITIALIZE
    + INITIALIZED
    + b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}\n'
)

# Settings per mode: rounds of each throughput metric and seconds per round, tools/list
# samples per server, cold-start spawns per kind.
MODES: dict[str, dict[str, Any]] = {
    "full": {"rounds": 9, "seconds": 1.0, "warmup": 0.5, "list_samples": 400, "spawns": 25},
    "quick": {"rounds": 3, "seconds": 0.4, "warmup": 0.2, "list_samples": 200, "spawns": 15},
}


class BenchError(Exception):
    """The benchmark could not run (a server died, answered with an error, or hung)."""


def _timeout(signum: int, frame: Any) -> None:
    raise BenchError("timed out waiting for a server")


class Watchdog:
    """``with Watchdog(seconds):`` fails the block with :class:`BenchError` if it hangs
    (in the main thread: elsewhere it does nothing)."""

    def __init__(self, seconds: int) -> None:
        self.seconds = seconds
        self.armed = threading.current_thread() is threading.main_thread()

    def __enter__(self) -> None:
        if self.armed:
            signal.signal(signal.SIGALRM, _timeout)
            signal.alarm(self.seconds)

    def __exit__(self, *exc: object) -> None:
        if self.armed:
            signal.alarm(0)


def _environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("BENCH_TOOLS", None)
    env.update(extra or {})
    return env


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class Peer:
    """A server process on raw pipes, and the bytes read from it past the last full line."""

    def __init__(self, label: str, command: list[str], env: dict[str, str] | None = None) -> None:
        self.label = label
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by close())
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            bufsize=0,
            cwd=ROOT,
            env=_environment(env),
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.wfd = self.process.stdin.fileno()
        self.rfd = self.process.stdout.fileno()
        self.rest = b""
        self.next_id = 1

    def died(self) -> BenchError:
        self.stderr.seek(0)
        log = self.stderr.read().decode(errors="replace")[-3000:]
        return BenchError(f"{self.label}: the server closed its stdout (exit code {self.process.poll()})\n{log}")

    def read_line(self) -> bytes:
        buffer = self.rest
        end = buffer.find(b"\n")
        while end < 0:
            chunk = os.read(self.rfd, 1 << 16)
            if not chunk:
                raise self.died()
            start = len(buffer)
            buffer += chunk
            end = buffer.find(b"\n", start)
        self.rest = buffer[end + 1 :]
        return buffer[: end + 1]

    def request(self, data: bytes, id: int) -> Any:
        """Send one encoded request; its result (other lines, such as notifications, are skipped)."""
        _write_all(self.wfd, data)
        while True:
            message = orjson.loads(self.read_line())
            if message.get("id") == id:
                if "error" in message:
                    raise BenchError(f"{self.label}: {message['error']}")
                return message["result"]

    def handshake(self) -> None:
        with Watchdog(60):
            result = self.request(INITIALIZE, 0)
            if not isinstance(result, dict) or "serverInfo" not in result:
                raise BenchError(f"{self.label}: unexpected initialize result {result!r}")
            _write_all(self.wfd, INITIALIZED)

    def memory(self) -> tuple[float, float]:
        """(VmRSS, VmHWM) of the server process, in MiB."""
        fields = {}
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    fields[key] = int(value.split()[0]) / 1024
        return fields["VmRSS"], fields["VmHWM"]

    def close(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        self.stderr.close()


# -- throughput ------------------------------------------------------------------------------


def _call_template(tool: str) -> bytes:
    """A ``tools/call`` request missing only its id and the closing brace."""
    return (
        b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"'
        + tool.encode()
        + b'","arguments":{"text":"hello"}},"id":'
    )


def _check_echo(peer: Peer, line: bytes, id: int) -> None:
    message = orjson.loads(line)
    expected = {"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "hello"}]}}
    if message != expected:
        raise BenchError(f"{peer.label}: unexpected answer {line[:300]!r}")


def sequential(peer: Peer, tool: str, seconds: float) -> float:
    """Calls per second with one call in flight, for ``seconds``."""
    head = _call_template(tool)
    write, read, clock = os.write, os.read, time.perf_counter
    wfd, rfd = peer.wfd, peer.rfd
    id = peer.next_id
    first = id
    data = b""
    with Watchdog(int(seconds) + 30):
        start = clock()
        deadline = start + seconds
        while True:
            write(wfd, head + b"%d}\n" % id)
            data = read(rfd, 1 << 16)
            while data[-1:] != b"\n":
                more = read(rfd, 1 << 16)
                if not more:
                    raise peer.died()
                data += more
            if b'rror"' in data:  # "error" or "isError"
                raise BenchError(f"{peer.label}: error answer {data[:300]!r}")
            id += 1
            if clock() >= deadline:
                break
        elapsed = clock() - start
    peer.next_id = id
    _check_echo(peer, data, id - 1)
    return (id - first) / elapsed


def in_flight(peer: Peer, tool: str, seconds: float, depth: int = 64) -> float:
    """Calls per second with exactly ``depth`` calls outstanding, for ``seconds``.

    Each chunk read completes some responses (counted by their newlines); as many new
    requests are written at once, so ``depth`` are outstanding again. The rate counts the
    responses received until the deadline; the last ``depth`` are then drained.
    """
    head = _call_template(tool)
    write, read, clock = os.write, os.read, time.perf_counter
    wfd, rfd = peer.wfd, peer.rfd
    next_id = peer.next_id
    tail = b""
    with Watchdog(int(seconds) + 30):
        start = clock()
        deadline = start + seconds
        _write_all(wfd, b"".join([head + b"%d}\n" % i for i in range(next_id, next_id + depth)]))
        next_id += depth
        outstanding = depth
        received = 0
        while True:
            data = read(rfd, 1 << 16)
            if not data:
                raise peer.died()
            done = data.count(b"\n")
            if b'rror"' in data:
                raise BenchError(f"{peer.label}: error answer in {data[:300]!r}")
            received += done
            outstanding -= done
            tail = data
            if clock() >= deadline:
                break
            if done:
                batch = b"".join([head + b"%d}\n" % i for i in range(next_id, next_id + done)])
                if write(wfd, batch) != len(batch):
                    raise BenchError("short write to the server's stdin")
                next_id += done
                outstanding += done
        elapsed = clock() - start
        pending = tail
        while outstanding:
            data = read(rfd, 1 << 16)
            if not data:
                raise peer.died()
            outstanding -= data.count(b"\n")
            pending += data
    peer.next_id = next_id
    last = pending.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    message = orjson.loads(last)
    _check_echo(peer, last, message.get("id"))
    return received / elapsed


# -- tools/list ------------------------------------------------------------------------------


def list_latency(peer: Peer, samples: int) -> tuple[list[float], bytes]:
    """Round trips of ``tools/list`` (request written to the whole answer line read), in ms,
    and the last answer. Nothing is decoded while the clock runs."""
    write, read, clock = os.write, os.read, time.perf_counter
    wfd, rfd = peer.wfd, peer.rfd
    times: list[float] = []
    line = b""
    with Watchdog(120):
        for _ in range(samples):
            id = peer.next_id
            peer.next_id += 1
            request = b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}\n' % id
            chunks = []
            start = clock()
            write(wfd, request)
            while True:
                chunk = read(rfd, 1 << 18)
                if not chunk:
                    raise peer.died()
                chunks.append(chunk)
                if b"\n" in chunk:
                    break
            times.append((clock() - start) * 1000)
            line = b"".join(chunks)
    return times, line


def _check_list(peer: Peer, line: bytes) -> int:
    """The size of a ``tools/list`` answer, after checking it lists every tool."""
    message = orjson.loads(line)
    tools = message.get("result", {}).get("tools", [])
    if len(tools) != LIST_TOOLS + 3 or not line.endswith(b"}\n"):
        raise BenchError(f"{peer.label}: tools/list gave {len(tools)} tools, expected {LIST_TOOLS + 3}")
    return len(line)


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


# -- cold start ------------------------------------------------------------------------------


def cold_start(command: list[str], request: bytes, answers: int = 1, env: dict[str, str] | None = None) -> float:
    """Seconds from spawning ``command`` to reading ``answers`` answer lines to ``request``
    (messages sent at once, right after the spawn)."""
    environment = _environment(env)
    with Watchdog(60):
        start = time.perf_counter()
        process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
            cwd=ROOT,
            env=environment,
        )
        assert process.stdin is not None and process.stdout is not None
        _write_all(process.stdin.fileno(), request)
        data = b""
        while data.count(b"\n") < answers:
            chunk = os.read(process.stdout.fileno(), 1 << 16)
            if not chunk:
                raise BenchError(f"{command}: exited before answering (exit code {process.wait()})")
            data += chunk
        elapsed = time.perf_counter() - start
        process.stdin.close()
        process.wait()
        process.stdout.close()
    if data.count(b'"result"') != answers or b'rror"' in data:
        raise BenchError(f"{command}: unexpected answer {data[:300]!r}")
    return elapsed


# -- the run ---------------------------------------------------------------------------------


def client_rate(seconds: float, in_flight: int, protocol: str) -> float:
    """Calls/s of toolwire's Client (``client_driver.py``, a process of its own)."""
    driver = str(ROOT / "benchmarks" / "client_driver.py")
    command = [sys.executable, driver, "--seconds", str(seconds), "--in-flight", str(in_flight), "--protocol", protocol]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, env=_environment(), timeout=120)
    if done.returncode != 0:
        raise BenchError(f"client_driver.py failed: {done.stderr.decode(errors='replace')[-500:]}")
    rate: float = orjson.loads(done.stdout.splitlines()[-1])["calls_per_second"]
    return rate


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _rounds(
    rounds: int, peers: list[tuple[str, Peer, str]], measure: Callable[[Peer, str], float]
) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {key: [] for key, _, _ in peers}
    for _ in range(rounds):
        for key, peer, tool in peers:
            results[key].append(measure(peer, tool))
    return results


def run(mode: str) -> dict[str, Any]:
    settings = MODES[mode]
    rounds, seconds, warmup = settings["rounds"], settings["seconds"], settings["warmup"]
    began = time.perf_counter()
    _log("compiling bytecode (src, benchmarks) so that cold start does not measure compilation")
    subprocess.run([sys.executable, "-m", "compileall", "-q", "src", "benchmarks"], cwd=ROOT, check=True)

    results: dict[str, Any] = {"mode": mode, "settings": settings, "machine": _machine()}

    # Throughput: floor, the floor handing each answer to a worker thread (what two thread
    # wake-ups cost here), toolwire (async echo), toolwire (sync echo, on a worker thread) and
    # toolwire (sync echo with inline=True), each server in a process of its own.
    floor = Peer("floor", FLOOR)
    floor_sync = Peer("floor (answer made on a worker thread)", FLOOR)
    toolwire = Peer("toolwire", TOOLWIRE)
    toolwire_sync = Peer("toolwire (sync tool)", TOOLWIRE)
    toolwire_inline = Peer("toolwire (inline sync tool)", TOOLWIRE)
    peers = [
        ("floor", floor, "echo"),
        ("floor_sync", floor_sync, "echo_sync"),
        ("toolwire", toolwire, "echo"),
        ("toolwire_sync", toolwire_sync, "echo_sync"),
        ("toolwire_inline", toolwire_inline, "echo_inline"),
    ]
    try:
        for _, peer, _ in peers:
            peer.handshake()
        _log(f"sequential tools/call: {rounds} rounds of {seconds:g} s per server, after {warmup:g} s of warm-up")
        for _, peer, tool in peers:
            sequential(peer, tool, warmup)
        results["sequential"] = _rounds(rounds, peers, lambda peer, tool: sequential(peer, tool, seconds))
        _log(f"64 calls in flight: {rounds} rounds of {seconds:g} s per server")
        for _, peer, tool in peers:
            in_flight(peer, tool, warmup)
        results["in_flight"] = _rounds(rounds, peers, lambda peer, tool: in_flight(peer, tool, seconds))
        results["memory"] = {key: dict(zip(("rss", "hwm"), peer.memory(), strict=True)) for key, peer, _ in peers}
    finally:
        for _, peer, _ in peers:
            peer.close()

    # toolwire's Client against the same echo server: the raw client's figures above are
    # what a round trip costs without it. The Client speaks what the raw client speaks
    # (2025-11-25); its 2026-07-28 figures, whose requests carry _meta, are for information.
    _log(f"toolwire Client: {rounds} rounds of {seconds:g} s, sequential and 64 in flight, both eras")
    results["client"] = {"sequential": [], "in_flight": [], "sequential_modern": [], "in_flight_modern": []}
    for _ in range(rounds):
        results["client"]["sequential"].append(client_rate(seconds, 1, "2025-11-25"))
        results["client"]["in_flight"].append(client_rate(seconds, 64, "2025-11-25"))
        results["client"]["sequential_modern"].append(client_rate(seconds, 1, "2026-07-28"))
        results["client"]["in_flight_modern"].append(client_rate(seconds, 64, "2026-07-28"))

    # tools/list of 1,000 tools (plus echo and echo_sync), from servers of their own, in
    # alternating blocks. The first answer of each (toolwire renders and caches the page
    # then) is reported on its own and left out of the percentiles, with a short warm-up.
    samples = settings["list_samples"]
    _log(f"tools/list of {LIST_TOOLS} tools: {samples} samples per server, in alternating blocks")
    floor = Peer("floor", [*FLOOR, "--tools", str(LIST_TOOLS)])
    toolwire = Peer("toolwire", TOOLWIRE, {"BENCH_TOOLS": str(LIST_TOOLS)})
    listing: dict[str, Any] = {}
    try:
        floor.handshake()
        toolwire.handshake()
        times: dict[str, list[float]] = {"floor": [], "toolwire": []}
        for key, peer in (("floor", floor), ("toolwire", toolwire)):
            first, line = list_latency(peer, 1)
            listing[key] = {"first_ms": first[0], "bytes": _check_list(peer, line)}
            list_latency(peer, 20)
        blocks = 4
        for _ in range(blocks):
            for key, peer in (("floor", floor), ("toolwire", toolwire)):
                block, line = list_latency(peer, -(-samples // blocks))
                times[key] += block
                _check_list(peer, line)
        for key in times:
            listing[key].update(
                p50_ms=_percentile(times[key], 50), p95_ms=_percentile(times[key], 95), samples=len(times[key])
            )
        results["list"] = listing
        results["memory"]["floor_list"] = dict(zip(("rss", "hwm"), floor.memory(), strict=True))
        results["memory"]["toolwire_list"] = dict(zip(("rss", "hwm"), toolwire.memory(), strict=True))
    finally:
        floor.close()
        toolwire.close()

    # Cold start: spawn to the first answer, interleaved, one unmeasured spawn of each first.
    spawns = settings["spawns"]
    _log(f"cold start: {spawns} spawns of each kind, interleaved")
    kinds: dict[str, tuple[list[str], bytes, int, dict[str, str] | None]] = {
        "floor_initialize": (FLOOR, INITIALIZE, 1, None),
        "toolwire_initialize": (TOOLWIRE, INITIALIZE, 1, None),
        "floor_discover": (FLOOR, DISCOVER, 1, None),
        "toolwire_discover": (TOOLWIRE, DISCOVER, 1, None),
        "floor_first_call": (FLOOR, FIRST_CALL, 2, None),
        "toolwire_first_call": (TOOLWIRE, FIRST_CALL, 2, None),
        "floor_initialize_many": ([*FLOOR, "--tools", str(LIST_TOOLS)], INITIALIZE, 1, None),
        "toolwire_initialize_many": (TOOLWIRE, INITIALIZE, 1, {"BENCH_TOOLS": str(LIST_TOOLS)}),
    }
    for command, request, answers, env in kinds.values():
        cold_start(command, request, answers, env)
    cold: dict[str, list[float]] = {key: [] for key in kinds}
    for _ in range(spawns):
        for key, (command, request, answers, env) in kinds.items():
            cold[key].append(cold_start(command, request, answers, env) * 1000)
    results["cold_start_ms"] = cold
    # Ratios of each round's figures (toolwire / floor): the least noisy comparison.
    results["paired_ratios"] = {
        f"{metric}_{key}": [t / f for t, f in zip(results[metric][key], results[metric]["floor"], strict=True)]
        for metric in ("sequential", "in_flight")
        for key in ("toolwire", "toolwire_sync", "floor_sync")
    }
    # And of the plain-function tools to the same tool written as `async def`.
    results["paired_ratios"].update(
        {
            f"{metric}_{key}_to_async": [
                t / a for t, a in zip(results[metric][key], results[metric]["toolwire"], strict=True)
            ]
            for metric in ("sequential", "in_flight")
            for key in ("toolwire_sync", "toolwire_inline")
        }
    )
    results["duration_s"] = time.perf_counter() - began
    return results


def _machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    cpu = line.partition(":")[2].strip()
                    break
    except OSError:
        pass
    try:  # read-only git commands: the commit, and whether src/ differs from it
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()
        changed = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "src"], cwd=ROOT, check=False).returncode
        if commit and changed == 1:
            commit += " + uncommitted changes in src/"
    except OSError:
        commit = ""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "commit": commit or "unknown",
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
    }


# -- report ----------------------------------------------------------------------------------


def summarize(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The table's rows: metric, floor, toolwire, ratio (toolwire / floor), target, verdict.

    ``passed`` is ``None`` for rows that have no target (shown for information).
    """
    median = statistics.median
    seq = {key: median(values) for key, values in results["sequential"].items()}
    flight = {key: median(values) for key, values in results["in_flight"].items()}
    listing = results["list"]
    cold = {key: median(values) for key, values in results["cold_start_ms"].items()}
    memory = results["memory"]

    paired = results["paired_ratios"]

    def row(
        metric: str,
        unit: str,
        floor: float,
        toolwire: float,
        target: str,
        passed: bool | None,
        rounds: str | None = None,
    ) -> dict[str, Any]:
        ratio = toolwire / floor if floor else float("nan")
        spread = (min(paired[rounds]), max(paired[rounds])) if rounds else None
        return {
            "metric": metric,
            "unit": unit,
            "floor": floor,
            "toolwire": toolwire,
            "ratio": ratio,
            "round_ratios": spread,
            "target": target,
            "passed": passed,
        }

    client = {key: median(values) for key, values in results["client"].items()}
    seq_ratio = seq["toolwire"] / seq["floor"]
    flight_ratio = flight["toolwire"] / flight["floor"]
    init_ratio = cold["toolwire_initialize"] / cold["floor_initialize"]
    discover_ratio = cold["toolwire_discover"] / cold["floor_discover"]
    rss = memory["toolwire"]["rss"]
    return [
        row(
            "tools/call sequential",
            "calls/s",
            seq["floor"],
            seq["toolwire"],
            ">= 50% of floor",
            seq_ratio >= 0.5,
            "sequential_toolwire",
        ),
        row(
            "tools/call, 64 in flight",
            "calls/s",
            flight["floor"],
            flight["toolwire"],
            ">= 20,000/s and >= 50% of floor",
            flight["toolwire"] >= 20_000 and flight_ratio >= 0.5,
            "in_flight_toolwire",
        ),
        row(
            "toolwire Client, 2025-11-25, sequential (floor column: the raw client)",
            "calls/s",
            seq["toolwire"],
            client["sequential"],
            "Client adds <= 50% to a round trip",
            seq["toolwire"] / client["sequential"] <= 1.5,
        ),
        row(
            "toolwire Client, 2025-11-25, 64 in flight (floor column: the raw client)",
            "calls/s",
            flight["toolwire"],
            client["in_flight"],
            "Client adds <= 50% to a round trip",
            flight["toolwire"] / client["in_flight"] <= 1.5,
        ),
        row(
            "sync tool (worker thread), sequential (floor column: the same tool as async def)",
            "calls/s",
            seq["toolwire"],
            seq["toolwire_sync"],
            ">= 80% of async def",
            seq["toolwire_sync"] >= 0.8 * seq["toolwire"],
            "sequential_toolwire_sync_to_async",
        ),
        row(
            "sync tool (worker thread), 64 in flight (floor column: the same tool as async def)",
            "calls/s",
            flight["toolwire"],
            flight["toolwire_sync"],
            ">= 50% of async def",
            flight["toolwire_sync"] >= 0.5 * flight["toolwire"],
            "in_flight_toolwire_sync_to_async",
        ),
        row(
            f"tools/list {LIST_TOOLS:,} tools, p50",
            "ms",
            listing["floor"]["p50_ms"],
            listing["toolwire"]["p50_ms"],
            "<= 1 ms",
            listing["toolwire"]["p50_ms"] <= 1.0,
        ),
        row(
            f"tools/list {LIST_TOOLS:,} tools, p95",
            "ms",
            listing["floor"]["p95_ms"],
            listing["toolwire"]["p95_ms"],
            "",
            None,
        ),
        row(
            "cold start to initialize answer",
            "ms",
            cold["floor_initialize"],
            cold["toolwire_initialize"],
            "<= 3x floor",
            init_ratio <= 3.0,
        ),
        row(
            "cold start to server/discover answer",
            "ms",
            cold["floor_discover"],
            cold["toolwire_discover"],
            "<= 3x floor",
            discover_ratio <= 3.0,
        ),
        row(
            f"cold start to initialize answer, {LIST_TOOLS:,} tools (floor column: toolwire with one tool)",
            "ms",
            cold["toolwire_initialize"],
            cold["toolwire_initialize_many"],
            "<= 2x one tool",
            cold["toolwire_initialize_many"] <= 2 * cold["toolwire_initialize"],
        ),
        row("RSS after the throughput runs", "MiB", memory["floor"]["rss"], rss, "<= 30 MiB", rss <= 30.0),
        row(
            "cold start to first tools/call answer",
            "ms",
            cold["floor_first_call"],
            cold["toolwire_first_call"],
            "",
            None,
        ),
        row(
            f"cold start to initialize answer, {LIST_TOOLS:,} tools",
            "ms",
            cold["floor_initialize_many"],
            cold["toolwire_initialize_many"],
            "",
            None,
        ),
        row(
            "toolwire Client, 2026-07-28, sequential (floor column: the raw client, 2025-11-25)",
            "calls/s",
            seq["toolwire"],
            client["sequential_modern"],
            "",
            None,
        ),
        row(
            "toolwire Client, 2026-07-28, 64 in flight (floor column: the raw client, 2025-11-25)",
            "calls/s",
            flight["toolwire"],
            client["in_flight_modern"],
            "",
            None,
        ),
        row(
            "sync tool (worker thread), sequential",
            "calls/s",
            seq["floor"],
            seq["toolwire_sync"],
            "",
            None,
            "sequential_toolwire_sync",
        ),
        row(
            "sync tool (worker thread), 64 in flight",
            "calls/s",
            flight["floor"],
            flight["toolwire_sync"],
            "",
            None,
            "in_flight_toolwire_sync",
        ),
        row(
            "the floor making each answer on a worker thread, sequential (floor column: the floor)",
            "calls/s",
            seq["floor"],
            seq["floor_sync"],
            "",
            None,
            "sequential_floor_sync",
        ),
        row(
            "the floor making each answer on a worker thread, 64 in flight (floor column: the floor)",
            "calls/s",
            flight["floor"],
            flight["floor_sync"],
            "",
            None,
            "in_flight_floor_sync",
        ),
        row(
            "sync tool with inline=True, sequential (floor column: the same tool as async def)",
            "calls/s",
            seq["toolwire"],
            seq["toolwire_inline"],
            "",
            None,
            "sequential_toolwire_inline_to_async",
        ),
        row(
            "sync tool with inline=True, 64 in flight (floor column: the same tool as async def)",
            "calls/s",
            flight["toolwire"],
            flight["toolwire_inline"],
            "",
            None,
            "in_flight_toolwire_inline_to_async",
        ),
        row(
            f"tools/list {LIST_TOOLS:,} tools, first call",
            "ms",
            listing["floor"]["first_ms"],
            listing["toolwire"]["first_ms"],
            "",
            None,
        ),
        row(
            f"RSS with {LIST_TOOLS:,} tools",
            "MiB",
            memory["floor_list"]["rss"],
            memory["toolwire_list"]["rss"],
            "",
            None,
        ),
    ]


def _number(value: float, unit: str) -> str:
    if unit == "calls/s":
        return f"{value:,.0f}"
    if unit == "ms":
        return f"{value:.3f}" if value < 10 else f"{value:.1f}"
    return f"{value:.1f}"


def render(results: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """The results as a Markdown table with a line about the machine and the run."""
    lines = [
        "| metric | floor | toolwire | ratio toolwire / floor (range over rounds) | target | result |",
        "|---|---:|---:|---:|---|---|",
    ]
    for r in rows:
        verdict = "info" if r["passed"] is None else "PASS" if r["passed"] else "FAIL"
        ratio = f"{r['ratio']:.2f}x"
        if r["round_ratios"]:
            ratio += " ({:.2f}-{:.2f})".format(*r["round_ratios"])
        lines.append(
            f"| {r['metric']} ({r['unit']}) | {_number(r['floor'], r['unit'])} | "
            f"{_number(r['toolwire'], r['unit'])} | {ratio} | {r['target'] or '-'} | {verdict} |"
        )
    machine = results["machine"]
    settings = results["settings"]
    header = (
        f"{results['mode']} run, {machine['date']}, commit {machine['commit']}: {machine['cores']} cores "
        f"({machine['cpu']}), Python {machine['python']}, {machine['platform']}; "
        f"throughput: median of {settings['rounds']} interleaved rounds of {settings['seconds']:g} s; "
        f"tools/list: {results['list']['toolwire']['samples']} samples per server "
        f"({results['list']['toolwire']['bytes']:,}-byte answer); "
        f"cold start: median of {settings['spawns']} spawns; the run took {results['duration_s']:.0f} s."
    )
    return header + "\n\n" + "\n".join(lines) + "\n"


def update_docs(text: str, start_mark: str = START_MARK, end_mark: str = END_MARK) -> bool:
    """Put ``text`` between result markers of docs/performance.md; False if there are none."""
    try:
        document = DOCS.read_text()
    except FileNotFoundError:
        return False
    start = document.find(start_mark)
    end = document.find(end_mark)
    if start < 0 or end < start:
        return False
    DOCS.write_text(document[: start + len(start_mark)] + "\n" + text + document[end:])
    return True


def options(description: str, quick: str) -> argparse.ArgumentParser:
    """A benchmark's command line: ``--quick`` (a short run, ``quick`` says how long) and
    ``--docs`` / ``--no-docs``; see :func:`wants_docs`."""
    parser = argparse.ArgumentParser(description=description.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"a short run ({quick})")
    docs = parser.add_mutually_exclusive_group()
    docs.add_argument("--docs", action="store_true", help="write the results into docs/performance.md")
    docs.add_argument("--no-docs", action="store_true", help="leave docs/performance.md alone")
    return parser


def wants_docs(args: argparse.Namespace) -> bool:
    """A full run writes docs/performance.md unless ``--no-docs``; a quick one only with ``--docs``."""
    return bool(args.docs or (not args.quick and not args.no_docs))


def publish(
    text: str,
    results: dict[str, Any] | None,
    json_path: str | None,
    docs: bool,
    marks: tuple[str, str] = (START_MARK, END_MARK),
    what: str = "results",
) -> None:
    """Print the table; with ``json_path``, write ``results`` there as JSON; with ``docs``,
    put the table between ``marks`` in docs/performance.md (saying so when they are missing)."""
    print(text)
    if json_path and results is not None:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(json_path).write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))
        _log(f"results written to {json_path}")
    if docs:
        if update_docs(text, *marks):
            _log(f"results written to {DOCS.relative_to(ROOT)}")
        else:
            _log(f"{DOCS.relative_to(ROOT)} has no {what} markers: not updated")


def main(argv: list[str] | None = None) -> int:
    parser = options(__doc__, "about half a minute")
    parser.add_argument("--json", metavar="PATH", help="also write the results (with every sample) as JSON")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if a target is missed")
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full"
    try:
        results = run(mode)
    except BenchError as exc:
        print(f"benchmark failed: {exc}", file=sys.stderr)
        return 2
    rows = summarize(results)
    results["table"] = rows
    publish(render(results, rows), results, args.json, wants_docs(args))
    failed = [r["metric"] for r in rows if r["passed"] is False]
    if failed:
        _log("targets missed: " + "; ".join(failed))
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
