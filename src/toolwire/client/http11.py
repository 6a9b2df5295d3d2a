"""A lean HTTP/1.1 client on httptools, and the ``httpx`` transport made of it.

httpx's client layer (auth flows, redirects, cookies, timeouts' configuration) is kept as the
API; what sits under it is the part that costs: httpcore's pool and h11 take several hundred
microseconds of CPU per request and grow with the connections open. Here a request is:

* a connection taken from the pool's idle list for its origin (or a new one, TLS through
  asyncio's ``ssl``), at most ``max_connections`` open at once, idle ones closed after
  ``keepalive_expiry`` seconds (checked when taken);
* its head and a body given as bytes written in one ``write``; a streamed body written as it
  comes, chunked when the request says so;
* the answer parsed by httptools as it arrives, in the connection's protocol callbacks: the
  response is handed over when its head is complete and its body is read incrementally (SSE
  streams) from the chunks the parser has delivered. A connection goes back to the pool as
  soon as the whole answer has arrived, before it is read; one closed early (a response
  closed before its end, a cancelled request, an error) is closed.

A request sent on a kept-alive connection that the server closes before answering a byte
(it timed out the idle connection as the request left) is sent again once on a new
connection, when its body can be sent again. Errors surface as the httpx exceptions its own
transport raises: ``ConnectError``/``ConnectTimeout``, ``ReadError``/``ReadTimeout``,
``WriteError``/``WriteTimeout``, ``RemoteProtocolError``, ``LocalProtocolError``,
``PoolTimeout``; and :class:`Refused` for an answer that sends more than
:data:`MAX_HEAD_BYTES` without a byte of body (a head, trailers), its connection closed.
``HEAD`` requests and schemes other than http(s) go to httpx's own transport.

:class:`DirectRoute` sends requests to one URL straight to the pool, as an httpx client on
this transport would send them, for as long as that client's layer would add nothing.
"""

from __future__ import annotations

import asyncio
import codecs
import collections
import ssl
import time
import zlib
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, TypeVar

import httptools
import httpx

#: A connection stops reading while this much of a body is waiting to be read.
HIGH_WATER = 256 * 1024
#: The most an answer may send without a byte of body: its head (h11, httpx's own, takes
#: 16 kB), or chunk framing, or trailers.
MAX_HEAD_BYTES = 64 * 1024
#: The most decompressed from a body at a time: a compression bomb is read in steps this large.
DECODE_STEP = 1024 * 1024
Origin = tuple[str, str, int]
T = TypeVar("T")


async def _within(loop: asyncio.AbstractEventLoop, future: asyncio.Future[T], timeout: float | None) -> T:
    """``await future``; ``TimeoutError`` when it is not done within ``timeout`` seconds (``None``:
    no limit). A timer that fails the future itself: cheaper than ``asyncio.timeout()``, which
    on Python 3.11 looks the task and the loop up (system calls) on every use."""
    if timeout is None:
        return await future
    timer = loop.call_later(timeout, _expire, future)
    try:
        return await future
    finally:
        timer.cancel()


def _expire(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())


def _timeout(timeouts: dict[str, Any], name: str) -> float | None:
    value = timeouts.get(name)
    return value if isinstance(value, int | float) else None


def _ssl_context(verify: str | bool) -> ssl.SSLContext:
    """httpx's TLS settings (certifi's CAs, or ``SSL_CERT_FILE``/``SSL_CERT_DIR``), offering HTTP/1.1."""
    context = httpx.create_ssl_context(verify=verify)
    context.set_alpn_protocols(["http/1.1"])
    return context


class _Stale(Exception):
    """A kept-alive connection was closed before a byte of the answer came back."""


class Refused(httpx.HTTPError):
    """An answer the client will not take (the message says why): a head larger than
    :data:`MAX_HEAD_BYTES`, a redirect to another origin, a body past its limit. The
    connection it came on is closed."""


