"""The response to one HTTP request: one JSON body, or an SSE stream.

A :class:`Channel` collects the messages a session routes to one HTTP exchange (the answers
to the requests its POST carried, their progress and log notifications, questions asked on
their behalf) and writes them out. If the first message is the only answer expected, it
goes out as ``application/json``; anything else opens ``text/event-stream``, whose events
follow in order until every expected answer was sent. A channel with no answers to wait for
(a standalone ``GET`` stream) lasts until it is closed.

Streams may be resumable: every event then gets an id (``STREAM:SEQUENCE``) and is kept in
the :class:`~toolwire.transports.http.sse.EventStore` before it is written, so that a client
that lost the connection can ``GET`` the rest with ``Last-Event-ID`` (:meth:`Channel.resume`).
While no connection is attached, events are only kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from . import sse

Send = Callable[[dict[str, Any]], Awaitable[None]]

JSON_HEADERS = [(b"content-type", b"application/json")]
SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]

#: Answers as the protocol core encodes them: ``{"jsonrpc":"2.0","id":ID,"result"|"error"``
#: (a server request has ``"method"`` after the id; a notification has no id).
_ANSWER = re.compile(rb'\{"jsonrpc":"2\.0","id":(?:-?\d+|"(?:[^"\\]|\\.)*"|null),"(?:result|error)"')


def is_answer(data: bytes) -> bool:
    """Whether ``data`` is a response (or a batch of them), not a notification or request."""
    return data[:1] == b"[" or _ANSWER.match(data) is not None


def error_code(data: bytes) -> int | None:
    """The error code of an error response, else ``None``."""
    if b'"error"' not in data[:64]:
        return None
    try:
        message = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    error = message.get("error") if isinstance(message, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, int) else None


class Channel:
    """Messages for one HTTP exchange; ``expected`` answers end it (0: never).

    ``stream_id`` and ``store`` make its stream resumable; ``status`` maps a JSON answer to
    its HTTP status; ``headers`` are added to the response; ``keep_alive`` (seconds) sends
    SSE comments while nothing else is sent.
    """

    def __init__(
        self,
        expected: int,
        *,
        headers: list[tuple[bytes, bytes]] | None = None,
        status: Callable[[bytes], int] = lambda data: 200,
        can_stream: bool = True,
        stream_id: str | None = None,
        store: sse.EventStore | None = None,
        retry_ms: int | None = None,
        keep_alive: float | None = None,
    ) -> None:
        self.expected = expected
        self.headers = headers or []
        self.status = status
        self.can_stream = can_stream
        self.stream_id = stream_id
        self.store = store if stream_id is not None else None
        self.retry_ms = retry_ms
        self.keep_alive = keep_alive
        self.answered = 0
        self.sequence = 0
        self.finished = asyncio.Event()
        self._queue: deque[bytes] = deque()
        self._wake = asyncio.Event()
        self._send: Send | None = None
        self._lock = asyncio.Lock()
        self._streaming = False
        self._letting_go = False
        self._ended = False
        #: Whether some event was only kept, never written (the client may still resume).
        self.undelivered = False

    # -- from the session --------------------------------------------------------------------

    def put(self, data: bytes) -> None:
        """Queue a message (synchronous: sessions route from plain functions)."""
        self._queue.append(data)
        self._wake.set()

    def let_go(self) -> None:
        """End the connection but not the stream (SSE polling): a ``retry`` field is sent,
        the response ends, and the client resumes with ``GET``. Only resumable streams can."""
        if self.stream_id is not None:
            self._letting_go = True
            self._wake.set()

    def close(self) -> None:
        """End the channel now (its session closed, or its subscription ended)."""
        self._ended = True
        self._wake.set()

    @property
    def done(self) -> bool:
        return self._ended or self.answered >= self.expected > 0

    def immediate_answer(self) -> bytes | None:
        """The answer, if it is already the one and only message queued (the fast path:
        most calls answer while the POST is still being handled)."""
        if self.expected == 1 and len(self._queue) == 1 and is_answer(self._queue[0]):
            return self._queue[0]
        return None

    # -- to the connection -------------------------------------------------------------------

    async def serve(self, send: Send, disconnected: asyncio.Event) -> bool:
        """Write everything to ``send`` until the channel is done; returns ``False`` if the
        client went away first (queued and later messages are then only kept, if resumable)."""
        first = await self._next(disconnected)
        if first is None and not self._letting_go:
            return self.done
        if first is not None and self.expected == 1 and is_answer(first) and not self._queue:
            self.answered = 1
            await _json(send, self.status(first), first, self.headers)
            self.finished.set()
            return True
        if first is not None:
            self._queue.appendleft(first)
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS + self.headers})
        self._streaming = True
        self._send = send
        if self.stream_id is not None:
            await self._write(sse.priming(f"{self.stream_id}:0", self.retry_ms))
        return await self._pump(disconnected)

    async def stream(self, send: Send, disconnected: asyncio.Event) -> bool:
        """Like :meth:`serve`, but always as an SSE stream, opened at once (``GET`` streams,
        subscriptions)."""
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS + self.headers})
        self._streaming = True
        self._send = send
        if self.stream_id is not None:
            await self._write(sse.priming(f"{self.stream_id}:0", self.retry_ms))
        else:
            await self._write(sse.KEEP_ALIVE)  # headers and a first byte: the client knows it is open
        return await self._pump(disconnected)

    async def resume(self, send: Send, after: int, disconnected: asyncio.Event) -> None:
        """Attach a new connection (``GET`` with ``Last-Event-ID``): replay what was kept after
        event ``after``, then go on live until the channel is done."""
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS + self.headers})
        async with self._lock:
            assert self.store is not None and self.stream_id is not None
            for sequence, data in await self.store.replay_after(self.stream_id, after):
                await send(
                    {
                        "type": "http.response.body",
                        "body": sse.event(data, f"{self.stream_id}:{sequence}"),
                        "more_body": True,
                    }
                )
            self._send = send
        finished = asyncio.ensure_future(self.finished.wait())
        gone = asyncio.ensure_future(disconnected.wait())
        await asyncio.wait({finished, gone}, return_when=asyncio.FIRST_COMPLETED)
        for waiter in (finished, gone):
            waiter.cancel()
        if self._send is send:
            self._send = None
        if not disconnected.is_set():
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _pump(self, disconnected: asyncio.Event) -> bool:
        connected = True
        while not self.done:
            data = await self._next(disconnected if connected else None)
            if data is None and self._letting_go:
                self._letting_go = False
                if connected and self._send is not None:
                    await self._write(sse.retry(self.retry_ms or 1000))
                    await self._end(self._send)
                connected = False
                self._send = None
                continue
            if data is None:
                if disconnected.is_set() and connected:
                    connected = False
                    self._send = None
                    if self.store is None:
                        return False  # nothing can be resumed: stop here
                continue
            await self._deliver(data)
        self.finished.set()
        if connected and self._send is not None:
            await self._end(self._send)
        return connected

    async def _deliver(self, data: bytes) -> None:
        if is_answer(data):
            self.answered += 1
        async with self._lock:
            if self.stream_id is None:
                frame = sse.event(data)
            else:
                self.sequence += 1
                assert self.store is not None
                await self.store.store(self.stream_id, self.sequence, data)
                frame = sse.event(data, f"{self.stream_id}:{self.sequence}")
            await self._write(frame)

    async def _write(self, frame: bytes) -> None:
        send = self._send
        if send is None:
            self.undelivered = True
        else:
            try:
                await send({"type": "http.response.body", "body": frame, "more_body": True})
            except OSError:
                self._send = None

    async def _end(self, send: Send) -> None:
        with contextlib.suppress(OSError):
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _next(self, disconnected: asyncio.Event | None) -> bytes | None:
        """The next message; ``None`` when the channel is done, the client went away, or
        a keep-alive was due (then sent)."""
        while not self._queue:
            if self.done or self._letting_go or (disconnected is not None and disconnected.is_set()):
                return None
            self._wake.clear()
            waits = [asyncio.ensure_future(self._wake.wait())]
            if disconnected is not None:
                waits.append(asyncio.ensure_future(disconnected.wait()))
            ready, _ = await asyncio.wait(waits, timeout=self.keep_alive, return_when=asyncio.FIRST_COMPLETED)
            for waiter in waits:
                waiter.cancel()
            if not ready and self._streaming:
                await self._write(sse.KEEP_ALIVE)
        return self._queue.popleft()


async def _json(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    length = (b"content-length", str(len(body)).encode())
    await send({"type": "http.response.start", "status": status, "headers": [*JSON_HEADERS, length, *headers]})
    await send({"type": "http.response.body", "body": body})


async def respond(send: Send, status: int, body: bytes = b"", headers: list[tuple[bytes, bytes]] | None = None) -> None:
    """A whole response: JSON ``body`` (if any) with ``status``."""
    if body:
        await _json(send, status, body, headers or [])
        return
    await send(
        {"type": "http.response.start", "status": status, "headers": [(b"content-length", b"0"), *(headers or [])]}
    )
    await send({"type": "http.response.body", "body": b""})
