"""Server-Sent Events as the client reads them: the events of a stream, and where a stream is
in its resumption (its last event id and the retry delay the server announced)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from .http11_connection import TooLarge


class SseEvent:
    """One event of a stream: its data lines, its type, and the id and retry delay it set."""

    __slots__ = ("data", "event", "id", "retry")

    def __init__(self) -> None:
        self.data: list[str] = []
        self.event = "message"
        self.id: str | None = None
        self.retry: int | None = None


async def read_events(lines: AsyncIterator[str], limit: int | None = None) -> AsyncIterator[SseEvent]:
    """The events of an SSE stream (comments skipped, multi-line data joined);
    :class:`TooLarge` for an event whose data is longer than ``limit`` characters."""
    current = SseEvent()
    size = 0
    async for line in lines:
        if not line:
            if current.data or current.id is not None or current.retry is not None:
                yield current
            current, size = SseEvent(), 0
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            size += len(value) + 1
            if limit is not None and size > limit:
                raise TooLarge(limit)
            current.data.append(value)
        elif name == "event":
            current.event = value
        elif name == "id" and "\0" not in value:
            current.id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            current.retry = int(value)
    if current.data:
        yield current


class StreamPosition:
    """Where a response stream is in its resumption: its last event id and retry delay."""

    __slots__ = ("last_id", "retry_ms")

    def __init__(self) -> None:
        self.last_id: str | None = None
        self.retry_ms = 1000
