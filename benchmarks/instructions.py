"""Instructions per ``tools/call``, counted under callgrind: the yardstick of changes to the core.

    python benchmarks/instructions.py [--calls N] [--only stdio|http] [--json] [--functions K] [--objects]

Timing on a shared host swings by tens of per cent; the instructions a process executes,
counted by ``valgrind --tool=callgrind``, are the same run after run. Each path below runs
in a child process under callgrind twice, with N and with 2N calls of the benchmarks' ``echo``
tool (``async def echo(text: str) -> str``); the difference over N is the count per call,
the start-up and the shutdown left out. Both protocol eras: a 2025-11-25 session (its
handshake done before the calls), and stateless 2026-07-28 requests carrying ``_meta``.

- ``stdio``: the stdio server's session in process. ``echo_server.py``'s server and a
  ``ServerSession`` on the event loop the stdio server runs (uvloop when installed), fed
  bursts of 64 newline-delimited calls as the stdio transport feeds what it reads (one
  ``feed`` per read); each burst's 64 answers are awaited before the next. It counts the
  protocol core, the dispatch, the validation, the tool and the encoded answer, without the
  pipes' system calls. N is rounded down to whole bursts.
- ``http``: ``http_echo_server.py`` (toolwire's own HTTP server, the default runner) in a
  process of its own under callgrind, on a real socket; this process is the client, with
  one keep-alive connection and one request at a time, JSON answers (each checked). It
  counts the HTTP server, the ASGI application and all the above, in the server's process.

The toolwire counted is the one the children import: this tree's ``src`` with
``PYTHONPATH=src``, or the compiled build (``docs/performance.md``, "The compiled build")
installed in the venv whose Python runs this, or built in place in a copy of the tree whose
``src`` is on ``PYTHONPATH``. The first line of the results says which build it was.

``--functions K`` lists, per path and era, the K functions with the most instructions per
call (their own, the start-up left out), from ``callgrind_annotate``; ``--objects`` adds them
up by the file their code is in: the interpreter (``python3.11``), the compiled modules
(``toolwire__mypyc``), uvloop, orjson, httptools, the C library.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import callgrind
import http_load

from toolwire.build import build_name

LEGACY, MODERN = http_load.LEGACY, http_load.MODERN
ERAS = (LEGACY, MODERN)
BURST = 64
#: The default N: the whole run (8 runs under callgrind) takes about 1.5 minutes here.
DEFAULT_CALLS = {"stdio": 4096, "http": 1000}

INITIALIZE = http_load.INITIALIZE + b"\n"
INITIALIZED = http_load.INITIALIZED + b"\n"


# -- stdio: the child ------------------------------------------------------------------------


def stdio_burst(era: str) -> bytes:
    """64 calls of ``echo``, ids 1 to 64, one per line (a burst may reuse the ids of the last:
    they are no longer in flight)."""
    meta = http_load.MODERN_META if era == MODERN else b""
    template = http_load.CALL % {b"tool": b"echo", b"meta": meta}
    return b"".join(template % id + b"\n" for id in range(1, BURST + 1))


def check_stdio(era: str, answers: bytes) -> None:
    """A thorough look at one burst's answers (the first: the others must equal it)."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": "hello"}]}
    if era == MODERN:
        result["resultType"] = "complete"
    lines = answers.splitlines()
    for id, line in enumerate(lines, 1):
        message = json.loads(line)
        if era == MODERN:
            message.get("result", {}).pop("_meta", None)
        if message != {"jsonrpc": "2.0", "id": id, "result": result}:
            raise SystemExit(f"unexpected answer over stdio: {line[:300]!r}")
    if len(lines) != BURST:
        raise SystemExit(f"{len(lines)} answers over stdio to a burst of {BURST}")


