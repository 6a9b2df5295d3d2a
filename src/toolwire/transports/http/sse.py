"""Server-Sent Events: encoding events, and the event store that makes streams resumable.

An event carries one JSON-RPC message (``data:``) and, on resumable streams, an ``id:`` of
the form ``STREAM:SEQUENCE``: the stream it belongs to and its place in it. A client that
lost a stream reconnects with ``GET`` and ``Last-Event-ID``; the server replays what the
store kept of that stream after that event, and only of that stream.

:class:`EventStore` is the interface a deployment implements to keep events elsewhere (Redis,
a database) so that any process can replay them; :class:`MemoryEventStore` keeps them in
this process, a bounded number per stream, for a bounded time.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Protocol


def event(data: bytes, event_id: str | None = None) -> bytes:
    """One SSE event holding ``data`` (a JSON message: never contains a newline)."""
    if event_id is None:
        return b"event: message\ndata: " + data + b"\n\n"
    return b"id: " + event_id.encode() + b"\nevent: message\ndata: " + data + b"\n\n"


def priming(event_id: str, retry_ms: int | None = None) -> bytes:
    """An event with an id and empty data: it gives the client a ``Last-Event-ID`` to resume
    from before any message was sent (and, with ``retry_ms``, how long to wait first)."""
    retry = b"" if retry_ms is None else b"retry: " + str(retry_ms).encode() + b"\n"
    return b"id: " + event_id.encode() + b"\n" + retry + b"data:\n\n"


def retry(retry_ms: int) -> bytes:
    """A ``retry`` field alone: how long the client should wait before reconnecting."""
    return b"retry: " + str(retry_ms).encode() + b"\n\n"


KEEP_ALIVE = b":\n\n"


def split_event_id(event_id: str) -> tuple[str, int] | None:
    """``(stream, sequence)`` of an id this module made, else ``None``."""
    stream, _, sequence = event_id.rpartition(":")
    if not stream or not (sequence.isascii() and sequence.isdigit()):
        return None
    return stream, int(sequence)


class EventStore(Protocol):
    """Keeps the events of resumable streams. Implementations must be safe to call from
    the event loop (they may be async)."""

    async def store(self, stream: str, sequence: int, data: bytes) -> None:
        """Keep message ``data``, sent (or to be sent) as event ``sequence`` of ``stream``."""

    async def replay_after(self, stream: str, sequence: int) -> list[tuple[int, bytes]]:
        """The kept events of ``stream`` after ``sequence``, in order."""

    async def forget(self, stream: str) -> None:
        """Drop every event of ``stream`` (it ended, or its session did)."""


class MemoryEventStore:
    """An :class:`EventStore` in this process: at most ``max_events`` per stream, at most
    ``max_streams`` streams (the oldest go first), each kept ``ttl`` seconds after its
    last event."""

    def __init__(self, max_events: int = 1000, max_streams: int = 10_000, ttl: float = 300.0) -> None:
        self.max_events = max_events
        self.max_streams = max_streams
        self.ttl = ttl
        self._streams: OrderedDict[str, tuple[float, list[tuple[int, bytes]]]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._streams)

    async def store(self, stream: str, sequence: int, data: bytes) -> None:
        now = time.monotonic()
        _, events = self._streams.pop(stream, (now, []))
        events.append((sequence, data))
        del events[: -self.max_events]
        self._streams[stream] = (now, events)
        while len(self._streams) > self.max_streams:
            self._streams.popitem(last=False)
        self._expire(now)

    async def replay_after(self, stream: str, sequence: int) -> list[tuple[int, bytes]]:
        kept = self._streams.get(stream)
        if kept is None or kept[0] + self.ttl < time.monotonic():
            return []
        return [(number, data) for number, data in kept[1] if number > sequence]

    async def forget(self, stream: str) -> None:
        self._streams.pop(stream, None)

    def _expire(self, now: float) -> None:
        while self._streams:
            oldest = next(iter(self._streams))
            if self._streams[oldest][0] + self.ttl >= now:
                return
            del self._streams[oldest]
