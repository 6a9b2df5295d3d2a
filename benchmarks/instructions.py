"""Instructions per ``tools/call``, counted under callgrind: the yardstick of changes to the core.

    python benchmarks/instructions.py [--calls N] [--only stdio|http|session] [--peers] [--compiled]
                                      [--tool echo|echo_inline|echo_sync] [--guards]
                                      [--json] [--functions K] [--objects]

Timing on a shared host swings by tens of per cent; the instructions a process executes,
counted by ``valgrind --tool=callgrind``, are the same run after run. Each server below runs
in a process of its own under callgrind twice, with N and with 2N calls of an ``echo`` tool
(toolwire's: ``async def echo(text: str) -> str``); the difference over N is the count per
call, the start-up, the handshake and the shutdown left out. This process is the client
(not counted). Both protocol eras: a 2025-11-25 session (``initialize``, then the calls),
and stateless 2026-07-28 requests carrying ``_meta`` (after a ``server/discover``).

- ``stdio``: the server reads its stdin and writes its stdout, real pipes; the client writes
  bursts of 64 calls (64 in flight) and reads each burst's 64 answers before the next.
  toolwire serves ``echo_server.py`` with ``python -m toolwire run``. N is rounded down to
  whole bursts.
- ``http``: Streamable HTTP on 127.0.0.1, one keep-alive HTTP/1.1 connection, one call at a
  time, JSON answers. toolwire serves ``http_echo_server.py`` (its own HTTP server, the
  default runner).
- ``session`` (not run unless asked): the stdio server's session in process, without pipes:
  ``echo_server.py``'s server and a ``ServerSession`` on the stdio server's event loop, fed
  the bursts as the stdio transport feeds what it reads. It counts the protocol core, the
  dispatch, the validation, the tool and the encoded answer, and nothing else.

Each path is counted against its **raw floor** in the same run: ``stdio_floor.py`` (a bare
asyncio + uvloop JSON-RPC loop) and ``http_floor.py`` (a bare ASGI app on uvicorn with
httptools and uvloop). ``--peers`` adds the official MCP SDK (``sdk_echo_server.py``, the
SDK's ``MCPServer``) and FastMCP (``fastmcp_echo_server.py``), each when it is installed
(slow: a few minutes each). Every answer is checked.

``--tool echo_inline`` or ``echo_sync`` counts toolwire's plain ``def`` tools instead (called
on the event loop, or on a worker thread); ``--guards`` serves ``guarded_echo_server.py``
(a timeout, a rate limit and an audit file flushed per record; stdio only).

The toolwire counted is the one the children import: this tree's ``src`` with
``PYTHONPATH=src``, or with ``--compiled`` the compiled build of this tree (``docs/performance.md``,
"The compiled build"), its wheel built in a temporary folder as ``scripts/compiled-check.sh``
builds it (a minute or two) and unpacked there for the children. The first line of the
results says which build it was.

``--functions K`` lists, per path and era, the K functions of toolwire's server with the most
instructions per call (their own, the start-up left out), from ``callgrind_annotate``;
``--objects`` adds them up by the file their code is in: the interpreter (``python3.11``),
the compiled modules (``toolwire__mypyc``), uvloop, orjson, httptools, the C library.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import IO, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import callgrind
import http_load

LEGACY, MODERN = http_load.LEGACY, http_load.MODERN
ERAS = (LEGACY, MODERN)
BURST = 64
#: The default N: the whole default run (16 runs under callgrind) takes about 4 minutes here.
DEFAULT_CALLS = {"stdio": 4096, "http": 1000, "session": 4096}
#: The peers are 15 to 60 times slower per call: fewer calls, the same method.
PEER_CALLS = {"stdio": 256, "http": 200}
PATHS = ("stdio", "http", "session")

INITIALIZE = http_load.INITIALIZE + b"\n"
INITIALIZED = http_load.INITIALIZED + b"\n"
DISCOVER = b'{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{' + http_load.MODERN_META[1:] + b"}}\n"

SERVERS = {
    ("stdio", "floor"): ["benchmarks/stdio_floor.py"],
    ("stdio", "toolwire"): ["-m", "toolwire", "run", "benchmarks/echo_server.py"],
    ("stdio", "sdk"): ["benchmarks/sdk_echo_server.py"],
    ("stdio", "fastmcp"): ["benchmarks/fastmcp_echo_server.py"],
    ("http", "floor"): ["benchmarks/http_floor.py"],
    ("http", "toolwire"): ["benchmarks/http_echo_server.py"],
    ("http", "sdk"): ["benchmarks/sdk_echo_server.py", "--http"],
    ("http", "fastmcp"): ["benchmarks/fastmcp_echo_server.py", "--http"],
}
GUARDED = ["-m", "toolwire", "run", "benchmarks/guarded_echo_server.py"]
NAMES = {"floor": "raw floor", "toolwire": "toolwire", "sdk": "official SDK", "fastmcp": "FastMCP"}
#: The peers ``--peers`` counts, each when its package is installed: server -> package.
PEERS = {"sdk": "mcp", "fastmcp": "fastmcp"}


def calls_template(era: str, tool: str) -> bytes:
    """A ``tools/call`` of ``tool`` with text ``hello``, its id left as ``%d``."""
    meta = http_load.MODERN_META if era == MODERN else b""
    return http_load.CALL % {b"tool": tool.encode(), b"meta": meta}


def check(body: bytes, id: int, where: str) -> None:
    """Exit unless ``body`` (JSON, or an SSE stream whose last event is the answer) answers
    call ``id`` with the text ``hello``."""
    if not body.startswith(b"{"):  # a stream: events, and comments (a server's pings, under callgrind's pace)
        body = [line for line in body.split(b"\n") if line.startswith(b"data:")][-1][5:]
    message = json.loads(body)
    result = message.get("result") or {}
    content = result.get("content") or [{}]
    if message.get("id") != id or content[0].get("text") != "hello" or result.get("isError"):
        raise SystemExit(f"unexpected answer over {where}: {body[:300]!r}")


# -- session: the child ----------------------------------------------------------------------


def stdio_burst(era: str, tool: str = "echo") -> bytes:
    """64 calls of ``tool``, ids 1 to 64, one per line (a burst may reuse the ids of the last:
    they are no longer in flight)."""
    template = calls_template(era, tool)
    return b"".join(template % id + b"\n" for id in range(1, BURST + 1))


def check_session(era: str, answers: bytes) -> None:
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
            raise SystemExit(f"unexpected answer in the session: {line[:300]!r}")
    if len(lines) != BURST:
        raise SystemExit(f"{len(lines)} answers in the session to a burst of {BURST}")


async def serve_session(era: str, bursts: int) -> None:
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
        while sum(written.count(b"\n") for written in answers) < BURST:  # a write may hold several
            await asyncio.sleep(0)
        got = b"".join(answers)
        answers.clear()
        if not first:
            check_session(era, got)
            first = got
        elif got != first:
            raise SystemExit(f"an answer changed in the session: {got[:300]!r}")
    await session.close()
    await server.stop()


def session_child(era: str, bursts: int) -> None:
    from toolwire.transports.stdio import event_loop_runner

    event_loop_runner()(serve_session(era, bursts))


def count_session(era: str, bursts: int, folder: Path) -> tuple[int, Path]:
    out = folder / f"callgrind.session.{era}.{bursts}"
    return callgrind.count(out, [__file__, "--child", era, str(bursts)]), out


# -- stdio: a server process on pipes, this process its client --------------------------------


class Pipes:
    """The client's ends of a server's stdin and stdout."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.stdin: IO[bytes] = process.stdin
        self.stdout = process.stdout.fileno()
        self.buffer = b""

    def ask(self, data: bytes, answers: int) -> list[bytes]:
        """Write ``data``; the next ``answers`` lines the server writes."""
        self.stdin.write(data)
        self.stdin.flush()
        while self.buffer.count(b"\n") < answers:
            chunk = os.read(self.stdout, 1 << 16)
            if not chunk:
                raise SystemExit(f"the server closed its stdout; it wrote: {self.buffer[-300:]!r}")
            self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n", answers)
        return lines