async def serve_stdio(era: str, bursts: int) -> None:
    """Feed ``bursts`` bursts to a session of the stdio benchmark's server, one after the other."""
    from echo_server import server

    from toolwire.server.session import ServerSession

    await server.start()
    answers: list[bytes] = []
    session = ServerSession(server, server.connection(), answers.append)
    if era == LEGACY:
        session.feed(INITIALIZE + INITIALIZED)
        while not answers:
            await asyncio.sleep(0)
        if b'"serverInfo"' not in answers[0]:
            raise SystemExit(f"unexpected initialize answer: {answers[0][:300]!r}")
        answers.clear()
    burst = stdio_burst(era)
    first = b""
    for _ in range(bursts):
        session.feed(burst)
        while len(answers) < BURST:
            await asyncio.sleep(0)
        got = b"".join(answers)
        answers.clear()
        if not first:
            check_stdio(era, got)
            first = got
        elif got != first:
            raise SystemExit(f"an answer changed over stdio: {got[:300]!r}")
    await session.close()
    await server.stop()


def stdio_child(era: str, bursts: int) -> None:
    from toolwire.transports.stdio import event_loop_runner

    event_loop_runner()(serve_stdio(era, bursts))


def count_stdio(era: str, bursts: int, folder: Path) -> tuple[int, Path]:
    out = folder / f"callgrind.stdio.{era}.{bursts}"
    return callgrind.count(out, [__file__, "--child", era, str(bursts)]), out


# -- http: a server process, this process its client -----------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Client:
    """One keep-alive connection, one request at a time, raw bytes."""

    def __init__(self, port: int, process: subprocess.Popen[bytes], wait: float = 300.0) -> None:
        deadline = time.monotonic() + wait  # start-up under callgrind takes a while
        while True:
            if process.poll() is not None:
                raise SystemExit(f"the server exited before listening (exit code {process.returncode})")
            try:
                self.socket = socket.create_connection(("127.0.0.1", port), timeout=120)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"the server did not listen on port {port} within {wait:g} s") from None
                time.sleep(0.1)
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def send(self, request: bytes) -> tuple[int, bytes, bytes]:
        self.socket.sendall(request)
        while (response := http_load.parse(self.buffer)) is None:
            chunk = self.socket.recv(1 << 16)
            if not chunk:
                raise SystemExit("the server closed the connection")
            self.buffer += chunk
        status, head, body, used = response
        self.buffer = self.buffer[used:]
        return status, head, body

    def close(self) -> None:
        self.socket.close()


def http_calls(client: Client, case: http_load.Case, calls: int) -> None:
    """Open a session (2025-11-25), make ``calls`` calls, each answer checked, end the session."""
    session = None
    if case.legacy:
        status, head, body = client.send(case.head(None) % len(http_load.INITIALIZE) + http_load.INITIALIZE)
        session = http_load.header(head, b"mcp-session-id")
        if status != 200 or session is None:
            raise SystemExit(f"initialize: {status} {head[:300]!r} {body[:300]!r}")
        status, _, body = client.send(case.head(session) % len(http_load.INITIALIZED) + http_load.INITIALIZED)
        if status != 202:
            raise SystemExit(f"notifications/initialized: {status} {body[:300]!r}")
    head = case.head(session)
    for id in range(1, calls + 1):
        body = case.call % id
        status, _, answer = client.send(head % len(body) + body)
        try:
            case.check(status, answer, id)
        except http_load.BadAnswer as exc:
            raise SystemExit(str(exc)) from None
    if session is not None:
        request = head.replace(b"POST ", b"DELETE ", 1) % 0
        status, _, body = client.send(request)
        if status != 200:
            raise SystemExit(f"DELETE: {status} {body[:300]!r}")


def count_http(era: str, calls: int, folder: Path) -> tuple[int, Path]:
    """The instructions of the HTTP server's process over its life, answering ``calls`` calls."""
    out = folder / f"callgrind.http.{era}.{calls}"
    port = free_port()
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            callgrind.command(out, ["benchmarks/http_echo_server.py", str(port)]),
            env=callgrind.environment(),
            cwd=callgrind.ROOT,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
        try:
            client = Client(port, process)
            try:
                http_calls(client, http_load.Case("legacy_json" if era == LEGACY else "modern", port), calls)
            finally:
                client.close()
            process.send_signal(signal.SIGTERM)
            code = process.wait(300)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        if code != 0:
            log.seek(0)
            raise SystemExit(f"the HTTP server exited with {code}:\n{log.read().decode(errors='replace')[-3000:]}")
    return callgrind.total(out), out


