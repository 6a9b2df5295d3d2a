"""A Streamable HTTP "server" on raw sockets that misbehaves on purpose, for the client's
hostile-server tests.

    python hostile_http.py PORT

The URL's path is ``/MODE/ERA``: ERA ``modern`` answers ``server/discover``, ``legacy``
refuses it (the client falls back to ``initialize``, then gets a session id). Every
``tools/list`` lists ``echo``; the answer MODE makes is to ``tools/call`` (``tools/list``
for ``big-list``). Each hostile answer is whole and valid, only ``EXTRA`` bytes past the
client's 4 MiB limit (so a client without limits reads it all, in bounded time):

* ``headers``: a head of ``EXTRA`` bytes of headers; ``header-value``: one header that long;
* ``json``: a JSON answer of ``EXTRA`` bytes (``Content-Length``); ``chunked``: the same, chunked;
* ``gzip``, ``deflate``: a JSON answer of ``EXTRA`` bytes compressed to a few hundred kB;
* ``sse-line``: an event whose one ``data`` line is ``EXTRA`` bytes;
  ``sse-lines``: an event of ``EXTRA`` bytes of 1 kB ``data`` lines;
* ``slow``: a JSON answer trickled at 64 kB every 50 ms (``EXTRA`` bytes at most);
* ``big-list``: a ``tools/list`` of about 5 MiB, legitimately large;
* ``redirect``: 307 to ``http://localhost:PORT/caught`` (another origin: another host name);
  ``redirect-scheme``: 307 to ``https://127.0.0.1:PORT/caught`` (another scheme);
* ``get-sse-line``: answers normally, but the session's ``GET`` stream sends the event of
  ``sse-line``;
* ``sse-endpoint``: refuses every POST with 405 and opens the 2024-11-05 HTTP+SSE stream,
  whose ``endpoint`` is ``http://localhost:PORT/caught``.

``GET /stats`` answers what the last hostile answer came to: ``answers`` (how many began so
far), ``sent`` (bytes written), ``closed`` (whether the client closed the connection before its
end), and ``caught``: the headers of the requests that reached ``/caught``. ``GET
/stats?closed`` answers once the client has closed the last one (``?closed&after=N``: one
begun after the first ``N``), or after 60 s as things are.
"""

import asyncio
import sys
import zlib
from urllib.parse import parse_qs, urlsplit

import orjson

PORT = int(sys.argv[1])
EXTRA = 4 * 1024 * 1024 + 40_000_000
STATS: dict[str, object] = {"answers": 0, "sent": 0, "closed": False, "caught": []}
#: What waits for STATS to change (``GET /stats?closed``).
WAITERS: list[asyncio.Future[None]] = []


def changed() -> None:
    for waiter in WAITERS:
        if not waiter.done():
            waiter.set_result(None)
    WAITERS.clear()