def stdio_calls(pipes: Pipes, era: str, tool: str, calls: int) -> None:
    """The handshake of ``era``, then ``calls`` calls in bursts of 64, each answer checked."""
    if era == LEGACY:
        (opened,) = pipes.ask(INITIALIZE + INITIALIZED, 1)
        expected = b'"serverInfo"'
    else:
        (opened,) = pipes.ask(DISCOVER, 1)
        expected = b'"supportedVersions"'
    if expected not in opened:
        raise SystemExit(f"unexpected answer to the handshake: {opened[:300]!r}")
    burst = stdio_burst(era, tool)
    for _ in range(calls // BURST):
        answers = {json.loads(line)["id"]: line for line in pipes.ask(burst, BURST)}
        for id in range(1, BURST + 1):
            check(answers.get(id, b"{}"), id, "stdio")


# -- http: a server process on a socket, this process its client -----------------------------


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


def http_calls(client: Client, era: str, tool: str, calls: int, port: int) -> None:
    """Open a session (2025-11-25), make ``calls`` calls, each answer checked, end the session."""
    case = http_load.Case("legacy_json" if era == LEGACY else "modern", port)
    session = None
    if case.legacy:
        status, head, body = client.send(case.head(None) % len(http_load.INITIALIZE) + http_load.INITIALIZE)
        session = http_load.header(head, b"mcp-session-id")
        if status != 200 or session is None:
            raise SystemExit(f"initialize: {status} {head[:300]!r} {body[:300]!r}")
        status, _, body = client.send(case.head(session) % len(http_load.INITIALIZED) + http_load.INITIALIZED)
        if status != 202:
            raise SystemExit(f"notifications/initialized: {status} {body[:300]!r}")
    head = case.head(session).replace(b"Mcp-Name: echo\r\n", b"Mcp-Name: " + tool.encode() + b"\r\n")
    template = calls_template(era, tool)
    for id in range(1, calls + 1):
        body = template % id
        status, _, answer = client.send(head % len(body) + body)
        if status != 200:
            raise SystemExit(f"HTTP {status}: {answer[:300]!r}")
        check(answer, id, "HTTP")
    if session is not None:
        status, _, body = client.send(head.replace(b"POST ", b"DELETE ", 1) % 0)
        if status >= 300:
            raise SystemExit(f"DELETE: {status} {body[:300]!r}")


# -- counting a server -----------------------------------------------------------------------


def server_arguments(path: str, server: str, guards: bool) -> list[str]:
    return GUARDED if guards and server == "toolwire" else SERVERS[path, server]


def count_server(path: str, server: str, era: str, calls: int, folder: Path, options: argparse.Namespace) -> Path:
    """Run ``server`` under callgrind, make ``calls`` calls of it over ``path``, stop it; its
    callgrind file."""
    out = folder / f"callgrind.{path}.{era}.{server}.{calls}"
    arguments = server_arguments(path, server, options.guards)
    port = free_port()
    if path == "http":
        arguments = [*arguments, str(port)]
    tool = options.tool if server == "toolwire" else "echo"
    environment = callgrind.environment()
    # the guarded server imports echo_server; its audit file is one of this run's
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [environment.get("PYTHONPATH"), "benchmarks"]))
    environment["BENCH_AUDIT_FILE"] = str(folder / f"audit.{era}.{calls}.jsonl")
    stdio = path == "stdio"
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            callgrind.command(out, arguments),
            env=environment,
            cwd=callgrind.ROOT,
            stdin=subprocess.PIPE if stdio else subprocess.DEVNULL,
            stdout=subprocess.PIPE if stdio else log,
            stderr=log,
        )
        try:
            if stdio:
                stdio_calls(Pipes(process), era, tool, calls)
                assert process.stdin is not None
                process.stdin.close()  # end of input: the server exits
            else:
                client = Client(port, process)
                try:
                    http_calls(client, era, tool, calls, port)
                finally:
                    client.close()
                process.send_signal(signal.SIGTERM)
            code = process.wait(300)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        # uvicorn ends by raising the SIGTERM it handled again: stopped as asked
        if code not in (0, -signal.SIGTERM):
            log.seek(0)
            raise SystemExit(f"{server} over {path} exited with {code}:\n{log.read().decode(errors='replace')[-3000:]}")
    return out


