"""Legacy Streamable HTTP sessions (2025-03-26 … 2025-11-25): ``Mcp-Session-Id`` state.

A :class:`LegacySession` is one ``initialize``d connection: a
:class:`~toolwire.server.session.ServerSession` whose messages are routed to the channel of
the request they belong to, or to the standalone ``GET`` stream when they belong to none.
:class:`SessionManager` mints ids (cryptographically random, visible ASCII), finds sessions,
ends them on ``DELETE``, expires idle ones, and keeps within its caps (in all, per client) by
ending the least recently used idle session before it refuses a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ...logs import get_logger
from ...protocol import tokens
from ...protocol.connection import ServerConnection
from ...protocol.incoming import RequestId
from ...protocol.outgoing import Outgoing
from ...server.session import ServerSession
from .channel import Channel
from .sse import EventStore

if TYPE_CHECKING:
    from ...server.server import Server

log = get_logger("toolwire.http")

#: Seconds a stream that lost its connection stays resumable after its exchange is over.
LINGER = 60.0
#: Part of every stream id: streams named by replicas sharing a session never collide.
PROCESS_TAG = secrets.token_hex(3)


class LegacySession:
    """One session: its protocol state, its channels by request id, its streams by id."""

    def __init__(
        self, id: str, server: Server, connection: ServerConnection, store: EventStore | None, client: str = ""
    ) -> None:
        self.id = id
        self.client = client
        #: The caller that opened it (with authorization), the only one who may use it.
        self.owner: str | None = None
        self.store = store
        self.last_seen = time.monotonic()
        #: When it was opened here (wall clock, for people: the gateway's admin page).
        self.opened = time.time()
        self.channels: dict[RequestId, Channel] = {}
        self.streams: dict[str, Channel] = {}
        self.standalone: Channel | None = None
        #: The last GET stream, after its connection dropped: messages queue on it until a
        #: GET with ``Last-Event-ID`` resumes it or a plain GET replaces it.
        self.detached: Channel | None = None
        self._streams = 0
        self.session = ServerSession(server, connection, route=self.route)
        self.session.peer = client or None
        self.session.stream_closer = self.let_go
        #: Where a message for the ``GET`` stream goes when this replica does not hold it
        #: (set for sessions shared through Redis).
        self.elsewhere: Callable[[Outgoing], None] | None = None

    def name_stream(self, channel: Channel) -> str:
        """A new stream id for ``channel``, which can be resumed by it from now on."""
        self._streams += 1
        stream = f"{self.id[:8]}{PROCESS_TAG}{self._streams}"
        self.streams[stream] = channel
        return stream

    @property
    def busy(self) -> bool:
        """Whether a request or a stream of this session is open."""
        return bool(self.channels or self.standalone is not None or self.session.connection.in_flight)

    @property
    def resumable(self) -> bool:
        """Streams are resumable from 2025-11-25, whose clients expect priming events."""
        codec = self.session.connection.legacy
        return self.store is not None and (codec is None or codec.resumable_streams)

    def route(self, message: Outgoing, related: RequestId | None) -> None:
        """Where a message goes: its request's channel; a message that belongs to no request,
        to the ``GET`` stream. Without a stream to carry it, a message is dropped (a request
        whose exchange is over, unrelated notifications while no ``GET`` stream is open)."""
        channel = self.channels.get(related) if related is not None else self.standalone or self.detached
        if channel is not None:
            channel.put(message)
        elif related is None and self.elsewhere is not None:
            self.elsewhere(message)

    def let_go(self, related: RequestId) -> None:
        """End the connection of request ``related``'s stream, keeping the stream (polling)."""
        channel = self.channels.get(related)
        if channel is not None:
            channel.let_go()

    def forgo(self, id: RequestId) -> None:
        """Request ``id`` was cancelled: its channel stops waiting for its answer."""
        channel = self.channels.pop(id, None)
        if channel is not None:
            channel.forgo()

    def open(self, channel: Channel, ids: list[RequestId]) -> None:
        for id in ids:
            self.channels[id] = channel

    def release(self, channel: Channel, ids: list[RequestId]) -> None:
        """Forget a channel once its exchange is over. Its stream (and the events kept of
        it) goes too, unless some were never delivered: the client may still resume it,
        for :data:`LINGER` seconds."""
        for id in ids:
            if self.channels.get(id) is channel:
                del self.channels[id]
        stream = channel.stream_id
        if stream is None:
            return
        if channel.undelivered:
            asyncio.get_running_loop().call_later(LINGER, self._forget, stream, channel)
        else:
            self._forget(stream, channel)

    def _forget(self, stream: str, channel: Channel) -> None:
        if self.streams.get(stream) is channel:
            del self.streams[stream]
        if self.store is not None and channel.sequence:
            task = asyncio.ensure_future(self.store.forget(stream))
            task.add_done_callback(_quiet)

    async def close(self) -> None:
        """End the session: calls are cancelled, every open stream ends."""
        await self.session.close(grace=0)
        for channel in {*self.channels.values(), *self.streams.values()}:
            channel.close()
        for get_stream in (self.standalone, self.detached):
            if get_stream is not None:
                get_stream.close()
        self.channels.clear()
        if self.store is not None:
            for stream in list(self.streams):
                await self.store.forget(stream)
        self.streams.clear()