async def closed_after(after: int, seconds: float = 60) -> None:
    """Once the client has closed a hostile answer begun after the first ``after`` (checked
    as STATS changes), or after ``seconds``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not (int(STATS["answers"]) > after and STATS["closed"]) and loop.time() < deadline:  # type: ignore[call-overload]
        waiter = loop.create_future()
        WAITERS.append(waiter)
        try:
            await asyncio.wait_for(waiter, deadline - loop.time())
        except TimeoutError:
            return


ECHO = {"name": "echo", "inputSchema": {"type": "object"}}


async def read_request(reader: asyncio.StreamReader) -> tuple[str, str, dict[str, str], bytes]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    request_line, *lines = head.split("\r\n")
    method, target, _ = request_line.split(" ", 2)
    headers = {}
    for line in lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return method, target, headers, body


def answer(status: str, body: bytes = b"", kind: str = "application/json", extra: str = "") -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Type: {kind}\r\n{extra}Content-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def result(id: object, value: object) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "result": value})


class Hostile:
    """Writes a hostile answer, counting what goes out; stops when the client closes."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer
        STATS["answers"] = int(STATS["answers"]) + 1  # type: ignore[call-overload]
        STATS["sent"] = 0
        STATS["closed"] = False
        changed()

    async def write(self, data: bytes) -> None:
        self.writer.write(data)
        try:
            await self.writer.drain()
        except ConnectionError:
            STATS["closed"] = True
            changed()
            raise
        if self.writer.transport.is_closing():
            STATS["closed"] = True
            changed()
            raise ConnectionResetError
        STATS["sent"] = int(STATS["sent"]) + len(data)  # type: ignore[call-overload]

    async def filler(self, prefix: bytes, suffix: bytes, size: int, piece: int = 1 << 20) -> None:
        """``prefix``, ``size`` bytes of ``x``, ``suffix``."""
        await self.write(prefix)
        block = b"x" * piece
        for _ in range(size // piece):
            await self.write(block)
        await self.write(suffix)


def compressed_blocks(wbits: int, prefix: bytes, suffix: bytes, size: int) -> list[bytes]:
    """``prefix``, ``size`` bytes of ``x`` and ``suffix``, compressed: a few blocks, one repeated."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = 8 << 20
    first = compressor.compress(prefix) + compressor.flush(zlib.Z_SYNC_FLUSH)
    repeated = compressor.compress(b"x" * block) + compressor.flush(zlib.Z_SYNC_FLUSH)
    last = compressor.compress(suffix) + compressor.flush()
    return [first, *[repeated] * (size // block), last]


async def hostile(mode: str, id: object, writer: asyncio.StreamWriter) -> None:
    out = Hostile(writer)
    start = b'{"jsonrpc":"2.0","id":' + orjson.dumps(id) + b',"result":{"content":[{"type":"text","text":"'
    end = b'"}]}}'
    if mode in ("headers", "header-value"):
        await out.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
        if mode == "headers":
            line = b"X-Junk: " + b"x" * 1000 + b"\r\n"
            for _ in range(EXTRA // len(line) // 64):
                await out.write(line * 64)
        else:
            await out.filler(b"X-Junk: ", b"\r\n", EXTRA)
        body = start + end
        await out.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    elif mode == "json":
        await out.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
            % (len(start) + EXTRA // (1 << 20) * (1 << 20) + len(end))
        )
        await out.filler(start, end, EXTRA)
    elif mode == "chunked":
        await out.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        piece = b"x" * (1 << 20)
        await out.write(b"%x\r\n%s\r\n" % (len(start), start))
        for _ in range(EXTRA // len(piece)):
            await out.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        await out.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(end), end))
    elif mode in ("gzip", "deflate"):
        blocks = compressed_blocks(31 if mode == "gzip" else 15, start, end, EXTRA)
        head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: %s\r\nContent-Length: %d\r\n\r\n"
        await out.write((head % (mode, sum(map(len, blocks)))).encode())
        for block in blocks:
            await out.write(block)
    elif mode in ("sse-line", "sse-lines"):
        await out.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")

        async def chunk(data: bytes) -> None:
            await out.write(b"%x\r\n%s\r\n" % (len(data), data))

        if mode == "sse-line":
            await chunk(b"data: " + start)
            for _ in range(EXTRA // (1 << 20)):
                await chunk(b"x" * (1 << 20))
            await chunk(end + b"\n\n")
        else:
            prefix = b'{"jsonrpc":"2.0","id":' + orjson.dumps(id) + b',"result":{"content":['
            await chunk(b"data: " + prefix + b"\n")
            line = b'data: {"type":"text","text":"' + b"x" * 1000 + b'"},\n'
            for _ in range(EXTRA // len(line) // 1024):
                await chunk(line * 1024)
            await chunk(b'data: {"type":"text","text":""}]}}\n\n')
        await out.write(b"0\r\n\r\n")
    elif mode == "slow":
        await out.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
            % (len(start) + EXTRA // 65536 * 65536 + len(end))
        )
        await out.write(start)
        for _ in range(EXTRA // 65536):
            await out.write(b"x" * 65536)
            await asyncio.sleep(0.05)
        await out.write(end)


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            method, target, headers, body = await read_request(reader)
            if urlsplit(target).path == "/stats":
                query = parse_qs(urlsplit(target).query, keep_blank_values=True)
                if "closed" in query:
                    await closed_after(int(query.get("after", ["0"])[0]))
                writer.write(answer("200 OK", orjson.dumps(STATS)))
                continue
            if target.startswith("/caught"):
                STATS["caught"].append(headers)  # type: ignore[attr-defined]
                writer.write(answer("200 OK", b"{}"))
                continue
            mode, era = target.strip("/").split("/")[:2]
            if mode == "sse-endpoint" and method == "GET":
                event = f"event: endpoint\ndata: http://localhost:{PORT}/caught\n\n".encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + event)
                await reader.read()  # held open until the client closes it
                return
            if mode == "get-sse-line" and method == "GET":
                await hostile("sse-line", 0, writer)
                await reader.read()
                return
            if method != "POST" or mode == "sse-endpoint":
                writer.write(answer("405 Method Not Allowed"))
                continue
            message = orjson.loads(body)
            name, id = message.get("method"), message.get("id")
            if name == "server/discover" and era == "modern":
                info = {"io.modelcontextprotocol/serverInfo": {"name": "hostile", "version": "1"}}
                discover = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "_meta": info}
                writer.write(answer("200 OK", result(id, discover)))
            elif name == "server/discover":
                error = {"code": -32601, "message": "Method not found"}
                writer.write(answer("200 OK", orjson.dumps({"jsonrpc": "2.0", "id": id, "error": error})))
            elif name == "initialize":
                info = {"name": "hostile", "version": "1"}
                initialized = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": info}
                writer.write(answer("200 OK", result(id, initialized), extra="Mcp-Session-Id: s-1\r\n"))
            elif id is None:
                writer.write(answer("202 Accepted"))
            elif name == "tools/list" and mode == "big-list":
                tools = [{**ECHO, "name": f"tool_{n:05}", "description": "d" * 5000} for n in range(1000)]
                writer.write(answer("200 OK", result(id, {"tools": tools})))
            elif name == "tools/list":
                writer.write(answer("200 OK", result(id, {"tools": [ECHO]})))
            elif mode.startswith("redirect"):
                elsewhere = f"https://127.0.0.1:{PORT}" if mode == "redirect-scheme" else f"http://localhost:{PORT}"
                location = f"{elsewhere}/caught"
                writer.write(answer("307 Temporary Redirect", extra=f"Location: {location}\r\n"))
            elif mode in ("ok", "get-sse-line"):
                writer.write(answer("200 OK", result(id, {"content": [{"type": "text", "text": "ok"}]})))
            else:
                await hostile(mode, id, writer)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def main() -> None:
    server = await asyncio.start_server(serve, "127.0.0.1", PORT)
    async with server:
        await server.serve_forever()


asyncio.run(main())
