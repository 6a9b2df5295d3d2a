"""One HTTP client stack calling ``echo`` over Streamable HTTP: a process of its own, run by
``http_client_run.py``.

    python benchmarks/http_client_driver.py STACK PORT [--seconds 1] [--in-flight 64] [--era legacy|modern]
                                            [--server-pid PID]

Calls ``tools/call`` of ``echo`` on ``http://127.0.0.1:PORT/mcp`` for the given time, one call
at a time or with N calls in flight (N tasks, each calling in a loop), after a warm-up, and
prints one line of JSON: ``{"calls_per_second": ..., "cpu_per_call_us": ...,
"server_cpu_per_call_us": ...}`` (this process's CPU time per call, and that of the server
process given by ``--server-pid``, from ``/proc``, 0 without it). Stacks:

- ``raw``: ``http_load.py``'s hand-written HTTP/1.1 on asyncio protocols, one keep-alive
  connection per call in flight: the floor. ``--era legacy`` opens a 2025-11-25 session per
  connection first; ``modern`` sends 2026-07-28 stateless requests.
- ``client``: toolwire's ``Client`` on the URL, speaking the era's version
  (2025-11-25 or 2026-07-28). ``client-httpx``: the same with the transport's HTTP as it was
  before toolwire had an HTTP client of its own (httpx's ``AsyncClient`` on its default
  transport); ``client-no-direct``: httpx's ``AsyncClient`` on toolwire's transport, the way
  requests go when httpx's client layer has work to do (``auth=``, cookies, redirects).
- ``httpx``, ``httpx-tuned``, ``httpcore``, ``aiohttp``, ``lean``, ``httpx-lean``: the same
  2026-07-28 POST (body and headers as the Client sends them) made bare with that stack, the
  answer read whole: httpx as the Client used it (``stream`` + ``aread``, redirects followed);
  httpx without environment lookups and with a larger keep-alive pool; httpcore's connection
  pool; aiohttp (when installed); toolwire's HTTP/1.1 client on httptools; and httpx's
  ``AsyncClient`` over that client as its transport.

Every stack runs on uvloop, as toolwire's own processes do.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
import uvloop

sys.path.insert(0, str(Path(__file__).resolve().parent))

import http_load  # the raw client's connection and byte templates, next to this file

WARMUP = 0.3
BODY = orjson.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "echo",
            "arguments": {"text": "hello"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
)
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "echo",
}
Call = Callable[[], Awaitable[None]]


def check(status: int, body: bytes) -> None:
    if status != 200 or http_load.MARKER not in body:
        raise http_load.BadAnswer(f"HTTP {status}: {body[:300]!r}")


#: The server's process id, whose CPU time is measured too (0: none).
SERVER = 0


async def timed(calls: list[Call], seconds: float) -> tuple[float, float, float]:
    """Run each of ``calls`` in a loop of its own (after a warm-up): calls/s, then this
    process's and the server's CPU µs per call."""
    count = 0

    async def loop(call: Call, deadline: float) -> None:
        nonlocal count
        while time.perf_counter() < deadline:
            await call()
            count += 1

    await asyncio.gather(*(loop(call, time.perf_counter() + WARMUP) for call in calls))
    count = 0
    server = http_load.cpu_seconds(SERVER) if SERVER else 0.0
    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(loop(call, started + seconds) for call in calls))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    server = http_load.cpu_seconds(SERVER) - server if SERVER else 0.0
    return count / elapsed, cpu / count * 1e6, server / count * 1e6


async def raw(url: str, port: int, era: str, n: int, seconds: float) -> tuple[float, float, float]:
    loop = asyncio.get_running_loop()
    case = http_load.Case("legacy_json" if era == "legacy" else "modern", port)
    opened = [await loop.create_connection(http_load.Connection, "127.0.0.1", port) for _ in range(n)]
    try:
        peers = [protocol for _, protocol in opened]
        sessions = [await case.open(peer) for peer in peers]

        def caller(peer: http_load.Connection, session: bytes | None) -> Call:
            head = case.head(session)

            async def call() -> None:
                body = case.call % 1
                status, _, answer = await peer.send(head % len(body) + body)
                check(status, answer)

            return call

        result = await timed([caller(peer, session) for peer, session in zip(peers, sessions, strict=True)], seconds)
        for peer, session in zip(peers, sessions, strict=True):
            await case.close(peer, session)
        return result
    finally:
        for transport, _ in opened:
            transport.close()


def transport(stack: str, url: str) -> Any:
    """The Client's target for ``stack``: the URL, or a transport whose HTTP is set up otherwise."""
    import httpx

    from toolwire.client.http import StreamableHttpTransport

    class HttpxOnly(StreamableHttpTransport):
        async def start(self) -> None:
            self._http = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout, read=None), follow_redirects=True, auth=self.auth
            )

    class NoDirect(StreamableHttpTransport):
        async def start(self) -> None:
            await super().start()
            self._direct = None

    return {"client": url, "client-httpx": HttpxOnly(url), "client-no-direct": NoDirect(url)}[stack]