def build_compiled(folder: Path) -> Path:
    """This tree's compiled wheel, built from a copy of it (as ``scripts/compiled-check.sh``
    builds it) and unpacked in ``folder``: the folder to put on ``PYTHONPATH``. Exits if
    nothing was compiled (no C compiler)."""
    tree = folder / "tree"
    tree.mkdir()
    for name in ("pyproject.toml", "README.md", "setup.py"):
        shutil.copy(callgrind.ROOT / name, tree)
    shutil.copytree(callgrind.ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    command = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "--wheel-dir",
        str(folder / "dist"),
        str(tree),
    ]
    subprocess.run(command, env={**os.environ, "TOOLWIRE_COMPILE": "1"}, check=True)
    (wheel,) = (folder / "dist").glob("toolwire-*.whl")
    if wheel.name.endswith("-none-any.whl"):
        raise SystemExit(f"{wheel.name} is pure Python: nothing was compiled")
    with zipfile.ZipFile(wheel) as unpacking:
        unpacking.extractall(folder / "unpacked")
    return folder / "unpacked"


def counted_build() -> str:
    """Which toolwire build the children import."""
    command = [sys.executable, "-c", "from toolwire.build import build_name; print(build_name())"]
    found = subprocess.run(command, env=callgrind.environment(), cwd=callgrind.ROOT, capture_output=True, text=True)
    return found.stdout.strip() or f"unknown ({found.stderr.strip()[-300:]})"


