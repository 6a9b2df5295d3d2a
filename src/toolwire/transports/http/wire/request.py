"""One request and its answer: the ASGI ``receive`` and ``send`` the application gets, the
answer framed (``Content-Length``, chunked, or to the connection's end) and written whole."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, Protocol

from .heads import status_line
from .settings import BODY_BUFFER, Settings


class Connection(Protocol):
    """What a request uses of its connection (:class:`~.connection.HttpConnection`)."""

    loop: asyncio.AbstractEventLoop
    transport: asyncio.Transport
    settings: Settings
    paused_writing: bool

    def resume_reading(self) -> None: ...

    async def drained(self) -> None: ...


class Request:
    """One request and its answer: the ASGI ``receive`` and ``send`` of the application."""

    __slots__ = (
        "buffered", "chunked", "chunks", "complete", "connection", "expect_continue", "finished", "gone",
        "head", "head_only", "http10", "keep_alive", "left", "scope", "started", "status", "told", "waiters",
    )  # fmt: skip

    def __init__(
        self, connection: Connection, scope: dict[str, Any], keep_alive: bool, expect: bool, http10: bool
    ) -> None:
        self.connection = connection
        self.scope = scope
        self.keep_alive = keep_alive
        self.http10 = http10  # an HTTP/1.0 client: it keeps the connection only when told so
        self.chunks: list[bytes] = []
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
        """Wake whoever waits in ``receive`` (callers on the hot path look at ``waiters``
        first: nearly always nobody does)."""
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
            body = self._take()
            return {"type": "http.request", "body": body, "more_body": not self.told}
        while not self.gone and not self.finished:
            await self._wait()
        return {"type": "http.disconnect"}

    def whole_body(self) -> bytes | None:
        """The whole body, if it has all arrived and none of it was read: what one
        ``receive`` gives then (without ``more_body``), without the message or a wait.
        ``None`` otherwise (and when ``100 Continue`` is still owed): ``receive`` it."""
        if not self.complete or self.told or self.gone or self.expect_continue:
            return None
        return self._take()

    def _take(self) -> bytes:
        """What arrived of the body and was not read yet (marked read; all of it, once the
        whole body is in); reading resumes if it paused for it."""
        body = b""
        paused = False
        chunks = self.chunks
        if chunks:
            body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
            chunks.clear()
            paused, self.buffered = self.buffered > BODY_BUFFER, 0
        self.told = self.complete
        if paused:  # what is parsed now waits for the next call
            self.connection.resume_reading()
        return body

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
                if self.waiters:
                    self.wake()
        else:
            raise RuntimeError(f"unexpected ASGI message {kind!r}")

    def respond(
        self, status: int, body: bytes, headers: list[tuple[bytes, bytes]], content_type: bytes | None
    ) -> Awaitable[None] | None:
        """A whole answer at once: the bytes ``send`` writes for an ``http.response.start``
        whose headers are ``content-type`` (unless ``None``), ``content-length`` and
        ``headers``, then one ``http.response.body`` of ``body``, without their messages.
        What to await before the answer counts as sent (the client taking it), or ``None``.
        ``RuntimeError`` as ``send`` raises it."""
        if self.started:
            raise RuntimeError("http.response.start sent twice")
        if content_type is None:
            known = b"content-length: %d\r\n" % len(body)
        else:
            known = b"content-type: " + content_type + b"\r\ncontent-length: %d\r\n" % len(body)
        self._head(status, headers, known, len(body))
        self.started = True
        self._body(body, False)
        if self.connection.paused_writing and not self.gone:
            return self._sent()
        if self.waiters:
            self.wake()
        return None

    async def _sent(self) -> None:
        await self.connection.drained()
        self.wake()

    def _head(self, status: int, headers: Any, known: bytes = b"", length: int | None = None) -> None:
        """Keep the head of the answer for its first body: ``known``, header lines already well
        formed (with ``length``, the ``Content-Length`` they give), then ``headers``."""
        close = not self.keep_alive
        extra = b""
        if headers:
            lines: list[bytes] = []
            for name, value in headers:  # ASGI names are lower case
                if name == b"content-length":
                    length = int(value)
                elif name == b"connection" and b"close" in value.lower():
                    close = True
                lines += (name, b": ", value, b"\r\n")
            count = len(lines) // 4
            extra = b"".join(lines)
            if extra.count(b"\n") != count or extra.count(b"\r") != count:  # a CR or LF in a header
                raise RuntimeError(f"invalid HTTP header in {list(headers)!r}: it holds a line break")
        self.status = status
        self.keep_alive = not close
        self.left = length
        self.head = [status_line(status), known, extra]

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
                elif self.http10:
                    self.keep_alive = False  # the end of the body is the end of the connection
                else:
                    self.chunked = True
                    head.append(b"transfer-encoding: chunked\r\n")
            if self.keep_alive and connection.settings.stopping:
                self.keep_alive = False
            if not self.keep_alive:
                head.append(b"connection: close\r\n")
            elif self.http10:
                head.append(b"connection: keep-alive\r\n")
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