def _quiet(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("forgetting a stream's events failed", exc_info=task.exception())


class TooManySessions(Exception):
    """A session cap is reached and no idle session could make room: ``status`` is 429 when
    the cap is the client's own, 503 when it is the server's."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class SessionManager:
    """Sessions by id: at most ``max_sessions`` in all and ``max_per_client`` per client
    (its address, or who it is once authenticated), each ended after ``idle_timeout``
    seconds without a request (``None``: never). At a cap, the least recently used idle
    session (the client's own, at its cap) is ended to make room: one client cannot lock
    others out by opening sessions."""

    def __init__(self, max_sessions: int, idle_timeout: float | None, max_per_client: int = 100) -> None:
        self.max_sessions = max_sessions
        self.max_per_client = max_per_client
        self.idle_timeout = idle_timeout
        #: Least recently used first.
        self.sessions: dict[str, LegacySession] = {}
        self._by_client: dict[str, dict[str, LegacySession]] = {}
        self._reaper: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self.sessions)

    async def create(
        self,
        server: Server,
        connection: ServerConnection,
        store: EventStore | None,
        client: str = "",
        id: str | None = None,
    ) -> LegacySession:
        """A new session for ``client`` (``id``: one another replica opened, taken up here);
        :class:`TooManySessions` if a cap is reached and every session that counts against it
        is busy."""
        mine = self._by_client.get(client, {})
        if len(mine) >= self.max_per_client and not await self._evict(mine):
            raise TooManySessions(
                f"this client holds its maximum of {self.max_per_client} sessions, all in use: "
                "end one with DELETE first",
                429,
            )
        if len(self.sessions) >= self.max_sessions and not await self._evict(self.sessions):
            raise TooManySessions(
                f"the server holds its maximum of {self.max_sessions} sessions, all in use: try again later", 503
            )
        id = id if id is not None else tokens.new_id()
        session = self.sessions[id] = LegacySession(id, server, connection, store, client)
        self._by_client.setdefault(client, {})[id] = session
        if self.idle_timeout is not None and self._reaper is None:
            self._reaper = asyncio.get_running_loop().create_task(self._reap(self.idle_timeout))
        return session

    async def _evict(self, sessions: dict[str, LegacySession]) -> bool:
        """End the least recently used idle session of ``sessions``; ``False`` if none is idle."""
        victim = next((session for session in sessions.values() if not session.busy), None)
        if victim is None:
            return False
        log.info("session %s ended to make room for a new one", victim.id[:8])
        await self.end(victim.id)
        return True

    def get(self, id: str) -> LegacySession | None:
        session = self.sessions.pop(id, None)
        if session is None:
            return None
        self.sessions[id] = session  # now the most recently used
        mine = self._by_client[session.client]
        mine[id] = mine.pop(id)
        session.last_seen = time.monotonic()
        return session

    async def end(self, id: str) -> bool:
        """End session ``id``; ``False`` if there is none."""
        session = self.sessions.pop(id, None)
        if session is None:
            return False
        mine = self._by_client[session.client]
        del mine[id]
        if not mine:
            del self._by_client[session.client]
        await session.close()
        return True

    async def close(self) -> None:
        """End every session (the server is shutting down)."""
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
            self._reaper = None
        for id in list(self.sessions):
            await self.end(id)

    async def _reap(self, timeout: float) -> None:
        while True:
            await asyncio.sleep(max(timeout / 4, 0.05))
            limit = time.monotonic() - timeout
            for id, session in list(self.sessions.items()):
                if session.last_seen < limit and not session.busy:
                    log.info("session %s expired after %.0f s idle", id[:8], timeout)
                    await self.end(id)
