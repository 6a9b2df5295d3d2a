"""A lean HTTP/1.1 server for an ASGI application, on httptools and asyncio: ``run_http``'s own.

It serves what uvicorn serves for toolwire's application with less work per request: a whole
answer leaves in one ``write`` (status line, headers and body together), requests' headers
are not copied through middleware, and each connection keeps one timer for all its deadlines.

What a client gets:

- Keep-alive, and pipelined requests answered in order: reading and parsing pause while one
  waits (what was read is parsed ``FEED_SLICE`` bytes at a time), so a connection holds at
  most one slice's worth of requests it has not answered.
- Request bodies as they arrive, chunked or not; reading pauses while more than
  ``BODY_BUFFER`` bytes wait for the application. ``Expect: 100-continue`` is honoured when
  the application first reads the body.
- Answers with ``Content-Length`` when the application gave one or sent the body whole,
  chunked otherwise (close-delimited for HTTP/1.0); nothing but the head for ``HEAD``.
- ``400`` and the connection closed for a request that does not parse, or whose body's
  end is ambiguous (``Content-Length`` with chunked, two lengths, folded headers: nothing
  can be smuggled past it), once the whole requests before it are answered; ``501`` for a
  transfer coding other than chunked, ``505`` for HTTP/0.9; ``431`` for a head, or
  trailers, over ``MAX_HEAD_BYTES`` (also while it is still arriving); ``408`` when a
  request's head takes longer than ``header_timeout``; ``503`` past ``max_connections``,
  ``429`` past ``max_connections_per_client`` from one address (an IPv6 /64; trusted
  proxies are not counted); an idle keep-alive connection is closed after ``keep_alive``
  seconds, and so is one whose request was answered before its body was all in (the rest
  is read and dropped meanwhile). ``500`` when the application fails before any of its answer was written (the
  connection is closed when it fails part-way through).
- The client going away is ``http.disconnect`` from ``receive()``; what the application
  sends after that is dropped.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import email.utils
import logging
import signal
import socket
import time
from collections.abc import Callable
from typing import Any

import httptools

from .forwarded import TrustedProxies, client_group

log = logging.getLogger("toolwire.http")

#: The most a request's line and headers may take.
MAX_HEAD_BYTES = 64 * 1024
#: Body bytes held for the application before reading from the client pauses.
BODY_BUFFER = 256 * 1024
#: A larger read is parsed this many bytes at a time, so that parsing stops when reading pauses.
FEED_SLICE = 4096

_REASONS = {
    100: "Continue", 200: "OK", 201: "Created", 202: "Accepted", 204: "No Content",
    301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
    307: "Temporary Redirect", 308: "Permanent Redirect", 400: "Bad Request", 401: "Unauthorized",
    403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable",
    408: "Request Timeout", 409: "Conflict", 413: "Content Too Large", 415: "Unsupported Media Type",
    421: "Misdirected Request", 422: "Unprocessable Content", 429: "Too Many Requests",
    431: "Request Header Fields Too Large", 500: "Internal Server Error", 501: "Not Implemented",
    502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout", 505: "HTTP Version Not Supported",
}  # fmt: skip
_STATUS_LINES: dict[int, bytes] = {}


def _status_line(status: int) -> bytes:
    line = _STATUS_LINES.get(status)
    if line is None:
        line = f"HTTP/1.1 {status} {_REASONS.get(status, '')}\r\n".encode()
        if len(_STATUS_LINES) < 512:
            _STATUS_LINES[status] = line
    return line


def _refusal(status: int, why: str) -> bytes:
    """A whole plain-text answer that closes the connection."""
    body = f"{status} {_REASONS.get(status, '')}: {why}\n".encode()
    return (
        _status_line(status) + b"content-type: text/plain; charset=utf-8\r\n"
        b"content-length: %d\r\nconnection: close\r\n\r\n" % len(body) + body
    )


class _Clock:
    """The ``date`` header, made once a second."""

    def __init__(self) -> None:
        self._second = 0
        self.header = b""

    def date(self) -> bytes:
        now = int(time.time())
        if now != self._second:
            self._second = now
            self.header = b"date: " + email.utils.formatdate(now, usegmt=True).encode() + b"\r\n"
        return self.header


class Settings:
    """What all connections of one server share."""

    def __init__(
        self,
        app: Any,
        *,
        header_timeout: float = 10.0,
        keep_alive: float = 5.0,
        max_connections: int = 1000,
        max_connections_per_client: int = 100,
        trusted: TrustedProxies | None = None,
        access_log: bool = False,
    ) -> None:
        self.app = app
        self.header_timeout = header_timeout
        self.keep_alive = keep_alive
        self.max_connections = max_connections
        self.max_connections_per_client = max_connections_per_client
        self.trusted = trusted if trusted is not None else TrustedProxies()
        self.access_log = access_log
        self.state: dict[str, Any] = {}
        self.connections: set[HttpConnection] = set()
        self.by_client: dict[str, int] = {}  # open connections by client (see client_group)
        self.clock = _Clock()
        self.stopping = False


class _Request:
    """One request and its answer: the ASGI ``receive`` and ``send`` of the application."""

    __slots__ = (
        "buffered", "chunked", "chunks", "complete", "connection", "expect_continue", "finished", "gone",
        "head", "head_only", "keep_alive", "left", "scope", "started", "status", "told", "waiters",
    )  # fmt: skip

    def __init__(self, connection: HttpConnection, scope: dict[str, Any], keep_alive: bool, expect: bool) -> None:
        self.connection = connection
        self.scope = scope
        self.keep_alive = keep_alive
        self.chunks: collections.deque[bytes] = collections.deque()
        self.buffered = 0
        self.complete = False  # the whole body has arrived
        self.told = False  # ... and the application has read it
        self.gone = False  # the client went away
        self.waiters: list[asyncio.Future[None]] = []
        self.expect_continue = expect
        self.started = False  # the application sent http.response.start
        self.finished = False  # the whole answer is written
        self.status = 0
        self.head: list[bytes] = []
        self.chunked = False
        self.left: int | None = None  # body bytes still owed under Content-Length
        self.head_only = scope["method"] == "HEAD"

    def wake(self) -> None:
        waiters, self.waiters = self.waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def _wait(self) -> None:
        waiter = self.connection.loop.create_future()
        self.waiters.append(waiter)
        await waiter

    async def receive(self) -> dict[str, Any]:
        """The next piece of the body; ``http.disconnect`` once the client is gone or the
        answer is written (after the whole body, it waits for that)."""
        connection = self.connection
        if self.expect_continue:
            self.expect_continue = False
            if not self.gone and not self.started:
                connection.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        while not self.chunks and not self.complete and not self.gone:
            await self._wait()
        if not self.told and not self.gone:
            body = b""
            paused = False
            if self.chunks:
                body = self.chunks[0] if len(self.chunks) == 1 else b"".join(self.chunks)
                self.chunks.clear()
                paused, self.buffered = self.buffered > BODY_BUFFER, 0
            self.told = self.complete
            if paused:  # what is parsed now waits for the next call
                connection.resume_reading()
            return {"type": "http.request", "body": body, "more_body": not self.told}
        while not self.gone and not self.finished:
            await self._wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        """Write the answer: the head waits for the first piece of the body, so that a whole
        answer is one write. ``RuntimeError`` for messages out of order or a bad header."""
        kind = message["type"]
        if kind == "http.response.start":
            if self.started:
                raise RuntimeError("http.response.start sent twice")
            self._head(message["status"], message.get("headers", ()))
            self.started = True
        elif kind == "http.response.body":
            if not self.started or self.finished:
                raise RuntimeError("http.response.body sent before http.response.start or after the end")
            more = bool(message.get("more_body", False))
            self._body(message.get("body", b""), more)
            connection = self.connection
            if connection.paused_writing and not self.gone:
                await connection.drained()
            if not more:
                if self.left and not self.head_only:
                    self.keep_alive = False  # shorter than announced: the client cannot tell where it ends
                self.wake()
        else:
            raise RuntimeError(f"unexpected ASGI message {kind!r}")

    def _head(self, status: int, headers: Any) -> None:
        head = [_status_line(status)]
        length: int | None = None
        close = not self.keep_alive
        for name, value in headers:  # ASGI names are lower case
            if name == b"content-length":
                length = int(value)
            elif name == b"connection" and b"close" in value.lower():
                close = True
            head += (name, b": ", value, b"\r\n")
        lines = len(head) // 4 + 1
        whole = b"".join(head)
        if whole.count(b"\n") != lines or whole.count(b"\r") != lines:  # a CR or LF in a header
            raise RuntimeError(f"invalid HTTP header in {list(headers)!r}: it holds a line break")
        self.status = status
        self.keep_alive = not close
        self.left = length
        self.head = [whole]

    def _body(self, body: bytes, more: bool) -> None:
        """Write ``body`` (after the head, if it has not gone yet), framed as the answer is."""
        connection = self.connection
        out: list[bytes] = []
        if self.head:
            head, self.head = self.head, []
            if self.left is None and self.status >= 200 and self.status not in (204, 304):
                if not more:
                    self.left = len(body)
                    head += (b"content-length: %d\r\n" % len(body),)
                elif self.scope["http_version"] == "1.0":
                    self.keep_alive = False  # the end of the body is the end of the connection
                else:
                    self.chunked = True
                    head.append(b"transfer-encoding: chunked\r\n")
            if self.keep_alive and connection.settings.stopping:
                self.keep_alive = False
            if not self.keep_alive:
                head.append(b"connection: close\r\n")
            head += (connection.settings.clock.date(), b"\r\n")
            out = head
        if self.head_only:
            body = b""
        elif self.left is not None:
            self.left -= len(body)
            if self.left < 0:
                raise RuntimeError("the answer's body is longer than its Content-Length")
        if body or (self.chunked and not more):
            if self.chunked:
                if body:
                    out += (b"%x\r\n" % len(body), body, b"\r\n")
                if not more:
                    out.append(b"0\r\n\r\n")
            else:
                out.append(body)
        if not more:
            self.finished = True
        if out and not self.gone:
            connection.transport.write(b"".join(out))


class HttpConnection(asyncio.Protocol):
    """One client connection: requests parsed as they arrive, answered in order."""

    transport: asyncio.Transport

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.loop = asyncio.get_running_loop()
        self.parser = httptools.HttpRequestParser(self)
        self.paused_writing = False
        self._drain: asyncio.Future[None] | None = None
        self._paused_reading = False
        self._server: tuple[str, int] | None = None
        self._client: tuple[str, int] | None = None
        self._url = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._head_bytes = 0
        self._unparsed = 0  # bytes fed since the parser last got past a head, body bytes or a request's end
        self._backlog: memoryview | None = None  # read, not yet parsed (reading is paused)
        self._group: str | None = None  # the client it counts for in settings.by_client
        self._unreadable = False  # what follows the requests read cannot be parsed
        self._epilogue: bytes | None = None  # ... and is answered with this after them
        self._expect = False  # the request asked for 100 Continue
        self._coding: bytes | None = None  # a transfer coding other than chunked
        self._parsing: _Request | None = None  # the request whose body is arriving
        self._current: _Request | None = None  # the request being answered
        self._waiting: collections.deque[_Request] = collections.deque()
        self._task: asyncio.Task[None] | None = None
        # One timer serves the deadlines: the next request's head (idle) or the rest of the
        # head being read; it re-arms itself when the deadline moved while it waited.
        self._deadline: float | None = None
        self._idle = True
        self._timer: asyncio.TimerHandle | None = None

    # -- the connection ----------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # uvloop's are not asyncio's classes
        settings = self.settings
        settings.connections.add(self)
        if len(settings.connections) > settings.max_connections or settings.stopping:
            self._refuse(503, "the server has too many connections open" if not settings.stopping else "shutting down")
            return
        self._server = _address(transport.get_extra_info("sockname"))
        self._client = _address(transport.get_extra_info("peername"))
        host = self._client[0] if self._client else ""
        if not settings.trusted.trusts(host):
            self._group = group = client_group(host)
            settings.by_client[group] = mine = settings.by_client.get(group, 0) + 1
            if mine > settings.max_connections_per_client:
                cap = settings.max_connections_per_client
                self._refuse(429, f"this client already has {cap} connections open, its most")
                return
        self._wait_idle()

    def connection_lost(self, exc: Exception | None) -> None:
        settings = self.settings
        settings.connections.discard(self)
        if self._group is not None:
            left = settings.by_client.pop(self._group) - 1
            if left:
                settings.by_client[self._group] = left
            self._group = None
        self._backlog = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for request in (self._current, *self._waiting, self._parsing):
            if request is not None:
                request.gone = True
                request.wake()
        self._waiting.clear()
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)

    def data_received(self, data: bytes) -> None:
        if len(data) <= FEED_SLICE and self._backlog is None:
            self._feed(data)
        else:
            self._backlog = memoryview(data if self._backlog is None else bytes(self._backlog) + data)
            self._feed_backlog()

    def _feed_backlog(self) -> None:
        """Parse what was read a slice at a time, until it is all parsed or reading pauses (a
        request waits, or a body fills its buffer): the rest waits for reading to resume."""
        while self._backlog is not None and not self._paused_reading:
            backlog = self._backlog
            self._backlog = backlog[FEED_SLICE:] if len(backlog) > FEED_SLICE else None
            self._feed(backlog[:FEED_SLICE])

    def _feed(self, data: bytes | memoryview) -> None:
        """Parse ``data``: 400 and the connection closed if it is not HTTP/1.1, 431 once more
        than ``MAX_HEAD_BYTES`` came without the parser getting past a head or trailers."""
        self._unparsed += len(data)
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:  # answered as a plain request, then closed
            request = self._parsing
            if request is not None:
                self._parsing = None
                request.keep_alive = False
                request.complete = True
                request.wake()
            self._backlog = None
            self._pause_reading()
        except httptools.HttpParserError as exc:  # a callback's exception is its context
            refused = exc.__context__
            if not isinstance(refused, _Refused):
                refused = _Refused(400, f"the request is not valid HTTP/1.1 ({exc})")
            self._read_no_more(refused)
        else:
            if self._unparsed > MAX_HEAD_BYTES:  # a header, or trailer, that never ends
                self._refuse(431, _HEAD_TOO_LARGE)

    def _read_no_more(self, refused: _Refused) -> None:
        """The rest cannot be parsed: the requests before it that are whole are answered,
        then ``refused`` is (unless the last of them closes the connection: ``Connection:
        close``, HTTP/1.0), and the connection closed."""
        last = self._waiting[-1] if self._waiting else self._current
        if last is None or self._parsing is not None:
            self._refuse(refused.status, refused.why)
            return
        self._backlog = None
        self._unreadable = True
        self._pause_reading()
        if last.keep_alive:
            last.keep_alive = False
            self._epilogue = _refusal(refused.status, refused.why)

    def eof_received(self) -> bool | None:
        return None  # close: a half-closed client gets no more answers

    def pause_writing(self) -> None:
        self.paused_writing = True

    def resume_writing(self) -> None:
        self.paused_writing = False
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)

    async def drained(self) -> None:
        """Wait until the client has taken what was written (or is gone)."""
        if self.transport.is_closing():
            return
        self._drain = self.loop.create_future()
        await self._drain

    def resume_reading(self) -> None:
        if self._paused_reading and not self._waiting and not self._unreadable and not self.transport.is_closing():
            self._paused_reading = False
            if self._backlog is not None:
                self._feed_backlog()
            if not self._paused_reading:
                self.transport.resume_reading()

    def _pause_reading(self) -> None:
        if not self._paused_reading:
            self._paused_reading = True
            self.transport.pause_reading()

    def _refuse(self, status: int, why: str) -> None:
        self._backlog = None
        if not self.transport.is_closing():
            if self._current is None or not self._current.started:
                self.transport.write(_refusal(status, why))
            self.transport.close()

    # -- the parser's callbacks ----------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._url = b""
        self._headers = []
        self._head_bytes = 0
        self._expect = False
        self._coding = None
        if self._idle:
            self._idle = False
            self._arm(self.settings.header_timeout)

    def on_url(self, url: bytes) -> None:
        self._url += url
        self._head_bytes += len(url)
        if self._head_bytes > MAX_HEAD_BYTES:
            raise _Refused(431, _HEAD_TOO_LARGE)

    def on_header(self, name: bytes, value: bytes) -> None:  # once per whole header (or trailer)
        name = name.lower()
        if value and value[-1] in _BLANKS:  # httptools leaves them, but they are not the value's
            value = value.rstrip(b" \t")
        self._headers.append((name, value))
        self._head_bytes += len(name) + len(value) + 4
        if self._head_bytes > MAX_HEAD_BYTES:
            raise _Refused(431, _HEAD_TOO_LARGE)
        if name == b"expect" and value.lower() == b"100-continue":
            self._expect = True
        elif name == b"transfer-encoding" and value.lower() != b"chunked":
            self._coding = value

    def on_headers_complete(self) -> None:
        self._deadline = None  # the head is in: no deadline until this request is answered
        self._unparsed = 0
        parser = self.parser
        version = parser.get_http_version()
        if version == "0.9":
            raise _Refused(505, "HTTP/0.9 is not served: send HTTP/1.1 or HTTP/1.0")
        if self._coding is not None:
            coding = self._coding.decode("latin-1")
            raise _Refused(501, f"the transfer coding {coding!r} is not supported: only chunked is")
        url = self._url
        if url[:1] != b"/" or b"?" in url or b"#" in url:
            parsed = httptools.parse_url(url)
            raw_path, query = parsed.path, parsed.query or b""
        else:
            raw_path, query = url, b""  # the usual origin-form path, as is
        path = raw_path.decode("latin-1")
        if "%" in path:
            from urllib.parse import unquote

            path = unquote(path)
        method = parser.get_method().decode("ascii")
        settings = self.settings
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.4"},
            "http_version": version,
            "server": self._server,
            "client": self._client,
            "scheme": "http",
            "method": method,
            "root_path": "",
            "path": path,
            "raw_path": raw_path,
            "query_string": query,
            "headers": self._headers,
            "state": settings.state.copy(),
        }
        self._headers = []  # trailers, if any, are counted (see on_header) and dropped
        request = _Request(self, scope, parser.should_keep_alive() and not settings.stopping, self._expect)
        self._parsing = request
        if self._current is None:
            self._start(request)
        else:
            self._waiting.append(request)  # pipelined: answered after the one before it
            self._pause_reading()

    def on_body(self, body: bytes) -> None:
        self._unparsed = 0
        request = self._parsing
        if request is None or request.finished or request.gone:
            return  # answered without reading it all: the rest is read and dropped
        request.chunks.append(body)
        request.buffered += len(body)
        if request.buffered > BODY_BUFFER:
            self._pause_reading()
        request.wake()

    def on_message_complete(self) -> None:
        self._unparsed = 0
        request = self._parsing
        if request is not None:
            self._parsing = None
            request.complete = True
            request.wake()
            if request.finished and self._current is None and not self._waiting:
                self._wait_idle()  # its answer went out before its body was all in

    # -- running the application ----------------------------------------------------------------

    def _start(self, request: _Request) -> None:
        self._current = request
        self._task = self.loop.create_task(self._run(request))

    async def _run(self, request: _Request) -> None:
        try:
            await self.settings.app(request.scope, request.receive, request.send)
        except BaseException as exc:
            if not isinstance(exc, asyncio.CancelledError):
                log.exception("the application failed on %s %s", request.scope["method"], request.scope["path"])
            if (not request.started or request.head) and not request.gone:  # nothing written yet
                self.transport.write(_refusal(500, "the server failed to answer"))
                request.keep_alive = False
                request.finished = True
            if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt, SystemExit)):
                raise
        finally:
            self._answered(request)

    def _answered(self, request: _Request) -> None:
        """The application is done with ``request``: the next one, or the connection's end."""
        if self.settings.access_log:
            scope = request.scope
            client = f"{scope['client'][0]}:{scope['client'][1]}" if scope["client"] else "-"
            line = f"{scope['method']} {scope['path']} HTTP/{scope['http_version']}"
            log.info('%s - "%s" %d', client, line, request.status)
        self._current = None
        self._task = None
        if not request.finished and request.started and not request.gone:
            request.keep_alive = False  # the answer is cut short: only closing tells the client
        request.finished = True
        request.wake()
        if self.transport.is_closing():
            return
        if not request.keep_alive or self.settings.stopping:
            if self._epilogue is not None and not self._waiting:
                self.transport.write(self._epilogue)
            self.transport.close()
            return
        if self._waiting:
            self._start(self._waiting.popleft())
        else:  # the next request's head, or the rest of this one's body (dropped), or the end
            self._wait_idle()
        self.resume_reading()  # if it paused for this request (not while others wait)

    def busy(self) -> bool:
        return self._current is not None

    def close_if_idle(self) -> None:
        if self._current is None and not self.transport.is_closing():
            self.transport.close()

    async def finish(self) -> None:
        """Wait for the request being answered (cancelled if the server stops waiting)."""
        task = self._task
        if task is not None:
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                task.cancel()
                raise

    # -- deadlines -----------------------------------------------------------------------------

    def _wait_idle(self) -> None:
        self._idle = True
        self._arm(self.settings.keep_alive)

    def _arm(self, seconds: float) -> None:
        self._deadline = deadline = self.loop.time() + seconds
        timer = self._timer
        if timer is not None and timer.when() > deadline:  # it would check too late
            timer.cancel()
            timer = None
        if timer is None:
            self._timer = self.loop.call_at(deadline, self._check)

    def _check(self) -> None:
        self._timer = None
        deadline = self._deadline
        if deadline is None or self.transport.is_closing():
            return
        if self.loop.time() < deadline:
            self._timer = self.loop.call_at(deadline, self._check)
        elif self._idle:
            self.transport.close()  # an idle keep-alive connection
        else:
            timeout = self.settings.header_timeout
            self._refuse(408, f"the request headers did not arrive within {timeout:g} s")


