"""toolwire's own HTTP/1.1 server (``toolwire.transports.http.wire``) over real sockets.

Each test serves a small ASGI application (or toolwire's Streamable HTTP app) with
:func:`serve` on a free port of 127.0.0.1 in this process, and talks to it with raw bytes
over a socket, so that what goes on the wire is what is checked: keep-alive, pipelining,
chunked bodies both ways, ``Expect: 100-continue``, ``HEAD``, the deadlines, the connection
cap, failing applications, clients that leave, and stopping.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, ClassVar

import httpx
import orjson
import pytest

from toolwire import Server
from toolwire.transports.http import wire
from toolwire.transports.http.app import StreamableHTTP
from toolwire.transports.http.channel import respond
from toolwire.transports.http.wire.settings import BODY_BUFFER, MAX_HEAD_BYTES

App = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


async def echo(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Answers with the request's method, path and whole body."""
    if scope["type"] == "lifespan":
        await _lifespan(receive, send)
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    answer = f"{scope['method']} {scope['path']} {scope['query_string'].decode()} ".encode() + body
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": answer})


async def _lifespan(receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        await send({"type": message["type"] + ".complete"})
        if message["type"] == "lifespan.shutdown":
            return


@contextlib.asynccontextmanager
async def serving(app: App, **options: Any) -> AsyncIterator[int]:
    """``app`` served on a free port until the block ends; yields the port."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    port = listener.getsockname()[1]
    stop = asyncio.Event()
    task = asyncio.create_task(wire.serve(app, listener, stop=stop, **options))
    try:
        await asyncio.sleep(0.05)
        assert not task.done(), task.exception()
        yield port
    finally:
        stop.set()
        await asyncio.wait_for(task, 15)
        listener.close()
        await Peer.close_all()


class Peer:
    """A raw client connection (all closed when the server stops)."""

    opened: ClassVar[list[Peer]] = []

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        Peer.opened.append(self)

    @classmethod
    async def open(cls, port: int) -> Peer:
        return cls(*await asyncio.open_connection("127.0.0.1", port))

    @classmethod
    async def close_all(cls) -> None:
        peers, cls.opened = cls.opened, []
        for peer in peers:
            peer.writer.close()
            with contextlib.suppress(OSError):
                await peer.writer.wait_closed()

    def send(self, data: bytes) -> None:
        self.writer.write(data)

    async def answer(self) -> tuple[int, dict[bytes, bytes], bytes]:
        """One answer: status, headers (lower-case names), body (by length, chunked, or to
        the connection's end)."""
        head = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\n"), 10)
        lines = head[:-4].split(b"\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
        if status < 200 or status in (204, 304):
            return status, headers, b""
        if b"content-length" in headers:
            body = await self.reader.readexactly(int(headers[b"content-length"]))
        elif headers.get(b"transfer-encoding") == b"chunked":
            body = b""
            while True:
                size = int((await self.reader.readuntil(b"\r\n"))[:-2], 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                body += chunk[:-2]
        else:
            body = await asyncio.wait_for(self.reader.read(), 10)
        return status, headers, body

    async def closed(self) -> bool:
        """Whether the server closed the connection (nothing more arrives)."""
        return await asyncio.wait_for(self.reader.read(1), 10) == b""

    def close(self) -> None:
        self.writer.close()


def post(path: str, body: bytes, *extra: bytes) -> bytes:
    head = [b"POST " + path.encode() + b" HTTP/1.1", b"host: 127.0.0.1", b"content-length: %d" % len(body), *extra]
    return b"\r\n".join(head) + b"\r\n\r\n" + body


async def test_keep_alive_answers_with_length_and_date() -> None:
    async with serving(echo) as port:
        peer = await Peer.open(port)
        for number in range(3):
            peer.send(post(f"/x/{number}?q=1", b"body %d" % number))
            status, headers, body = await peer.answer()
            assert status == 200
            assert body == b"POST /x/%d q=1 body %d" % (number, number)
            assert headers[b"content-length"] == str(len(body)).encode()
            assert headers[b"date"].endswith(b"GMT")
            assert b"connection" not in headers
        peer.close()


async def test_pipelined_requests_are_answered_in_order() -> None:
    async def slow_first(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["path"] == "/0":
            await asyncio.sleep(0.2)
        await echo(scope, receive, send)

    async with serving(slow_first) as port:
        peer = await Peer.open(port)
        peer.send(b"".join(post(f"/{number}", b"n%d" % number) for number in range(4)))
        bodies = [(await peer.answer())[2] for _ in range(4)]
        assert bodies == [b"POST /%d  n%d" % (number, number) for number in range(4)]
        peer.close()


async def test_chunked_request_body_arriving_in_pieces() -> None:
    async with serving(echo) as port:
        peer = await Peer.open(port)
        peer.send(b"POST /c HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n")
        await asyncio.sleep(0.1)
        peer.send(b"6\r\n world\r\n0\r\n\r\n")
        assert (await peer.answer())[2] == b"POST /c  hello world"
        peer.close()


async def test_a_large_body_is_read_whole_while_the_app_is_slow() -> None:
    async def slow_reader(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        size = 0
        while True:
            await asyncio.sleep(0.01)
            message = await receive()
            size += len(message["body"])
            if not message["more_body"]:
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": str(size).encode()})

    body = bytes(3 * BODY_BUFFER + 17)
    async with serving(slow_reader) as port:
        peer = await Peer.open(port)
        peer.send(post("/big", body))
        assert (await peer.answer())[2] == str(len(body)).encode()
        peer.send(post("/again", b"12345"))
        assert (await peer.answer())[2] == b"5"
        peer.close()


async def test_expect_continue_is_answered_when_the_app_reads() -> None:
    async with serving(echo) as port:
        peer = await Peer.open(port)
        peer.send(b"POST /e HTTP/1.1\r\nhost: x\r\ncontent-length: 4\r\nexpect: 100-continue\r\n\r\n")
        status, _, _ = await peer.answer()
        assert status == 100
        peer.send(b"data")
        assert (await peer.answer())[2] == b"POST /e  data"
        peer.close()


async def streamer(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Answers in three pieces, without a length."""
    if scope["type"] == "lifespan":
        await _lifespan(receive, send)
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
    for piece in (b"one ", b"two ", b"three"):
        await send({"type": "http.response.body", "body": piece, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def test_a_streamed_answer_is_chunked_and_the_connection_kept() -> None:
    async with serving(streamer) as port:
        peer = await Peer.open(port)
        for _ in range(2):
            peer.send(b"GET /s HTTP/1.1\r\nhost: x\r\n\r\n")
            status, headers, body = await peer.answer()
            assert (status, headers[b"transfer-encoding"], body) == (200, b"chunked", b"one two three")
        peer.close()


async def test_a_streamed_answer_to_http_1_0_ends_with_the_connection() -> None:
    async with serving(streamer) as port:
        peer = await Peer.open(port)
        peer.send(b"GET /s HTTP/1.0\r\nhost: x\r\n\r\n")
        status, headers, body = await peer.answer()
        assert (status, headers[b"connection"], body) == (200, b"close", b"one two three")
        peer.close()


async def test_http_1_0_keeps_the_connection_only_when_asked_and_says_so() -> None:
    """HTTP/1.0 with ``Connection: keep-alive`` gets ``connection: keep-alive`` and a next
    answer on the same connection; without it, ``connection: close`` and the end."""
    async with serving(echo) as port:
        peer = await Peer.open(port)
        for number in range(2):
            peer.send(f"GET /{number} HTTP/1.0\r\nhost: x\r\nConnection: keep-alive\r\n\r\n".encode())
            status, headers, body = await peer.answer()
            assert (status, headers.get(b"connection"), body) == (200, b"keep-alive", f"GET /{number}  ".encode())
        peer.send(b"GET /last HTTP/1.0\r\nhost: x\r\n\r\n")
        status, headers, body = await peer.answer()
        assert (status, headers.get(b"connection"), body) == (200, b"close", b"GET /last  ")
        assert await asyncio.wait_for(peer.reader.read(), 10) == b""  # closed
        peer.close()


async def test_head_gets_the_head_only() -> None:
    async with serving(echo) as port:
        peer = await Peer.open(port)
        peer.send(b"HEAD /h HTTP/1.1\r\nhost: x\r\n\r\n")
        head = await asyncio.wait_for(peer.reader.readuntil(b"\r\n\r\n"), 10)
        assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"content-length: 9\r\n" in head
        peer.send(post("/after", b""))  # the next answer follows straight on: no body came
        assert (await peer.answer())[2] == b"POST /after  "
        peer.close()


#: Headers whose sizes add up to just past MAX_HEAD_BYTES (66 bytes each, counted as name,
#: value and 4), the last arriving in the read that ends them: the count itself refuses them.
MANY_HEADERS = b"".join(b"x-%04d: %s\r\n" % (n, b"a" * 56) for n in range(MAX_HEAD_BYTES // 66 + 1))


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"NOT HTTP AT ALL\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\nhello", 400),
        (  # a smuggling attempt: which of the two frames the body?
            b"POST / HTTP/1.1\r\ncontent-length: 4\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\nGET /x HTTP/1.1\r\n\r\n",
            400,
        ),
        (b"POST / HTTP/1.1\r\ntransfer-encoding: chunked, identity\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 400),
        (b"POST / HTTP/1.1\r\nx: a\r\n folded\r\ncontent-length: 1\r\n\r\nz", 400),
        (b"POST / HTTP/1.1\r\ncontent-length : 1\r\n\r\nz", 400),
        (b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\nfffffffffffffffffff\r\n", 400),
        (b"GET / HTTP/1.1\r\nx-big: " + b"a" * (MAX_HEAD_BYTES + 10) + b"\r\n\r\n", 431),
        (b"GET / HTTP/1.1\r\n" + MANY_HEADERS + b"\r\n", 431),
        (b"POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n" + MANY_HEADERS + b"\r\n", 431),
        (b"POST / HTTP/1.1\r\ntransfer-encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501),
        (b"GET /\r\n\r\n", 505),
    ],
    ids=[
        "garbage",
        "two-lengths",
        "length-and-chunked",
        "chunked-not-last",
        "folded-header",
        "space-before-colon",
        "chunk-size-overflow",
        "head-too-large",
        "many-headers-just-past-the-limit",
        "many-trailers-just-past-the-limit",
        "not-chunked",
        "http-0.9",
    ],
)
async def test_bad_requests_get_an_error_and_the_connection_closed(request_bytes: bytes, status: int) -> None:
    async with serving(echo) as port:
        peer = await Peer.open(port)
        peer.send(request_bytes)
        got, headers, body = await peer.answer()
        assert got == status and headers[b"connection"] == b"close"
        assert body.startswith(str(status).encode())
        assert await peer.closed()
        good = await Peer.open(port)  # the server serves others on
        good.send(post("/ok", b"fine"))
        assert (await good.answer())[2] == b"POST /ok  fine"
        good.close()


async def test_whole_requests_before_a_bad_one_are_answered_first() -> None:
    async with serving(echo) as port:
        peer = await Peer.open(port)
        peer.send(post("/1", b"a") + post("/2", b"b") + b"GARBAGE\r\n\r\n")
        assert [(await peer.answer())[2] for _ in range(2)] == [b"POST /1  a", b"POST /2  b"]
        status, headers, body = await peer.answer()
        assert status == 400 and b"not valid HTTP/1.1" in body
        assert await peer.closed()
        closing = await Peer.open(port)  # after Connection: close, the rest is not read at all
        closing.send(post("/last", b"", b"connection: close") + b"GARBAGE\r\n\r\n")
        status, headers, body = await closing.answer()
        assert (status, headers[b"connection"], body) == (200, b"close", b"POST /last  ")
        assert await closing.closed()


async def test_a_head_that_stalls_gets_408() -> None:
    async with serving(echo, header_timeout=0.3) as port:
        peer = await Peer.open(port)
        peer.send(b"POST /slow HTTP/1.1\r\nhost: x\r\n")
        status, _, body = await peer.answer()
        assert status == 408 and b"did not arrive within 0.3 s" in body
        assert await peer.closed()


async def test_a_body_that_trickles_gets_408_whatever_the_application_does() -> None:
    """A body is timed from the end of its head even while the application has not begun to
    read it (it is busy): a byte now and then does not keep the connection; a request
    pipelined behind a busy one is not timed until its turn."""
    busy = asyncio.Event()

    async def slow_to_read(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["path"] == "/busy":
            await busy.wait()
        await echo(scope, receive, send)

    async with serving(slow_to_read, header_timeout=0.3, body_timeout=0.5) as port:
        peer = await Peer.open(port)
        peer.send(b"POST /busy HTTP/1.1\r\nhost: x\r\ncontent-length: 100\r\n\r\n{")
        started = asyncio.get_running_loop().time()

        async def trickle() -> None:
            while True:
                peer.send(b" ")
                await asyncio.sleep(0.1)

        trickling = asyncio.create_task(trickle())
        status, _, body = await peer.answer()
        trickling.cancel()
        assert status == 408 and b"request body did not arrive in time (within 0.5 s after its head)" in body
        assert await peer.closed()
        assert asyncio.get_running_loop().time() - started < 3
        busy.set()
        behind = await Peer.open(port)  # pipelined behind a busy request: its turn first
        busy.clear()
        behind.send(post("/busy", b"a") + b"POST /next HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nb")
        await asyncio.sleep(1)  # longer than both timeouts, while /next waits its turn
        busy.set()
        assert (await behind.answer())[2] == b"POST /busy  a"
        behind.send(b"c")
        assert (await behind.answer())[2] == b"POST /next  bc"
        behind.close()


async def test_an_idle_connection_is_closed_after_keep_alive() -> None:
    async with serving(echo, keep_alive=0.3) as port:
        peer = await Peer.open(port)
        peer.send(post("/once", b""))
        await peer.answer()
        started = asyncio.get_running_loop().time()
        assert await peer.closed()
        assert 0.2 < asyncio.get_running_loop().time() - started < 3


async def test_connections_past_the_cap_get_503() -> None:
    async with serving(echo, max_connections=2) as port:
        held = [await Peer.open(port) for _ in range(2)]
        await asyncio.sleep(0.05)
        extra = await Peer.open(port)
        status, _, body = await extra.answer()
        assert status == 503 and b"too many connections" in body
        held[0].send(post("/still", b""))
        assert (await held[0].answer())[0] == 200
        for peer in held:
            peer.close()


#: What ``respond`` is asked to send, by path: status, body, headers.
WHOLE_ANSWERS: dict[str, tuple[int, bytes, list[tuple[bytes, bytes]]]] = {
    "/json": (200, b'{"jsonrpc":"2.0","id":1,"result":{}}', []),
    "/session": (200, b"{}", [(b"mcp-session-id", b"abc")]),
    "/accepted": (202, b"", []),
    "/no-content": (204, b"", [(b"allow", b"GET, HEAD")]),
    "/timeout": (408, b'{"error":1}', [(b"connection", b"close")]),
    "/bad-header": (200, b"{}", [(b"x", b"a\r\nset-cookie: b")]),
}


async def whole_answers(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Answers with ``respond``: on ``/fast/...`` given the server's own ``send``, which it
    writes at once; on ``/asgi/...`` a ``send`` of the application's, which gets the ASGI
    messages."""
    if scope["type"] == "lifespan":
        await _lifespan(receive, send)
        return
    _, how, what = scope["path"].split("/")
    status, body, headers = WHOLE_ANSWERS["/" + what]
    await respond(send if how == "fast" else lambda message: send(message), status, body, headers)


async def raw_answer(peer: Peer, head_only: bool = False) -> bytes:
    """One answer's bytes as they came (its ``date`` header left out: refusals have none)."""
    head = await asyncio.wait_for(peer.reader.readuntil(b"\r\n\r\n"), 10)
    length = [line for line in head.split(b"\r\n") if line.startswith(b"content-length: ")]
    body = b"" if head_only or not length else await peer.reader.readexactly(int(length[0][16:]))
    date = head.find(b"date: ")
    return (head if date < 0 else head[:date] + head[head.index(b"\r\n", date) :]) + body


@pytest.mark.parametrize("path", sorted(WHOLE_ANSWERS))
@pytest.mark.parametrize(
    "start",
    [b"POST %s HTTP/1.1", b"HEAD %s HTTP/1.1", b"POST %s HTTP/1.0\r\nconnection: keep-alive", b"POST %s HTTP/1.0"],
)
async def test_a_whole_answer_is_the_same_bytes_as_its_asgi_messages(path: str, start: bytes) -> None:
    async with serving(whole_answers) as port:
        answers = []
        for how in (b"/fast", b"/asgi"):
            peer = await Peer.open(port)
            peer.send(start % (how + path.encode()) + b"\r\nhost: x\r\ncontent-length: 0\r\n\r\n")
            answers.append(await raw_answer(peer, start.startswith(b"HEAD")))
            peer.close()
        assert answers[0] == answers[1]
        assert answers[0].startswith(
            b"HTTP/1.1 500 " if path == "/bad-header" else b"HTTP/1.1 %d " % WHOLE_ANSWERS[path][0]
        )


async def test_an_app_that_fails_gets_500_and_others_are_served() -> None:
    async def failing(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["path"] == "/fail":
            raise ValueError("broken")
        if scope["path"] == "/half":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"part", "more_body": True})
            raise ValueError("broken half-way")
        if scope["path"] == "/head-only":  # nothing reached the client yet: 500 still
            await send({"type": "http.response.start", "status": 202, "headers": []})
            raise ValueError("broken before the body")
        if scope["path"] == "/bad-header":
            await send({"type": "http.response.start", "status": 200, "headers": [(b"x", b"a\r\nset-cookie: b")]})
        await echo(scope, receive, send)

    async with serving(failing) as port:
        peer = await Peer.open(port)
        peer.send(post("/fail", b""))
        status, headers, _ = await peer.answer()
        assert status == 500 and headers[b"connection"] == b"close"
        peer = await Peer.open(port)
        peer.send(post("/head-only", b""))
        assert (await peer.answer())[0] == 500
        peer = await Peer.open(port)
        peer.send(post("/bad-header", b""))
        assert (await peer.answer())[0] == 500
        peer = await Peer.open(port)
        peer.send(post("/half", b""))
        head = await asyncio.wait_for(peer.reader.readuntil(b"\r\n\r\n"), 10)
        assert b"transfer-encoding: chunked" in head
        rest = await asyncio.wait_for(peer.reader.read(), 10)  # cut short: closed, no last chunk
        assert b"part" in rest and not rest.endswith(b"0\r\n\r\n")
        peer = await Peer.open(port)
        peer.send(post("/fine", b"ok"))
        assert (await peer.answer())[2] == b"POST /fine  ok"
        peer.close()


async def test_a_client_that_leaves_is_a_disconnect_for_the_app() -> None:
    told = asyncio.Event()

    async def waits(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        while (await receive())["type"] != "http.disconnect":
            pass
        told.set()

    async with serving(waits) as port:
        peer = await Peer.open(port)
        peer.send(post("/w", b"body"))
        await asyncio.sleep(0.1)
        peer.close()
        await asyncio.wait_for(told.wait(), 5)


async def test_stopping_lets_a_request_finish_and_runs_the_lifespan() -> None:
    events: list[str] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                events.append(message["type"])
                await send({"type": message["type"] + ".complete"})
                if message["type"] == "lifespan.shutdown":
                    return
        await asyncio.sleep(0.3)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"finished"})

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    stop = asyncio.Event()
    task = asyncio.create_task(wire.serve(app, listener, stop=stop, on_stop=lambda: events.append("on_stop")))
    await asyncio.sleep(0.05)
    peer = await Peer.open(listener.getsockname()[1])
    peer.send(post("/", b""))
    await asyncio.sleep(0.05)
    stop.set()
    status, headers, body = await peer.answer()
    assert (status, body, headers[b"connection"]) == (200, b"finished", b"close")
    await asyncio.wait_for(task, 5)
    await Peer.close_all()
    assert events == ["lifespan.startup", "on_stop", "lifespan.shutdown"]
    listener.close()


async def test_a_failed_startup_is_raised_before_serving() -> None:
    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "lifespan.startup.failed", "message": "no database"})

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    with pytest.raises(RuntimeError, match="no database"):
        await wire.serve(app, listener, stop=asyncio.Event())
    listener.close()


async def test_toolwire_app_over_the_wire_with_httpx() -> None:
    server = Server("wire-test")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    app = StreamableHTTP(server)
    async with serving(app, on_stop=app.close) as port, httpx.AsyncClient() as client:
        url = f"http://127.0.0.1:{port}/mcp"
        headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "tools/call",
            "mcp-name": "add",
        }
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        for number in range(3):
            call = {"jsonrpc": "2.0", "id": number, "method": "tools/call"}
            call["params"] = {"name": "add", "arguments": {"a": number, "b": 1}, "_meta": meta}
            answer = await client.post(url, content=orjson.dumps(call), headers=headers)
            assert answer.status_code == 200, answer.text
            assert answer.json()["result"]["structuredContent"] == number + 1


async def test_a_body_all_in_over_the_limit_is_413_with_its_declared_length() -> None:
    app = StreamableHTTP(Server("wire-test"), max_body_bytes=10)
    async with serving(app, on_stop=app.close) as port:
        peer = await Peer.open(port)
        for body, problem in [
            (b'{"jsonrpc":"2.0"}', b"17 bytes exceeds the limit of 10"),
            (b"{not json", b"the body is not valid JSON"),  # under the limit: read, and parsed
        ]:
            peer.send(
                post("/mcp", body, b"content-type: application/json", b"accept: application/json, text/event-stream")
            )
            status, _, answer = await peer.answer()
            assert (status, problem in answer) == (413 if b"limit" in problem else 400, True), answer
        # all in, without a Content-Length: the body itself is past the limit
        head = b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ntransfer-encoding: chunked\r\n"
        head += b"content-type: application/json\r\naccept: application/json, text/event-stream\r\n\r\n"
        peer.send(head + b"11\r\n" + b'{"jsonrpc":"2.0"}' + b"\r\n0\r\n\r\n")
        status, _, answer = await peer.answer()
        assert status == 413 and b"the body exceeds the limit of 10 bytes" in answer, answer
        peer.close()
