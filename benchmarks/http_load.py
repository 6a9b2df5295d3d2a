"""The load generator of the HTTP benchmark: a process of its own, driven by ``http_run.py``.

    python benchmarks/http_load.py

Reads one command per line on stdin (JSON: ``port``, ``case``, ``seconds``, ``connections``,
``pid``) and answers each with one JSON line on stdout: calls made, seconds, the server's CPU
seconds over that time (``pid`` and its descendants, from ``/proc``), latency percentiles and
this process's own CPU share, or ``{"error": ...}``.

It is kept lean so that the servers are the bottleneck: uvloop, one asyncio protocol per
keep-alive connection, requests built from byte templates, and just enough HTTP/1.1 parsing
to find where a response ends (``Content-Length`` or chunked). Each connection sends its
calls one after the other until the time is up. Cases:

- ``legacy_json``: 2025-11-25. Each connection opens a session of its own (``initialize``,
  ``notifications/initialized``) before the clock starts and ends it with ``DELETE`` after;
  the calls carry ``Mcp-Session-Id`` and ``MCP-Protocol-Version``; answers are JSON.
- ``legacy_sse``: the same, calling ``echo_progress`` with a ``progressToken``: the answer
  is an SSE stream (the progress notification, then the result).
- ``modern``: 2026-07-28, stateless: every call carries ``_meta`` (protocol version, client
  capabilities) and the ``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers.
- ``modern_sse``: the same, calling ``echo_progress`` with a ``progressToken``.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import time
from typing import Any

import orjson
import uvloop

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
TICK = os.sysconf("SC_CLK_TCK")

HEAD = (
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%(port)d\r\nContent-Type: application/json\r\n"
    b"Accept: application/json, text/event-stream\r\n%(extra)sContent-Length: %%d\r\n\r\n"
)
CALL = (
    b'{"jsonrpc":"2.0","id":%%d,"method":"tools/call",'
    b'"params":{"name":"%(tool)s","arguments":{"text":"hello"}%(meta)s}}'
)
INITIALIZE = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
    }
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
MODERN_META = (
    b',"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
)
#: What every answer of a call holds (its text); checked on each, cheaply.
MARKER = b'"text":"hello"}]'


class BadAnswer(Exception):
    """A server answered something other than what the case expects."""


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` and its descendants (their threads included)."""
    total = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            with open(f"/proc/{current}/stat", "rb") as stat:
                fields = stat.read().rpartition(b")")[2].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children", "rb") as children:
                    pending += [int(child) for child in children.read().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return total / TICK


def parse(buffer: bytes) -> tuple[int, bytes, bytes, int] | None:
    """``(status, raw head, body, bytes used)`` of the first whole response in ``buffer``."""
    end = buffer.find(b"\r\n\r\n")
    if end < 0:
        return None
    head = buffer[:end]
    lowered = head.lower()
    start = end + 4
    at = lowered.find(b"\r\ncontent-length:")
    if at >= 0:
        stop = lowered.find(b"\r\n", at + 2)
        length = int(lowered[at + 17 : stop if stop >= 0 else len(lowered)])
        if len(buffer) < start + length:
            return None
        return int(buffer[9:12]), head, buffer[start : start + length], start + length
    if b"\r\ntransfer-encoding: chunked" not in lowered:
        raise BadAnswer(f"a response with neither Content-Length nor chunked encoding: {head[:300]!r}")
    chunks = []
    position = start
    while True:
        line_end = buffer.find(b"\r\n", position)
        if line_end < 0:
            return None
        size = int(buffer[position:line_end], 16)
        if size == 0:
            if len(buffer) < line_end + 4:
                return None
            return int(buffer[9:12]), head, b"".join(chunks), line_end + 4
        if len(buffer) < line_end + 4 + size:
            return None
        chunks.append(buffer[line_end + 2 : line_end + 2 + size])
        position = line_end + 4 + size


def header(head: bytes, name: bytes) -> bytes | None:
    """The value of header ``name`` (lower case) in a raw response head."""
    lowered = head.lower()
    at = lowered.find(b"\r\n" + name + b":")
    if at < 0:
        return None
    stop = head.find(b"\r\n", at + 2)
    return head[at + len(name) + 3 : stop if stop >= 0 else len(head)].strip()


class Connection(asyncio.Protocol):
    """One keep-alive connection, one request at a time."""

    def __init__(self) -> None:
        self.buffer = b""
        self.waiter: asyncio.Future[tuple[int, bytes, bytes]] | None = None
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        waiter = self.waiter
        try:
            response = parse(self.buffer)
        except (BadAnswer, ValueError) as exc:
            if waiter is not None and not waiter.done():
                waiter.set_exception(BadAnswer(str(exc)))
            return
        if response is not None and waiter is not None:
            status, head, body, used = response
            self.buffer = self.buffer[used:]
            self.waiter = None
            waiter.set_result((status, head, body))

    def connection_lost(self, exc: Exception | None) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_exception(ConnectionError(f"the server closed the connection ({exc})"))

    def send(self, data: bytes) -> asyncio.Future[tuple[int, bytes, bytes]]:
        assert self.transport is not None
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(data)
        return self.waiter


class Case:
    """The byte templates of one case, for a server on ``port``."""

    def __init__(self, name: str, port: int, authorization: str | None = None) -> None:
        self.name = name
        self.authorization = b"Authorization: Bearer %s\r\n" % authorization.encode() if authorization else b""
        self.legacy = not name.startswith("modern")
        self.sse = name.endswith("_sse")
        tool = b"echo_progress" if self.sse else b"echo"
        if self.legacy:
            meta = b',"_meta":{"progressToken":1}' if self.sse else b""
        else:
            meta = MODERN_META[:-1] + b',"progressToken":1}' if self.sse else MODERN_META
        self.call = CALL % {b"tool": tool, b"meta": meta}
        extra = b"MCP-Protocol-Version: %s\r\nMcp-Method: tools/call\r\nMcp-Name: %s\r\n" % (MODERN.encode(), tool)
        extra += self.authorization
        self.port = port
        self.modern_head = HEAD % {b"port": port, b"extra": extra}

    def head(self, session: bytes | None) -> bytes:
        if not self.legacy:
            return self.modern_head
        extra = b"MCP-Protocol-Version: %s\r\n" % LEGACY.encode() + self.authorization
        if session is not None:
            extra += b"Mcp-Session-Id: " + session + b"\r\n"
        return HEAD % {b"port": self.port, b"extra": extra}

    async def open(self, connection: Connection) -> bytes | None:
        """Open a session on ``connection`` (legacy cases); its id."""
        if not self.legacy:
            return None
        status, head, body = await connection.send(self.head(None) % len(INITIALIZE) + INITIALIZE)
        session = header(head, b"mcp-session-id")
        if status != 200 or session is None:
            raise BadAnswer(f"initialize: {status} {head[:300]!r} {body[:300]!r}")
        status, head, body = await connection.send(self.head(session) % len(INITIALIZED) + INITIALIZED)
        if status != 202:
            raise BadAnswer(f"notifications/initialized: {status} {body[:300]!r}")
        return session

    async def close(self, connection: Connection, session: bytes | None) -> None:
        if session is None:
            return
        request = self.head(session).replace(b"POST ", b"DELETE ", 1) % 0
        status, _, body = await connection.send(request)
        if status != 200:
            raise BadAnswer(f"DELETE: {status} {body[:300]!r}")

    def check(self, status: int, body: bytes, id: int) -> None:
        """A thorough look at one answer: the whole result, in JSON or in the stream's last event."""
        if status != 200:
            raise BadAnswer(f"{self.name}: HTTP {status}: {body[:300]!r}")
        if self.sse:
            events = [line[6:] for line in body.split(b"\n") if line.startswith(b"data: ")]
            if len(events) != 2 or b"notifications/progress" not in events[0]:
                raise BadAnswer(f"{self.name}: expected a progress event and the result: {body[:500]!r}")
            body = events[1]
        message = orjson.loads(body)
        result = {"content": [{"type": "text", "text": "hello"}]}
        if not self.legacy:
            result["resultType"] = "complete"
            message.get("result", {}).pop("_meta", None)
        if message != {"jsonrpc": "2.0", "id": id, "result": result}:
            raise BadAnswer(f"{self.name}: unexpected answer {body[:500]!r}")


async def calls(connection: Connection, case: Case, head: bytes, deadline: float, times: list[float]) -> None:
    """Calls one after the other until ``deadline``; their latencies go to ``times``."""
    template, clock, marker = case.call, time.perf_counter, MARKER
    id = 1
    now = clock()
    while now < deadline:
        body = template % id
        status, _, answer = await connection.send(head % len(body) + body)
        done = clock()
        times.append(done - now)
        if status != 200 or marker not in answer or b'"isError"' in answer:
            case.check(status, answer, id)
            raise BadAnswer(f"{case.name}: unexpected answer {answer[:300]!r}")
        now = done
        id += 1
    case.check(status, answer, id - 1)


def percentile(ordered: list[float], p: float) -> float:
    rank = (len(ordered) - 1) * p / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


async def measure(
    port: int, case_name: str, seconds: float, connections: int, pid: int, authorization: str | None = None
) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    case = Case(case_name, port, authorization)
    opened = [await loop.create_connection(Connection, "127.0.0.1", port) for _ in range(connections)]
    peers = [protocol for _, protocol in opened]
    try:
        sessions = [await case.open(peer) for peer in peers]
        heads = [case.head(session) for session in sessions]
        times: list[float] = []
        gc.collect()
        gc.disable()
        try:
            cpu_before, own_before = cpu_seconds(pid), time.process_time()
            start = time.perf_counter()
            deadline = start + seconds
            await asyncio.gather(
                *(calls(peer, case, head, deadline, times) for peer, head in zip(peers, heads, strict=True))
            )
            elapsed = time.perf_counter() - start
            cpu = cpu_seconds(pid) - cpu_before
            own = time.process_time() - own_before
        finally:
            gc.enable()
        for peer, session in zip(peers, sessions, strict=True):
            await case.close(peer, session)
    finally:
        for transport, _ in opened:
            transport.close()
    times.sort()
    return {
        "calls": len(times),
        "seconds": elapsed,
        "server_cpu": cpu,
        "client_cpu": own,
        "p50_ms": percentile(times, 50) * 1000,
        "p99_ms": percentile(times, 99) * 1000,
        "max_ms": times[-1] * 1000,
    }


def main() -> None:
    loop = uvloop.new_event_loop()
    asyncio.set_event_loop(loop)
    for line in sys.stdin.buffer:
        command = orjson.loads(line)
        try:
            answer = loop.run_until_complete(
                asyncio.wait_for(
                    measure(
                        command["port"],
                        command["case"],
                        command["seconds"],
                        command["connections"],
                        command["pid"],
                        command.get("authorization"),
                    ),
                    command["seconds"] + 30,
                )
            )
        except (BadAnswer, OSError, ConnectionError, TimeoutError, ValueError) as exc:
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.buffer.write(orjson.dumps(answer) + b"\n")
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