# -- the run ---------------------------------------------------------------------------------


def per_call(path: str, server: str, era: str, calls: int, folder: Path, options: argparse.Namespace) -> dict[str, Any]:
    """One server on one path in one era: its two runs (N and 2N calls) and the count per call."""
    started = time.monotonic()
    if path == "session":
        bursts = calls // BURST
        small_count, small = count_session(era, bursts, folder)
        large_count, large = count_session(era, 2 * bursts, folder)
    else:
        small = count_server(path, server, era, calls, folder, options)
        large = count_server(path, server, era, 2 * calls, folder, options)
        small_count, large_count = callgrind.total(small), callgrind.total(large)
    figure: dict[str, Any] = {
        "calls": calls,
        "instructions_per_call": (large_count - small_count) / calls,
        "instructions": [small_count, large_count],
        "seconds": round(time.monotonic() - started, 1),
    }
    if server == "toolwire" and (options.functions or options.objects):
        figure.update(where_they_go(callgrind.per_function_difference(small, large), calls, options))
    return figure


def where_they_go(own: dict[str, int], calls: int, options: argparse.Namespace) -> dict[str, Any]:
    """The ``functions`` with the most instructions per call, and (``objects``) the sums by file."""
    found: dict[str, Any] = {}
    if options.functions:
        top = sorted(own.items(), key=lambda item: -item[1])[: options.functions]
        found["functions"] = [{"name": name, "per_call": difference / calls} for name, difference in top]
    if options.objects:
        by_object: dict[str, int] = {}
        for name, difference in own.items():
            # callgrind_annotate names a function's file in brackets, though not always (the garbage
            # collector's and some of the interpreter's own, mostly)
            where = name.rsplit(" [", 1)[1].rstrip("]").split("/")[-1] if name.endswith("]") else "(file not named)"
            by_object[where] = by_object.get(where, 0) + difference
        top = sorted(by_object.items(), key=lambda item: -item[1])
        found["objects"] = [{"name": name, "per_call": difference / calls} for name, difference in top]
    return found