class TooLarge(Refused):
    """A body, or an event or line of an event stream, larger than ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the answer is larger than {limit} bytes")
        self.limit = limit


class Response(httpx.AsyncByteStream):
    """An answer whose head has arrived; iterate it for the body's chunks, as they come.

    Iterating raises ``ReadTimeout`` when no chunk comes within the read timeout, and
    ``RemoteProtocolError`` when the connection ends before the body does.
    """

    def __init__(self, connection: _Connection, read_timeout: float | None) -> None:
        self.status = 0
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.complete = False
        self._connection: _Connection | None = connection
        self._loop = connection.loop
        self._read_timeout = read_timeout
        self._chunks: collections.deque[bytes] = collections.deque()
        self._buffered = 0
        self._error: Exception | None = None
        self._waiter: asyncio.Future[None] | None = None

    async def read(self) -> bytes:
        """The whole body."""
        if self.complete:  # it has all come
            body = b"".join(self._chunks)
            self._chunks.clear()
            self._buffered = 0
            return body
        return b"".join([chunk async for chunk in self])

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = self._chunks
        while True:
            if chunks:
                chunk = chunks.popleft()
                self._buffered -= len(chunk)
                if self._connection is not None and self._buffered < HIGH_WATER:
                    self._connection.resume()
                yield chunk
            elif self.complete:
                return
            elif self._error is not None:
                raise self._error
            else:
                self._waiter = self._loop.create_future()
                try:
                    await _within(self._loop, self._waiter, self._read_timeout)
                except TimeoutError:
                    self._abandon()
                    raise httpx.ReadTimeout("timed out reading the response body") from None
                finally:
                    self._waiter = None

    async def aclose(self) -> None:
        """Stop reading: a connection still receiving this answer is closed."""
        self._abandon()

    def _abandon(self) -> None:
        if not self.complete and self._connection is not None:
            self._connection.close()
        self._connection = None
        if not self.complete and self._error is None:
            self._error = httpx.ReadError("the response was closed before its end")

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _feed(self, chunk: bytes) -> None:
        self._chunks.append(chunk)
        self._buffered += len(chunk)
        if self._buffered > HIGH_WATER and self._connection is not None:
            self._connection.pause()
        self._wake()

    def _finish(self) -> None:
        self.complete = True
        self._connection = None
        self._wake()

    def _fail(self, error: Exception) -> None:
        self._error = error
        self._connection = None
        self._wake()


class _Connection(asyncio.Protocol):
    """One keep-alive connection to an origin, one exchange at a time."""

    def __init__(self, pool: ConnectionPool, origin: Origin, loop: asyncio.AbstractEventLoop) -> None:
        self.pool = pool
        self.origin = origin
        #: Its event loop, kept: looking it up (``asyncio.get_running_loop()``, and
        #: ``asyncio.timeout()`` which does it twice) makes a system call on Python 3.11.
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self.used = False  # an answer has come whole on it: it was kept alive since
        self._parser = httptools.HttpResponseParser(self)
        self._response: Response | None = None
        self._head: asyncio.Future[Response] | None = None
        self._answered = False  # a byte of the current answer came
        self._framing = 0  # bytes of the current answer since its last byte of body (a head, trailers)
        self._fed = False  # a byte of body came in the data being parsed
        self._informational = False
        self._paused = False
        self._writable: asyncio.Future[None] | None = None

    # -- protocol callbacks -----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._answered = True
        if self._response is None:
            self._lost(httpx.RemoteProtocolError("the server sent data without being asked"))
            return
        self._fed = False
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._lost(httpx.RemoteProtocolError(f"the server's answer is not valid HTTP/1.1: {exc}"))
            return
        if self._fed:
            self._framing = 0
        elif self._response is not None:  # all of it was head, framing or trailers
            self._framing += len(data)
            if self._framing > MAX_HEAD_BYTES:
                what = f"the server's answer has a head (or trailers) of more than {MAX_HEAD_BYTES} bytes"
                self._lost(Refused(what))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.pool._discard(self)
        response = self._response
        if response is not None and self._head is None and not _has_length(response.headers):
            self._finish_message()  # a body that lasts until the connection closes
        elif self._head is not None and not self._answered and self.used:
            self._lost(_Stale())
        else:
            self._lost(httpx.RemoteProtocolError("the server closed the connection before the answer ended"))
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)  # the writer sees the connection closed

    def pause_writing(self) -> None:
        self._writable = self.loop.create_future()

    def resume_writing(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._writable = None

    # -- parser callbacks -------------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self._response is None:
            raise httpx.RemoteProtocolError("the server sent more than one answer")
        self._response.headers = []

    def on_status(self, status: bytes) -> None:
        assert self._response is not None
        self._response.reason = status

    def on_header(self, name: bytes, value: bytes) -> None:
        assert self._response is not None
        self._response.headers.append((name, value))

    def on_headers_complete(self) -> None:
        response = self._response
        assert response is not None
        status = self._parser.get_status_code()
        if 100 <= status < 200:
            self._informational = True
            return
        response.status = status
        head, self._head = self._head, None
        if head is not None and not head.done():
            head.set_result(response)

    def on_body(self, body: bytes) -> None:
        self._fed = True
        if self._response is not None:
            self._response._feed(body)

    def on_message_complete(self) -> None:
        if self._informational:
            self._informational = False
            return
        self._finish_message()

    # -- the exchange -----------------------------------------------------------------------

    async def exchange(
        self, head: bytes, body: bytes | AsyncIterable[bytes], chunked: bool, timeouts: dict[str, Any]
    ) -> Response:
        """Send one request and wait for its answer's head; the connection is closed if
        anything fails or the wait is cancelled."""
        assert self.transport is not None
        read_timeout = _timeout(timeouts, "read")
        response = self._response = Response(self, read_timeout)
        head_ready: asyncio.Future[Response] = self.loop.create_future()
        self._head = head_ready
        self._answered = False
        self._framing = 0
        try:
            if isinstance(body, bytes):
                self.transport.write(head + body)
            else:
                self.transport.write(head)
                async for chunk in body:
                    if chunk:
                        self.transport.write(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
                        await self._drain(_timeout(timeouts, "write"))
                if chunked:
                    self.transport.write(b"0\r\n\r\n")
            return await _within(self.loop, head_ready, read_timeout)
        except TimeoutError:
            self.close()
            raise httpx.ReadTimeout("timed out waiting for the response") from None
        except BaseException:
            self.close()
            response._abandon()
            if head_ready.done() and not head_ready.cancelled():
                head_ready.exception()  # the answer's failure is this one's: taken as seen
            raise

    async def _drain(self, timeout: float | None) -> None:
        if self._writable is not None:
            try:
                await _within(self.loop, self._writable, timeout)
            except TimeoutError:
                self.close()
                raise httpx.WriteTimeout("timed out writing the request") from None
        if self.closed:
            raise httpx.WriteError("the connection closed while the request was being sent")

    def _finish_message(self) -> None:
        response, self._response = self._response, None
        if response is None:
            return
        keep = not self.closed and self._parser.should_keep_alive()
        self.used = True
        response._finish()
        if keep:
            self.resume()  # the answer's last chunks may have paused it
            self.pool._release(self)
        else:
            self.close()

    def _lost(self, error: Exception) -> None:
        response, self._response = self._response, None
        head, self._head = self._head, None
        if head is not None and not head.done():
            head.set_exception(error)
        elif response is not None:
            response._fail(error)
        self.close()

    def pause(self) -> None:
        if not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()

    def resume(self) -> None:
        if self._paused and self.transport is not None and not self.closed:
            self._paused = False
            self.transport.resume_reading()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
        self.closed = True
        self.pool._discard(self)


def _has_length(headers: list[tuple[bytes, bytes]]) -> bool:
    for name, value in headers:
        lowered = name.lower()
        if lowered == b"content-length" or (lowered == b"transfer-encoding" and b"chunked" in value.lower()):
            return True
    return False


class ConnectionPool:
    """Keep-alive HTTP/1.1 connections by origin, at most ``max_connections`` open.

    ``ssl_context`` is used for https origins (made on first use with
    ``httpx.create_ssl_context()`` when not given). :meth:`request` raises the httpx
    exceptions named in the module's docstring.
    """

    def __init__(
        self, ssl_context: ssl.SSLContext | None = None, max_connections: int = 100, keepalive_expiry: float = 5.0
    ) -> None:
        self.ssl_context = ssl_context
        self.max_connections = max_connections
        self.keepalive_expiry = keepalive_expiry
        self._idle: dict[Origin, list[_Connection]] = {}
        self._open: set[_Connection] = set()
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    async def request(
        self,
        method: bytes,
        origin: Origin,
        target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: bytes | AsyncIterable[bytes] = b"",
        timeouts: dict[str, Any] | None = None,
    ) -> Response:
        """Send a request to ``origin`` (scheme, host, port) and return its answer once the
        head has arrived. ``headers`` must include ``Host`` and what frames the body."""
        lines = [b"%s: %s\r\n" % header for header in headers]
        block = b"".join(lines)
        if block.count(b"\n") != len(lines) or block.count(b"\r") != len(lines) or b" " in target:
            raise httpx.LocalProtocolError("a header or the target holds a line break or a space")
        head = b"%s %s HTTP/1.1\r\n%s\r\n" % (method, target, block)
        chunked = any(n.lower() == b"transfer-encoding" and b"chunked" in v.lower() for n, v in headers)
        return await self.send(origin, head, body, chunked, timeouts or {})

    async def send(
        self, origin: Origin, head: bytes, body: bytes | AsyncIterable[bytes], chunked: bool, timeouts: dict[str, Any]
    ) -> Response:
        """:meth:`request` with its head already made (and checked)."""
        connection = await self._acquire(origin, timeouts)
        try:
            return await connection.exchange(head, body, chunked, timeouts)
        except _Stale:
            if not isinstance(body, bytes):
                raise httpx.RemoteProtocolError("the server closed the connection without answering") from None
        connection = await self._connect(origin, timeouts)
        try:
            return await connection.exchange(head, body, chunked, timeouts)
        except _Stale:
            raise httpx.RemoteProtocolError("the server closed the connection without answering") from None

    async def aclose(self) -> None:
        """Close every connection."""
        for connection in list(self._open):
            connection.close()
        self._idle.clear()

    async def _acquire(self, origin: Origin, timeouts: dict[str, Any]) -> _Connection:
        """An idle connection to ``origin``, else a new one once there is room for it
        (``PoolTimeout`` if there is none within the pool timeout)."""
        connection = self._take_idle(origin)
        if connection is not None:
            return connection
        if len(self._open) >= self.max_connections:
            try:
                async with asyncio.timeout(_timeout(timeouts, "pool")):
                    while len(self._open) >= self.max_connections:
                        others = [connections for connections in self._idle.values() if connections]
                        if others:
                            others[0].pop(0).close()  # the oldest idle connection of another origin
                            break
                        waiter = asyncio.get_running_loop().create_future()
                        self._waiters.append(waiter)
                        try:
                            await waiter
                        except BaseException:
                            if waiter in self._waiters:
                                self._waiters.remove(waiter)
                            elif waiter.done() and not waiter.cancelled():
                                self._wake()  # woken, then cancelled: the room goes to the next
                            raise
                        connection = self._take_idle(origin)
                        if connection is not None:
                            return connection
            except TimeoutError:
                raise httpx.PoolTimeout("timed out waiting for a connection") from None
        return await self._connect(origin, timeouts)

    def _take_idle(self, origin: Origin) -> _Connection | None:
        """The idle connection to ``origin`` used last, if one is still open and fresh."""
        idle = self._idle.get(origin)
        expired = time.monotonic() - self.keepalive_expiry if idle else 0.0
        while idle:
            connection = idle.pop()
            transport = connection.transport
            if connection.closed or transport is None or transport.is_closing() or connection.idle_since < expired:
                connection.close()
            else:
                return connection
        return None

    async def _connect(self, origin: Origin, timeouts: dict[str, Any]) -> _Connection:
        scheme, host, port = origin
        loop = asyncio.get_running_loop()
        connection = _Connection(self, origin, loop)
        self._open.add(connection)
        context: ssl.SSLContext | None = None
        if scheme == "https":
            if self.ssl_context is None:
                self.ssl_context = _ssl_context(True)
            context = self.ssl_context
        try:
            async with asyncio.timeout(_timeout(timeouts, "connect")):
                await loop.create_connection(
                    lambda: connection, host, port, ssl=context, server_hostname=host if context else None
                )
        except TimeoutError:
            self._discard(connection)
            raise httpx.ConnectTimeout(f"timed out connecting to {host}:{port}") from None
        except OSError as exc:
            self._discard(connection)
            raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
        except BaseException:
            connection.close()
            raise
        return connection

    def _release(self, connection: _Connection) -> None:
        connection.idle_since = time.monotonic()
        self._idle.setdefault(connection.origin, []).append(connection)
        if self._waiters:  # someone waits for room: an idle connection makes it
            self._wake()

    def _discard(self, connection: _Connection) -> None:
        if connection in self._open:
            self._open.discard(connection)
            idle = self._idle.get(connection.origin)
            if idle and connection in idle:
                idle.remove(connection)
            self._wake()

    def _wake(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return


class Http11Transport(httpx.AsyncBaseTransport):
    """An ``httpx.AsyncClient`` transport on :class:`ConnectionPool`.

    ``verify`` as httpx takes it (``True``, a CA bundle's path, an ``ssl.SSLContext``, or
    ``False``). ``HEAD`` requests and other schemes go to ``httpx.AsyncHTTPTransport``.
    Request timeouts come from the request (``connect``, ``read``, ``write``, ``pool``).
    """

    def __init__(
        self,
        verify: ssl.SSLContext | str | bool = True,
        *,
        max_connections: int = 100,
        keepalive_expiry: float = 5.0,
    ) -> None:
        self._verify = verify
        context = None
        if verify is not True:
            context = verify if isinstance(verify, ssl.SSLContext) else _ssl_context(verify)
        self.pool = ConnectionPool(context, max_connections, keepalive_expiry)
        self._fallback: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if request.method == "HEAD" or url.scheme not in ("http", "https"):
            if self._fallback is None:
                self._fallback = httpx.AsyncHTTPTransport(verify=self._verify)
            return await self._fallback.handle_async_request(request)
        port = url.port or (443 if url.scheme == "https" else 80)
        stream = request.stream
        body: bytes | AsyncIterable[bytes]
        if isinstance(stream, httpx.ByteStream):
            body = b"".join(stream)
        elif isinstance(stream, AsyncIterable):
            body = stream
        else:
            raise RuntimeError("the request's body cannot be read asynchronously")
        try:
            response = await self.pool.request(
                request.method.encode(),
                (url.scheme, url.host, port),
                url.raw_path,
                request.headers.raw,
                body,
                request.extensions.get("timeout", {}),
            )
        except httpx.TransportError as exc:
            exc.request = request
            raise
        return httpx.Response(
            response.status,
            headers=response.headers,
            stream=response,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": response.reason},
        )

    async def aclose(self) -> None:
        await self.pool.aclose()
        if self._fallback is not None:
            await self._fallback.aclose()


#: Statuses httpx follows as redirects (when the answer names a ``Location``).
REDIRECTS = frozenset({301, 302, 303, 307, 308})
DECODABLE = frozenset({"gzip", "deflate", "identity"})
#: What ``str.splitlines`` splits at.
NEWLINES = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


class Reply:
    """An answer as the MCP transport reads it: the status, the headers by lower-case name,
    the body whole or by lines, decoded from gzip or deflate by :data:`DECODE_STEP` at most
    at a time. Made of an answer taken straight from the pool, or of an ``httpx.Response``
    opened with ``stream=True`` (its raw body decoded here; codings other than gzip and
    deflate by httpx).

    Reading raises the httpx exceptions :class:`Response` does, ``httpx.DecodingError`` for
    a body that does not decompress, and :class:`TooLarge` for a body (:meth:`aread`) or a
    line (:meth:`aiter_lines`) longer than the ``limit`` given: what was read is dropped
    and nothing more is read after :meth:`aclose`."""

    def __init__(self, response: Response | httpx.Response) -> None:
        self._response = response
        body: AsyncIterable[bytes]
        if type(response) is Response:
            self.status_code = response.status
            raw = response.headers
            body = response
        else:
            assert isinstance(response, httpx.Response)
            self.status_code = response.status_code
            raw = response.headers.raw
            body = response.aiter_raw()
        self.headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in raw}
        coding = self.headers.get("content-encoding", "identity").strip().lower()
        self._decoder: Any = None
        if coding == "gzip":
            self._decoder = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif coding == "deflate":
            self._decoder = _Deflate()
        elif coding != "identity" and isinstance(response, httpx.Response):
            body = response.aiter_bytes()
        self._body = body

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        decoder = self._decoder
        async for chunk in self._body:
            if decoder is None:
                yield chunk
                continue
            try:
                chunk = decoder.decompress(chunk, DECODE_STEP)
                while True:
                    if chunk:
                        yield chunk
                    tail = decoder.unconsumed_tail
                    if not tail:
                        break
                    chunk = decoder.decompress(tail, DECODE_STEP)
            except zlib.error as exc:
                raise httpx.DecodingError(str(exc)) from None
        if decoder is not None:
            rest = decoder.flush()
            if rest:
                yield rest

    async def aread(self, limit: int | None = None) -> bytes:
        """The whole body; :class:`TooLarge` past ``limit`` bytes (decoded)."""
        response = self._response
        if self._decoder is None and type(response) is Response and response.complete:
            body = await response.read()  # it has all come (so it is small: the pool stops at HIGH_WATER)
            if limit is not None and len(body) > limit:
                raise TooLarge(limit)
            return body
        chunks, size = [], 0
        async for chunk in self.aiter_bytes():
            size += len(chunk)
            if limit is not None and size > limit:
                raise TooLarge(limit)
            chunks.append(chunk)
        return b"".join(chunks)

    async def aiter_lines(self, limit: int | None = None) -> AsyncIterator[str]:
        """The body's lines, decoded as UTF-8, split as httpx splits them (``str.splitlines``,
        a ``\r\n`` cut between two chunks kept whole); :class:`TooLarge` for a line longer
        than ``limit`` characters."""
        text = codecs.getincrementaldecoder("utf-8")(errors="replace")
        buffer, trailing_cr = "", False
        async for chunk in self.aiter_bytes():
            piece = text.decode(chunk)
            if trailing_cr:
                piece, trailing_cr = "\r" + piece, False
            if piece.endswith("\r"):
                piece, trailing_cr = piece[:-1], True
            if not piece:
                continue
            lines = (buffer + piece).splitlines()
            buffer = "" if piece[-1] in NEWLINES else lines.pop()
            if limit is not None and len(buffer) > limit:
                raise TooLarge(limit)
            for line in lines:
                if limit is not None and len(line) > limit:
                    raise TooLarge(limit)
                yield line
        buffer += text.decode(b"", final=True)
        if buffer or trailing_cr:
            yield buffer

    async def aclose(self) -> None:
        await self._response.aclose()


class _Deflate:
    """``deflate`` as servers send it: zlib-wrapped, or raw (as httpx decodes it)."""

    def __init__(self) -> None:
        self._first = True
        self._decoder = zlib.decompressobj()

    @property
    def unconsumed_tail(self) -> bytes:
        return self._decoder.unconsumed_tail

    def decompress(self, data: bytes, max_length: int) -> bytes:
        was_first, self._first = self._first, False
        try:
            return self._decoder.decompress(data, max_length)
        except zlib.error:
            if not was_first:
                raise
            self._decoder = zlib.decompressobj(-zlib.MAX_WBITS)
            return self._decoder.decompress(data, max_length)

    def flush(self) -> bytes:
        return self._decoder.flush()


class DirectRoute:
    """Requests to one URL sent straight through ``transport``'s pool, as ``client`` (an
    ``httpx.AsyncClient`` on that transport) would send them: its default headers, its
    timeouts, ``Host`` and ``Content-Length``.

    It holds only while httpx's client layer would add nothing: no auth, no cookies (a
    ``Set-Cookie`` answer is put in the client's jar, after which :attr:`usable` is false), no
    redirect (:meth:`send` returns ``None`` for a redirect, which the caller sends again
    through ``client``, which follows it; :attr:`usable` is false from then on), and an
    ``Accept-Encoding`` of gzip or deflate only. :meth:`send` raises the httpx exceptions the
    pool raises.
    """

    def __init__(self, client: httpx.AsyncClient, transport: Http11Transport, url: str) -> None:
        self.client = client
        self.pool = transport.pool
        parsed = httpx.URL(url)
        self._url = url
        self._origin: Origin = (parsed.scheme, parsed.host, parsed.port or (443 if parsed.scheme == "https" else 80))
        self._target = parsed.raw_path
        self._host = parsed.netloc.decode("ascii")
        self._fixed: dict[tuple[str, ...], bytes] = {}
        self._timeouts = client.timeout.as_dict()
        self._defaults = {name.lower(): (name, value) for name, value in client.headers.items()}
        self._redirected = False
        self._fits = parsed.scheme in ("http", "https") and not parsed.userinfo and client.auth is None

    @property
    def usable(self) -> bool:
        """Whether a request may take this route now."""
        return self._fits and not self._redirected and not self.client.cookies

    def allows(self, headers: dict[str, str]) -> bool:
        """Whether requests with these headers may take this route (their content codings
        are ones :class:`Reply` decodes)."""
        merged = {**self._defaults, **{name.lower(): (name, value) for name, value in headers.items()}}
        accepted = merged.get("accept-encoding", ("", ""))[1]
        codings = {coding.split(";")[0].strip().lower() for coding in accepted.split(",")}
        return codings <= DECODABLE | {""}

    async def send(self, method: str, headers: dict[str, str], content: bytes | None = None) -> Reply | None:
        """The answer, its head read; ``None`` when it is a redirect (dropped). A header
        holding a line break raises ``httpx.LocalProtocolError``, one that is not ASCII
        ``UnicodeEncodeError`` (as httpx does)."""
        fixed = self._fixed.get(tuple(headers))
        if fixed is None:
            fixed = self._fixed_headers(headers)
        text = "".join([f"{name}: {value}\r\n" for name, value in headers.items()])
        if text.count("\n") != len(headers) or text.count("\r") != len(headers):
            raise httpx.LocalProtocolError("a header holds a line break")
        length = b"" if content is None else b"Content-Length: %d\r\n" % len(content)
        head = b"%s %s HTTP/1.1\r\n%s%s%s\r\n" % (method.encode(), self._target, fixed, text.encode("ascii"), length)
        response = await self.pool.send(self._origin, head, content or b"", False, self._timeouts)
        if any(name.lower() == b"set-cookie" for name, _ in response.headers):
            self.client.cookies.extract_cookies(
                httpx.Response(response.status, headers=response.headers, request=httpx.Request(method, self._url))
            )
        reply = Reply(response)
        if response.status in REDIRECTS and "location" in reply.headers:
            self._redirected = True
            await reply.aclose()
            return None
        return reply

    def _fixed_headers(self, headers: dict[str, str]) -> bytes:
        """``Host`` and the client's default headers that ``headers`` leave, encoded (and kept
        for the next request with the same header names)."""
        names = {name.lower() for name in headers}
        lines = [b"Host: %s\r\n" % self._host.encode()]
        lines += [f"{name}: {value}\r\n".encode() for low, (name, value) in self._defaults.items() if low not in names]
        if len(self._fixed) > 64:
            self._fixed.clear()
        fixed = self._fixed[tuple(headers)] = b"".join(lines)
        return fixed
