"""The response to one HTTP request: one JSON body, or an SSE stream.

A :class:`Channel` collects the messages a session routes to one HTTP exchange (the answers
to the requests its POST carried, their progress and log notifications, questions asked on
their behalf) and writes them out. If the first message is the only answer expected, it
goes out as ``application/json``; anything else opens ``text/event-stream``, whose events
follow in order until every expected answer was sent. A channel with no answers to wait for
(a standalone ``GET`` stream) lasts until it is closed. Whatever is queued when the channel
gets to write goes out in one write (a call that reported progress and finished at once
costs one response body, not one write per event).

Streams may be resumable: the channel is then given a ``resumable`` function that names its
stream when it opens; every event gets an id (``STREAM:SEQUENCE``) and is kept in the
:class:`~toolwire.transports.http.sse.EventStore` before it is written, so that a client
that lost the connection can ``GET`` the rest with ``Last-Event-ID`` (:meth:`Channel.resume`).
While no connection is attached, events are only kept. A stream that is complete when it
opens goes out in one piece, with its length and without ids: there is nothing to resume.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from ...protocol.outgoing import Answer, Outgoing
from . import sse
from .wire.request import Request as WireRequest

Send = Callable[[dict[str, Any]], Awaitable[None]]

MAX_WAITING = 1000

JSON_HEADERS = [(b"content-type", b"application/json")]
SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]


class Channel:
    """Messages for one HTTP exchange; ``expected`` answers end it (0: never).

    ``resumable(channel)`` names the stream when it opens (and makes it resumable through
    ``store``); ``status`` maps an answer sent as JSON to its HTTP status; ``headers`` are added to
    the response; ``keep_alive`` (seconds) sends SSE comments while nothing else is sent.
    """

    def __init__(
        self,
        expected: int,
        *,
        headers: list[tuple[bytes, bytes]] | None = None,
        status: Callable[[Answer], int] = lambda answer: 200,
        resumable: Callable[[Channel], str] | None = None,
        store: sse.EventStore | None = None,
        retry_ms: int | None = None,
        keep_alive: float | None = None,
    ) -> None:
        self.expected = expected
        self.headers = headers or []
        self.status = status
        self.resumable = resumable if store is not None else None
        self.store = store
        self.retry_ms = retry_ms
        self.keep_alive = keep_alive
        self.stream_id: str | None = None
        self.answered = 0
        self.sequence = 0
        #: Whether some event was only kept, never written (the client may still resume).
        self.undelivered = False
        self._queue: deque[Outgoing] = deque()
        self._queued_answers = 0  # answers among the queued messages
        self._wake: asyncio.Event | None = None
        self._finished: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None
        self._send: Send | None = None
        self._streaming = False
        self._letting_go = False
        self._ended = False
        self.pumping = False

    # -- from the session --------------------------------------------------------------------

    def put(self, message: Outgoing) -> None:
        """Queue a message (synchronous: sessions route from plain functions). A GET stream
        waiting for its client to come back keeps the last :data:`MAX_WAITING` only."""
        self._queue.append(message)
        if self.expected == 0 and not self.pumping and len(self._queue) > MAX_WAITING:
            self._queue.popleft()
        if message.final:
            self._queued_answers += 1
        if self._wake is not None:
            self._wake.set()

    def let_go(self) -> None:
        """End the connection but not the stream (SSE polling): a ``retry`` field is sent,
        the response ends, and the client resumes with ``GET``. Only resumable streams can."""
        if self.resumable is not None:
            self._letting_go = True
            self._nudge()

    def forgo(self) -> None:
        """One of the requests will never be answered (it was cancelled)."""
        self.expected -= 1
        if self.expected <= self.answered:
            self.close()

    def close(self) -> None:
        """End the channel now (its session closed, or its subscription ended)."""
        self._ended = True
        self._nudge()

    @property
    def done(self) -> bool:
        return self._ended or self.answered >= self.expected > 0

    def immediate_answer(self) -> Answer | None:
        """The answer, if it is already the one and only message queued (the fast path:
        most calls answer while the POST is still being handled)."""
        if self.expected == 1 and len(self._queue) == 1 and self._queued_answers == 1:
            return self._queue[0]  # type: ignore[return-value]  # the one final message: an answer
        return None

    def complete(self) -> bool:
        """Whether every answer still expected is already queued (nothing to wait for)."""
        if self.expected <= 0:
            return False
        return self._queued_answers >= self.expected - self.answered

    async def wait_finished(self) -> None:
        """Return once every expected answer was delivered or kept."""
        if self.done:
            return
        if self._finished is None:
            self._finished = asyncio.Event()
        await self._finished.wait()

    # -- to the connection -------------------------------------------------------------------

    async def serve(self, send: Send, disconnected: asyncio.Event) -> bool:
        """Write everything to ``send`` until the channel is done; returns ``False`` if the
        client went away first (queued and later messages are then only kept, if resumable)."""
        first = await self._next(disconnected)
        if first is None and not self._letting_go:
            if self.done and not disconnected.is_set():
                await self.send_whole(send)  # ended unanswered (cancelled): an empty stream
            return self.done
        answer = self.immediate_answer() if first is not None else None
        if answer is not None:
            self._queue.clear()
            self._queued_answers = 0
            self.answered = 1
            await respond(send, self.status(answer), answer.data, self.headers)
            self._finish()
            return True
        if self.complete():
            await self.send_whole(send)
            return True
        return await self.stream(send, disconnected)

    async def send_whole(self, send: Send) -> None:
        """Send what is queued as the whole response: an SSE stream in one piece, with its
        length and without event ids (there is nothing the client could need to resume).
        For a channel that is :meth:`complete`, or ended unanswered (an empty stream)."""
        body = b"".join([sse.event(message.data) for message in self._queue])
        self.answered += self._queued_answers
        self._queue.clear()
        self._queued_answers = 0
        length = (b"content-length", str(len(body)).encode())
        await send({"type": "http.response.start", "status": 200, "headers": [*SSE_HEADERS, length, *self.headers]})
        await send({"type": "http.response.body", "body": body})
        self._finish()

    async def stream(self, send: Send, disconnected: asyncio.Event) -> bool:
        """Like :meth:`serve`, but always as an SSE stream, opened at once (``GET`` streams,
        subscriptions)."""
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS + self.headers})
        self._streaming = True
        self._send = send
        opening = sse.KEEP_ALIVE  # a first byte: the client knows the stream is open
        if self.resumable is not None:
            self.stream_id = self.resumable(self)
            opening = sse.priming(f"{self.stream_id}:0", self.retry_ms)
        return await self._pump(disconnected, opening)

    async def resume(self, send: Send, after: int, disconnected: asyncio.Event) -> None:
        """Attach a new connection (``GET`` with ``Last-Event-ID``): replay what was kept after
        event ``after``, then go on live until the channel is done."""
        assert self.store is not None and self.stream_id is not None
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS + self.headers})
        async with self._locked():
            kept = await self.store.replay_after(self.stream_id, after)
            frames = b"".join(sse.event(data, f"{self.stream_id}:{sequence}") for sequence, data in kept)
            await send({"type": "http.response.body", "body": frames or sse.KEEP_ALIVE, "more_body": True})
            self._send = send
        if not self.pumping:  # a GET stream whose connection dropped: this one takes over
            self._streaming = True
            await self._pump(disconnected)
            return
        finished = asyncio.ensure_future(self.wait_finished())
        gone = asyncio.ensure_future(disconnected.wait())
        await asyncio.wait({finished, gone}, return_when=asyncio.FIRST_COMPLETED)
        for waiter in (finished, gone):
            waiter.cancel()
        if self._send is send:
            self._send = None
        if not disconnected.is_set():
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _pump(self, disconnected: asyncio.Event, pending: bytes = b"") -> bool:
        """Write batches of queued messages until done; ``pending`` goes out with the first.
        A channel that awaits no answers (a ``GET`` stream) stops when its connection drops,
        its messages queueing until a resuming connection pumps them."""
        self.pumping = True
        try:
            return await self._pump_messages(disconnected, pending)
        finally:
            self.pumping = False

    async def _pump_messages(self, disconnected: asyncio.Event, pending: bytes) -> bool:
        connected = True
        own = self._send  # this connection's (a GET resuming the stream may take over before it is seen gone)
        while not self.done:
            if not self._queue:
                if pending:
                    await self._write(pending)
                    pending = b""
                await self._next(disconnected if connected else None)
            if self._letting_go:
                self._letting_go = False
                if connected:
                    await self._write(pending + sse.retry(self.retry_ms or 1000), final=True)
                    pending = b""
                connected = False
                continue
            if connected and disconnected.is_set():
                connected = False
                if self._send is own:
                    self._send = None
                if self.store is None or self.stream_id is None or self.expected == 0:
                    return False  # nothing can be resumed (a GET stream ends with its connection)
            if self._queue:
                frames, live = await self._frames()
                if live:
                    pending += frames
                else:
                    self.undelivered = True  # kept only: a resuming client replays it
        if self._send is not None:
            await self._write(pending, final=True)
        self._finish()
        return connected

    async def _frames(self) -> tuple[bytes, bool]:
        """Every queued message as SSE events (kept first, when resumable), and whether a
        connection is attached to write them to (decided under the lock :meth:`resume`
        replays under, so that each event is either replayed or written, never both)."""
        frames = []
        async with self._locked():
            while self._queue:
                message = self._queue.popleft()
                data = message.data
                if message.final:
                    self.answered += 1
                    self._queued_answers -= 1
                if self.stream_id is None or self.store is None:
                    frames.append(sse.event(data))
                    continue
                self.sequence += 1
                await self.store.store(self.stream_id, self.sequence, data)
                frames.append(sse.event(data, f"{self.stream_id}:{self.sequence}"))
            return b"".join(frames), self._send is not None

    async def _write(self, frames: bytes, final: bool = False) -> None:
        send = self._send
        if send is None:
            self.undelivered = self.undelivered or bool(frames)
            return
        try:
            await send({"type": "http.response.body", "body": frames, "more_body": not final})
        except OSError:
            self._send = None
            self.undelivered = True
        if final:
            self._send = None  # the response is over

    async def _next(self, disconnected: asyncio.Event | None) -> Outgoing | None:
        """The next message, left queued; ``None`` when the channel is done, lets go, or
        the client went away. Keep-alives go out while it waits."""
        while not self._queue:
            if self.done or self._letting_go or (disconnected is not None and disconnected.is_set()):
                return None
            if self._wake is None:
                self._wake = asyncio.Event()
            self._wake.clear()
            waits = [asyncio.ensure_future(self._wake.wait())]
            if disconnected is not None:
                waits.append(asyncio.ensure_future(disconnected.wait()))
            ready, _ = await asyncio.wait(waits, timeout=self.keep_alive, return_when=asyncio.FIRST_COMPLETED)
            for waiter in waits:
                waiter.cancel()
            if not ready and self._streaming:
                await self._write(sse.KEEP_ALIVE)
        return self._queue[0]

    def _nudge(self) -> None:
        if self._wake is not None:
            self._wake.set()

    def _finish(self) -> None:
        if self._finished is not None:
            self._finished.set()

    def _locked(self) -> asyncio.Lock:
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock


async def respond(send: Send, status: int, body: bytes = b"", headers: list[tuple[bytes, bytes]] | None = None) -> None:
    """A whole response: JSON ``body`` (if any) with ``status``. On toolwire's own HTTP
    server it is written at once (the same bytes, without the ASGI messages)."""
    sending = respond_at_once(send, status, body, headers)
    if sending is not None:
        await sending


def respond_at_once(
    send: Send, status: int, body: bytes = b"", headers: list[tuple[bytes, bytes]] | None = None
) -> Awaitable[None] | None:
    """:func:`respond` without a coroutine of its own where it can: on toolwire's own
    server the response is written at once, and what is returned is ``None`` or, when the
    client must first take what was written, what to await for that. Under another ASGI
    server, the coroutine that sends its two messages."""
    request = getattr(send, "__self__", None)
    if type(request) is WireRequest:
        return request.respond(status, body, headers or [], b"application/json" if body else None)
    return _send_whole(send, status, body, headers or [])


async def _send_whole(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    if body:
        length = (b"content-length", str(len(body)).encode())
        await send({"type": "http.response.start", "status": status, "headers": [*JSON_HEADERS, length, *headers]})
        await send({"type": "http.response.body", "body": body})
        return
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-length", b"0"), *headers]})
    await send({"type": "http.response.body", "body": b""})