def servers_of(path: str, peers: bool) -> list[str]:
    if path == "session":
        return ["toolwire"]
    servers = ["floor", "toolwire"]
    if peers:
        servers += [server for server, package in PEERS.items() if importlib.util.find_spec(package) is not None]
    return servers


def table(rows: list[dict[str, Any]]) -> str:
    servers = [server for server in NAMES if any(server in row for row in rows)]
    titles = []
    for server in servers:
        titles.append(NAMES[server])
        if server != "floor":
            titles.append("/ floor")
    lines = ["| path | era | " + " | ".join(titles) + " |", "|---|---|" + "---:|" * len(titles)]
    for row in rows:
        cells = []
        floor = row.get("floor", {}).get("instructions_per_call")
        for server in servers:
            count = row.get(server, {}).get("instructions_per_call")
            cells.append(f"{count:,.0f}" if count is not None else "")
            if server != "floor":
                cells.append(f"{count / floor:.2f}x" if count is not None and floor else "")
        lines.append(f"| {row['path']} | {row['era']} | " + " | ".join(cells) + " |")
    for row in rows:
        toolwire = row.get("toolwire", {})
        if "functions" in toolwire:
            lines.append(f"\n{row['path']}, {row['era']}: the functions with the most instructions per call")
            for function in toolwire["functions"]:
                name = function["name"].rsplit(" [", 1)[0].split("/")[-1]
                lines.append(f"{function['per_call']:12,.0f} {name}")
        if "objects" in toolwire:
            lines.append(f"\n{row['path']}, {row['era']}: instructions per call by the file their code is in")
            lines += [
                f"{found['per_call']:12,.0f} {found['name']}"
                for found in toolwire["objects"]
                if found["per_call"] >= 50
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
    parser.add_argument("--only", choices=PATHS, help="one path only (session: only so)")
    parser.add_argument("--peers", action="store_true", help="also the official SDK and FastMCP, if installed (slow)")
    parser.add_argument("--compiled", action="store_true", help="build this tree's compiled wheel; count it")
    parser.add_argument("--tool", choices=("echo", "echo_inline", "echo_sync"), default="echo", help="toolwire's tool")
    parser.add_argument("--guards", action="store_true", help="toolwire with guards on (stdio)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    parser.add_argument("--functions", type=int, default=0, help="list the K functions with most per call")
    parser.add_argument("--objects", action="store_true", help="add the instructions up by the file of their code")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        session_child(args.child[0], int(args.child[1]))
        return
    if args.guards and args.only != "stdio":
        parser.error("--guards is counted over stdio only: add --only stdio")
    if args.only == "session" and (args.guards or args.tool != "echo"):
        parser.error("the session counts echo_server.py's echo only")
    callgrind.prepare()
    paths = [args.only] if args.only else ["stdio", "http"]
    rows = []
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        if args.compiled:
            os.environ["PYTHONPATH"] = str(build_compiled(Path(folder)))
        build = counted_build()
        for path in paths:
            for era in ERAS:
                row: dict[str, Any] = {"path": path, "era": era}
                for server in servers_of(path, args.peers):
                    calls = args.calls or (PEER_CALLS if server in PEERS else DEFAULT_CALLS)[path]
                    if path != "http":
                        calls = max(calls // BURST, 1) * BURST
                    row[server] = per_call(path, server, era, calls, Path(folder), args)
                    figure = row[server]["instructions_per_call"]
                    seconds = row[server]["seconds"]
                    print(f"{path} {era} {server}: {figure:,.0f} instructions per call ({seconds} s)", file=sys.stderr)
                rows.append(row)
    commit, python = revision(), sys.version.split()[0]
    tool = args.tool + (", guards on" if args.guards else "")
    if args.json:
        print(json.dumps({"commit": commit, "python": python, "build": build, "tool": tool, "rows": rows}, indent=2))
    else:
        seconds = time.monotonic() - started
        print(f"commit {commit}, Python {python}, toolwire {build}, tool {tool}, {seconds:.0f} s\n")
        print(table(rows))


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