async def client(stack: str, url: str, era: str, n: int, seconds: float) -> tuple[float, float, float]:
    from toolwire.client import Client

    target = transport(stack, url)
    async with Client(target, protocol="2025-11-25" if era == "legacy" else "2026-07-28") as connection:
        await connection.list_tools()

        async def call() -> None:
            result = await connection.call_tool("echo", {"text": "hello"})
            if result.is_error:
                raise http_load.BadAnswer(str(result))

        return await timed([call] * n, seconds)


async def bare(stack: str, url: str, n: int, seconds: float) -> tuple[float, float, float]:
    """The 2026-07-28 POST made with ``stack`` (see the module's docstring)."""
    call: Call
    if stack in ("httpx", "httpx-tuned", "httpx-lean"):
        import httpx

        if stack == "httpx":
            session = httpx.AsyncClient(timeout=httpx.Timeout(30, read=None), follow_redirects=True)
        elif stack == "httpx-tuned":
            limits = httpx.Limits(max_connections=100, max_keepalive_connections=100)
            session = httpx.AsyncClient(timeout=httpx.Timeout(30, read=None), limits=limits, trust_env=False)
        else:
            from toolwire.client.http11 import Http11Transport

            session = httpx.AsyncClient(
                timeout=httpx.Timeout(30, read=None), follow_redirects=True, transport=Http11Transport()
            )

        async def call() -> None:
            async with session.stream("POST", url, content=BODY, headers=HEADERS) as reply:
                check(reply.status_code, await reply.aread())

        async with session:
            return await timed([call] * n, seconds)
    if stack == "httpcore":
        import httpcore

        pool = httpcore.AsyncConnectionPool(max_connections=100, max_keepalive_connections=100)
        headers = list(HEADERS.items())

        async def call() -> None:
            reply = await pool.request("POST", url, headers=headers, content=BODY)
            check(reply.status, reply.content)

        async with pool:
            return await timed([call] * n, seconds)
    if stack == "aiohttp":
        import aiohttp

        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=100)) as session:

            async def call() -> None:
                async with session.post(url, data=BODY, headers=HEADERS) as reply:
                    check(reply.status, await reply.read())

            return await timed([call] * n, seconds)
    if stack == "lean":
        from toolwire.client.http11 import ConnectionPool

        lean = ConnectionPool()
        port = int(url.split(":")[2].split("/")[0])
        raw_headers = [(b"Host", b"127.0.0.1:%d" % port), (b"Content-Length", b"%d" % len(BODY))]
        raw_headers += [(name.encode(), value.encode()) for name, value in HEADERS.items()]

        async def call() -> None:
            reply = await lean.request(b"POST", ("http", "127.0.0.1", port), b"/mcp", raw_headers, BODY)
            check(reply.status, await reply.read())

        try:
            return await timed([call] * n, seconds)
        finally:
            await lean.aclose()
    raise SystemExit(f"unknown stack {stack!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stack")
    parser.add_argument("port", type=int)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--in-flight", type=int, default=1)
    parser.add_argument("--era", choices=("legacy", "modern"), default="modern")
    parser.add_argument("--server-pid", type=int, default=0, help="also measure this process's CPU time")
    args = parser.parse_args()
    global SERVER
    SERVER = args.server_pid
    url = f"http://127.0.0.1:{args.port}/mcp"
    if args.stack == "raw":
        work = raw(url, args.port, args.era, args.in_flight, args.seconds)
    elif args.stack.startswith("client"):
        work = client(args.stack, url, args.era, args.in_flight, args.seconds)
    else:
        work = bare(args.stack, url, args.in_flight, args.seconds)
    rate, cpu, server = uvloop.run(work)
    print(json.dumps({"calls_per_second": rate, "cpu_per_call_us": cpu, "server_cpu_per_call_us": server}))


if __name__ == "__main__":
    main()
