"""One client connection: its requests parsed with httptools as they arrive, each answered
by the application in turn, reading paused while they wait, and its deadlines kept."""

from __future__ import annotations

import asyncio
import collections
import logging
from typing import Any

import httptools

from ..forwarded import client_group
from .heads import refusal
from .request import Request
from .settings import BODY_BUFFER, FEED_SLICE, MAX_HEAD_BYTES, Settings

log = logging.getLogger("toolwire.http")


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
        self._parsing: Request | None = None  # the request whose body is arriving
        self._current: Request | None = None  # the request being answered
        self._waiting: collections.deque[Request] = collections.deque()
        self._task: asyncio.Task[None] | None = None
        # One timer serves the deadlines: the next request's head (idle), the rest of the
        # head being read, or the rest of the body of the request being answered; it re-arms
        # itself when the deadline moved while it waited.
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
        except httptools.HttpParserError as invalid:  # a callback's exception is its context
            refused = invalid.__context__
            if not isinstance(refused, _Refused):
                refused = _Refused(400, f"the request is not valid HTTP/1.1 ({invalid})")
            self._read_no_more(refused)
        else:
            if self._unparsed > MAX_HEAD_BYTES:  # a header, or trailer, that never ends
                self._refuse(431, _HEAD_TOO_LARGE)
            elif self._parsing is not None and self._deadline is None and self._parsing is self._current:
                self._arm(self.settings.body_timeout)  # its body is not all in: from now on, timed

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
            self._epilogue = refusal(refused.status, refused.why)

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
                self.transport.write(refusal(status, why))
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
        if name in _FRAMING:
            if name == b"expect" and value.lower() == b"100-continue":
                self._expect = True
            elif name == b"transfer-encoding" and value.lower() != b"chunked":
                self._coding = value

    def on_headers_complete(self) -> None:
        # The head is in: its body gets body_timeout more (a head that was not timed, one
        # pipelined, gets it from when its body is found missing: see _feed and _answered).
        deadline = self._deadline
        self._deadline = None if deadline is None else deadline + self.settings.body_timeout
        self._unparsed = 0
        parser = self.parser
        version = parser.get_http_version()
        if version == "0.9":
            raise _Refused(505, "HTTP/0.9 is not served: send HTTP/1.1 or HTTP/1.0")
        if self._coding is not None:
            coding = self._coding.decode("latin-1")
            raise _Refused(501, f"the transfer coding {coding!r} is not supported: only chunked is")
        url = self._url
        # find, not `in`: `bytes in bytes` first tries its needle as an integer, and the
        # TypeError it raises and clears costs more than the rest of this check
        if url[:1] != b"/" or url.find(b"?") >= 0 or url.find(b"#") >= 0:
            parsed: Any = httptools.parse_url(url)  # not its stubs' URL: a part it lacks is None
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
        keep_alive = parser.should_keep_alive() and not settings.stopping
        request = Request(self, scope, keep_alive, self._expect, version == "1.0")
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
        if request.waiters:
            request.wake()

    def on_message_complete(self) -> None:
        self._unparsed = 0
        request = self._parsing
        if request is not None:
            self._parsing = None
            if not self._idle:
                self._deadline = None  # the body is in: no deadline until it is answered
            request.complete = True
            if request.waiters:
                request.wake()
            if request.finished and self._current is None and not self._waiting:
                self._wait_idle()  # its answer went out before its body was all in

    # -- running the application ----------------------------------------------------------------

    def _start(self, request: Request) -> None:
        self._current = request
        self._task = self.loop.create_task(self._run(request))

    async def _run(self, request: Request) -> None:
        try:
            await self.settings.app(request.scope, request.receive, request.send)
        except BaseException as exc:
            if not isinstance(exc, asyncio.CancelledError):
                log.exception("the application failed on %s %s", request.scope["method"], request.scope["path"])
            if (not request.started or request.head) and not request.gone:  # nothing written yet
                self.transport.write(refusal(500, "the server failed to answer"))
                request.keep_alive = False
                request.finished = True
            if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt, SystemExit)):
                raise
        finally:
            self._answered(request)

    def _answered(self, request: Request) -> None:
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
        if request.waiters:
            request.wake()
        if self.transport.is_closing():
            return
        if not request.keep_alive or self.settings.stopping:
            if self._epilogue is not None and not self._waiting:
                self.transport.write(self._epilogue)
            self.transport.close()
            return
        if self._waiting:
            following = self._waiting.popleft()
            self._start(following)
            if following is self._parsing:  # its body is not all in yet: timed from now
                self._arm(self.settings.body_timeout)
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
        elif self._parsing is not None:
            timeout = self.settings.body_timeout
            self._refuse(408, f"the request body did not arrive in time (within {timeout:g} s after its head)")
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
#: The headers that change how a request is read (the rest are only kept).
_FRAMING = frozenset((b"expect", b"transfer-encoding"))


def _address(address: Any) -> tuple[str, int] | None:
    if isinstance(address, tuple) and len(address) >= 2:
        return str(address[0]), int(address[1])
    return None
