"""One HTTP/1.1 connection of the :class:`~toolwire.client.http11.ConnectionPool`, on httptools.

A :class:`Connection` carries one exchange at a time: the request's head and a body given as
bytes written in one ``write`` (a streamed body written as it comes, chunked when the request
says so), and the answer parsed as it arrives, in the protocol callbacks. The
:class:`Response` is handed over when its head is complete; its body is read incrementally
from the chunks the parser delivered, and reading pauses the connection while
:data:`HIGH_WATER` bytes wait. The connection goes back to its pool as soon as the whole
answer has arrived; one closed early is closed. A kept-alive connection that the server
closes before answering a byte raises :class:`Stale`, for the pool to send again.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, Protocol, TypeVar

import httptools
import httpx

#: A connection stops reading while this much of a body is waiting to be read.
HIGH_WATER = 256 * 1024
#: The most an answer may send without a byte of body: its head (h11, httpx's own, takes
#: 16 kB), or chunk framing, or trailers.
MAX_HEAD_BYTES = 64 * 1024
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


def timeout_of(timeouts: dict[str, Any], name: str) -> float | None:
    value = timeouts.get(name)
    return value if isinstance(value, int | float) else None


class Stale(Exception):
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

    def __init__(self, connection: Connection, read_timeout: float | None) -> None:
        self.status = 0
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.complete = False
        self._connection: Connection | None = connection
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


class Pool(Protocol):
    """What a connection tells its pool (:class:`~toolwire.client.http11.ConnectionPool`)."""

    def release(self, connection: Connection) -> None:
        """Take ``connection`` back as idle: its answer arrived whole."""

    def discard(self, connection: Connection) -> None:
        """Forget ``connection``: it closed."""


class Connection(asyncio.Protocol):
    """One keep-alive connection to an origin, one exchange at a time."""

    def __init__(self, pool: Pool, origin: Origin, loop: asyncio.AbstractEventLoop) -> None:
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
        self.pool.discard(self)
        response = self._response
        if response is not None and self._head is None and not _has_length(response.headers):
            self._finish_message()  # a body that lasts until the connection closes
        elif self._head is not None and not self._answered and self.used:
            self._lost(Stale())
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
        read_timeout = timeout_of(timeouts, "read")
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
                        await self._drain(timeout_of(timeouts, "write"))
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
            self.pool.release(self)
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
        self.pool.discard(self)


def _has_length(headers: list[tuple[bytes, bytes]]) -> bool:
    for name, value in headers:
        lowered = name.lower()
        if lowered == b"content-length" or (lowered == b"transfer-encoding" and b"chunked" in value.lower()):
            return True
    return False