class _Refused(Exception):
    """A request refused while it is parsed: ``status``, and why."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status
        self.why = why


_HEAD_TOO_LARGE = f"the request's head or trailers exceed {MAX_HEAD_BYTES} bytes"
_BLANKS = frozenset(b" \t")


def _address(address: Any) -> tuple[str, int] | None:
    if isinstance(address, tuple) and len(address) >= 2:
        return str(address[0]), int(address[1])
    return None


class Lifespan:
    """The application's ASGI lifespan: started before serving, shut down after."""

    def __init__(self, app: Any, state: dict[str, Any]) -> None:
        self._app = app
        self._state = state
        self._inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._started: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._stopped: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[None] | None = None
        self._supported = True

    async def start(self) -> None:
        """Run startup; ``RuntimeError`` with the application's message if it failed."""
        self._task = asyncio.get_running_loop().create_task(self._run())
        await self._inbox.put({"type": "lifespan.startup"})
        failure = await self._started
        if failure is not None:
            raise RuntimeError(failure)

    async def stop(self) -> None:
        if not self._supported or self._task is None or self._task.done():
            return
        await self._inbox.put({"type": "lifespan.shutdown"})
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stopped), 30)

    async def _run(self) -> None:
        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": self._state}
        try:
            await self._app(scope, self._inbox.get, self._send)
        except BaseException as exc:
            if not self._started.done():  # an application without lifespan support
                self._supported = False
                self._started.set_result(None)
                if not isinstance(exc, Exception):
                    raise
            elif not isinstance(exc, Exception):
                raise
            else:
                log.exception("the application's lifespan failed")
        finally:
            for waiter in (self._started, self._stopped):
                if not waiter.done():
                    waiter.set_result(None)

    async def _send(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "lifespan.startup.complete":
            self._started.set_result(None)
        elif kind == "lifespan.startup.failed":
            self._started.set_result(message.get("message") or "the application failed to start")
        elif kind in ("lifespan.shutdown.complete", "lifespan.shutdown.failed") and not self._stopped.done():
            self._stopped.set_result(message.get("message"))


async def serve(
    app: Any,
    listener: socket.socket,
    *,
    header_timeout: float = 10.0,
    keep_alive: float = 5.0,
    max_connections: int = 1000,
    max_connections_per_client: int = 100,
    forwarded_allow_ips: TrustedProxies | str | list[str] | None = None,
    access_log: bool = False,
    grace: float = 10.0,
    lifespan: bool = True,
    on_stop: Callable[[], Any] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve the ASGI ``app`` on ``listener`` (bound and listening) until ``stop`` is set,
    or SIGINT/SIGTERM when ``stop`` is not given.

    Runs the app's lifespan first unless ``lifespan`` is false (``RuntimeError`` if its
    startup fails, before anything is served). On stopping: no new connections,
    ``on_stop()`` (which may be a coroutine: e.g. ending long-lived streams), idle
    connections closed, requests being answered given up to ``grace`` seconds and then
    cancelled, then the lifespan's shutdown. Connections from ``forwarded_allow_ips`` (see
    :class:`~.forwarded.TrustedProxies`) are not held to ``max_connections_per_client``.
    """
    loop = asyncio.get_running_loop()
    settings = Settings(
        app,
        header_timeout=header_timeout,
        keep_alive=keep_alive,
        max_connections=max_connections,
        max_connections_per_client=max_connections_per_client,
        trusted=forwarded_allow_ips
        if isinstance(forwarded_allow_ips, TrustedProxies)
        else TrustedProxies(forwarded_allow_ips),
        access_log=access_log,
    )
    life = Lifespan(app, settings.state) if lifespan else None
    if life is not None:
        await life.start()
    listening = await loop.create_server(lambda: HttpConnection(settings), sock=listener, backlog=2048)
    signals: list[signal.Signals] = []
    if stop is None:
        stop = asyncio.Event()
        for number in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(number, stop.set)
                signals.append(number)
    try:
        await stop.wait()
    finally:
        for number in signals:
            loop.remove_signal_handler(number)
        settings.stopping = True
        listening.close()
        if on_stop is not None:
            outcome = on_stop()
            if asyncio.iscoroutine(outcome):
                await outcome
        for connection in list(settings.connections):
            connection.close_if_idle()
        busy = [connection.finish() for connection in settings.connections if connection.busy()]
        if busy:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.gather(*busy, return_exceptions=True), grace)
        for connection in list(settings.connections):
            connection.transport.close()
        if life is not None:
            await life.stop()