# -- the run ---------------------------------------------------------------------------------


def measure(path: str, era: str, calls: int, folder: Path, functions: int, objects: bool) -> dict[str, Any]:
    """One path and era: its two runs, the count per call and (``functions``, ``objects``)
    where it goes."""
    started = time.monotonic()
    if path == "stdio":
        bursts = max(calls // BURST, 1)
        calls = bursts * BURST
        small, small_file = count_stdio(era, bursts, folder)
        large, large_file = count_stdio(era, 2 * bursts, folder)
    else:
        small, small_file = count_http(era, calls, folder)
        large, large_file = count_http(era, 2 * calls, folder)
    row: dict[str, Any] = {
        "path": path,
        "era": era,
        "calls": calls,
        "instructions_per_call": (large - small) / calls,
        "instructions": [small, large],
        "seconds": round(time.monotonic() - started, 1),
    }
    own = callgrind.per_function_difference(small_file, large_file) if functions or objects else {}
    if functions:
        top = sorted(own.items(), key=lambda item: -item[1])[:functions]
        row["functions"] = [{"name": name, "per_call": difference / calls} for name, difference in top]
    if objects:
        by_object: dict[str, int] = {}
        for name, difference in own.items():
            # callgrind_annotate names a function's file in brackets, though not always (the garbage
            # collector's and some of the interpreter's own, mostly)
            where = name.rsplit(" [", 1)[1].rstrip("]").split("/")[-1] if name.endswith("]") else "(file not named)"
            by_object[where] = by_object.get(where, 0) + difference
        top = sorted(by_object.items(), key=lambda item: -item[1])
        row["objects"] = [{"name": name, "per_call": difference / calls} for name, difference in top]
    return row


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| path | era | instructions per call | N |", "|---|---|---|---|"]
    lines += [f"| {r['path']} | {r['era']} | {r['instructions_per_call']:,.0f} | {r['calls']:,} |" for r in rows]
    for row in rows:
        if "functions" in row:
            lines.append(f"\n{row['path']}, {row['era']}: the functions with the most instructions per call")
            for function in row["functions"]:
                name = function["name"].rsplit(" [", 1)[0].split("/")[-1]
                lines.append(f"{function['per_call']:12,.0f} {name}")
        if "objects" in row:
            lines.append(f"\n{row['path']}, {row['era']}: instructions per call by the file their code is in")
            lines += [
                f"{found['per_call']:12,.0f} {found['name']}" for found in row["objects"] if found["per_call"] >= 50
            ]
    return "\n".join(lines)


def revision() -> str:
    """The commit counted, with ``+changes`` when ``src`` differs from it."""
    git = ["git", "-C", str(callgrind.ROOT)]
    commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    changed = subprocess.run([*git, "status", "--porcelain", "src"], capture_output=True, text=True).stdout.strip()
    return commit + ("+changes" if changed else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, help=f"N: each case runs N and 2N calls (default {DEFAULT_CALLS})")
    parser.add_argument("--only", choices=("stdio", "http"), help="one path only")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    parser.add_argument("--functions", type=int, default=0, help="list the K functions with most per call")
    parser.add_argument("--objects", action="store_true", help="add the instructions up by the file of their code")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        stdio_child(args.child[0], int(args.child[1]))
        return
    callgrind.prepare()
    paths = [args.only] if args.only else ["stdio", "http"]
    rows = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        for path in paths:
            for era in ERAS:
                calls = args.calls or DEFAULT_CALLS[path]
                row = measure(path, era, calls, Path(folder), args.functions, args.objects)
                rows.append(row)
                print(
                    f"{path} {era}: {row['instructions_per_call']:,.0f} instructions per call ({row['seconds']} s)",
                    file=sys.stderr,
                )
    commit, python, build = revision(), sys.version.split()[0], build_name()
    if args.json:
        print(json.dumps({"commit": commit, "python": python, "build": build, "rows": rows}, indent=2))
    else:
        seconds = time.monotonic() - started
        print(f"commit {commit}, Python {python}, toolwire {build}, {seconds:.0f} s\n")
        print(table(rows))


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
