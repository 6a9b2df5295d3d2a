"""The HTTP endpoint's side of legacy sessions shared by replicas through Redis (see
:mod:`.shared` for what is kept there and why): a session opened here is written there, one
another replica opened is taken up, what a POST changed of a session's state is shared before
it is answered, messages for work or streams on other replicas are passed on, list changes
are heard, and a stream another replica served is resumed from the shared event store.

Imported only when the endpoint is given a Redis URL."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

import orjson

from ...logs import get_logger
from ...protocol.errors import INTERNAL_ERROR, INVALID_REQUEST
from ...protocol.incoming import RequestId
from ...protocol.outgoing import Notification, Outgoing, Relayed
from . import sse
from .asgi import HttpError, Send
from .channel import SSE_HEADERS
from .sessions import LegacySession, SessionManager, TooManySessions
from .shared import (
    BROADCAST,
    ENDED,
    FROM_CLIENT,
    STATE,
    TO_STREAM,
    RedisUnavailable,
    SharedSessions,
    apply_state,
    session_state,
)

if TYPE_CHECKING:
    from ...server.server import Server
    from ...server.session import ServerSession

log = get_logger("toolwire.http")

#: Resuming a stream another replica served: how often its shared events are read, and how
#: long it stays open with nothing new.
REMOTE_POLL = 0.1
REMOTE_QUIET = 30.0


class Replicas:
    """The legacy sessions of ``sessions`` shared with other replicas through ``shared``;
    ``store``: the event store of resumable streams (shared too, normally)."""

    def __init__(
        self, server: Server, shared: SharedSessions, sessions: SessionManager, store: sse.EventStore | None
    ) -> None:
        self.server = server
        self.shared = shared
        self.sessions = sessions
        self.store = store
        self._passing: set[asyncio.Task[Any]] = set()  # messages being passed on to other replicas

    async def start(self, listening: Callable[[], Iterable[ServerSession]]) -> None:
        """Hear the other replicas' news and tell them this one's. ``listening``: the
        2026-07-28 requests being served here (their ``subscriptions/listen`` streams hear
        the news too)."""
        server = self.server
        loop = asyncio.get_running_loop()

        def spawn(news: dict[str, Any]) -> None:
            task = loop.create_task(self.shared.broadcast(news))
            self._passing.add(task)
            task.add_done_callback(self._passed)

        def tell(news: dict[str, Any]) -> None:  # from any thread (a sync tool adding a tool)
            if not loop.is_closed():
                loop.call_soon_threadsafe(spawn, news)

        for kind, catalog in (
            ("tools", server.registry),
            ("prompts", server.prompts),
            ("resources", server.resources),
            ("resources", server.resource_templates),
        ):
            catalog.on_change(functools.partial(tell, {"kind": kind}))
        server.on_resource_updated(lambda uri: tell({"kind": "updated", "uri": uri}))
        try:
            await self.shared.hear(functools.partial(self._heard, listening))
        except RedisUnavailable as exc:
            log.warning("replicas' list changes will not reach this one's subscribers: %s", exc)

    def _heard(self, listening: Callable[[], Iterable[ServerSession]], news: dict[str, Any]) -> None:
        """What another replica broadcast: told to the ``subscriptions/listen`` streams here,
        and to the legacy sessions whose ``GET`` stream is here."""
        kind, uri = news.get("kind"), news.get("uri")
        streams = [legacy.session for legacy in self.sessions.sessions.values() if legacy.standalone or legacy.detached]
        for session in [*listening(), *streams]:
            if kind in ("tools", "prompts", "resources"):
                session.list_changed(str(kind))
            elif kind == "updated" and isinstance(uri, str):
                session.resource_updated(uri)

    async def close(self) -> None:
        await self.shared.close()

    # -- sessions --------------------------------------------------------------------------------

    async def held(self, session_id: str, found: LegacySession | None, id: RequestId | None) -> LegacySession | None:
        """The session ``session_id`` (``found``: this process's copy, if any), its life
        renewed in Redis first (gone there: gone here, ``None``) and its shared state (log
        level, subscriptions) taken from there; one another replica opened is taken up. 503
        when Redis cannot be reached."""
        record = await self.call(self.shared.renew(session_id), id)
        if record is None:
            if found is not None:
                await self.sessions.end(session_id)
            return None
        if found is None:
            return await self._take_up(session_id, record, id)
        apply_state(found, record)
        return found

    def opened(self, legacy: LegacySession) -> None:
        """A session just opened here: messages for its ``GET`` stream made on other replicas
        reach it."""
        legacy.elsewhere = self._pass_on(legacy.id)

    async def share(self, legacy: LegacySession, client: str) -> None:
        """Write a session opened here to Redis and follow what is passed on for it."""
        connection = legacy.session.connection
        assert connection.legacy is not None
        record = {
            "version": connection.legacy.version,
            "capabilities": connection.client_capabilities,
            "clientInfo": connection.client_info,
            "owner": legacy.owner,
            "client": client,
        }
        await self.call(self.shared.register(legacy.id, record), None)
        await self.call(self.shared.follow(legacy.id, self._passed_on(legacy.id)), None)

    async def _take_up(self, session_id: str, record: dict[str, Any], id: RequestId | None) -> LegacySession:
        """A local copy of a session another replica opened."""
        connection = self.server.connection(terminator=b"")
        try:
            connection.adopt(record["version"], record.get("capabilities") or {}, record.get("clientInfo"))
            legacy = await self.sessions.create(
                self.server, connection, self.store, str(record.get("client", "")), id=session_id
            )
        except TooManySessions as exc:
            raise HttpError(exc.status, INTERNAL_ERROR, f"Service unavailable: {exc}", id) from None
        except (KeyError, TypeError):
            raise HttpError(404, INVALID_REQUEST, "Session not found: its shared record is unreadable", id) from None
        legacy.owner = record.get("owner")
        legacy.elsewhere = self._pass_on(session_id)
        apply_state(legacy, record)
        await self.call(self.shared.follow(session_id, self._passed_on(session_id)), id)
        return legacy

    async def end(self, session_id: str) -> None:
        """End a session on every replica."""
        await self.call(self.shared.end(session_id), None)

    # -- what a POST does to a shared session -------------------------------------------------------

    @staticmethod
    def state(legacy: LegacySession) -> dict[str, Any] | None:
        """A shared session's state before a POST (``None``: the session is not shared)."""
        return session_state(legacy) if legacy.elsewhere is not None else None

    async def share_changes(
        self, legacy: LegacySession, before: dict[str, Any], undo: bool, id: RequestId | None = None
    ) -> None:
        """Share what a POST changed of a session's state (``logging/setLevel``,
        ``resources/subscribe``) before it is answered, so that the client's next request
        finds it on every replica. Redis unreachable: with ``undo`` (nothing of the POST
        still running), the change is undone here too and the POST answered 503; otherwise
        it stays on this replica only, logged. ``id``: the POST's request, for the error."""
        after = session_state(legacy)
        if after == before:
            return
        try:
            await self.shared.remember(legacy.id, after)
        except RedisUnavailable as exc:
            if undo:
                apply_state(legacy, before)
                raise HttpError(503, INTERNAL_ERROR, f"Service unavailable: {exc}; nothing was changed", id) from None
            log.warning("a session's log level or subscriptions stay on this replica: %s", exc)

    async def from_client(self, legacy: LegacySession, body: bytes, id: RequestId | None) -> None:
        """Pass what the client sent (answers, cancellations) on to the replicas holding the
        session, for work running there."""
        if legacy.elsewhere is not None:
            await self.call(self.shared.publish(legacy.id, FROM_CLIENT, body), id)

    # -- passing messages on -------------------------------------------------------------------------

    def _pass_on(self, session_id: str) -> Callable[[Outgoing], None]:
        """What sends a message for the session's ``GET`` stream to the replica holding it."""

        def pass_on(message: Outgoing) -> None:
            if type(message) is Notification and message.method in BROADCAST:
                return

            task = asyncio.get_running_loop().create_task(self.shared.publish(session_id, TO_STREAM, message.data))
            self._passing.add(task)
            task.add_done_callback(self._passed)

        return pass_on

    def _passed(self, task: asyncio.Task[Any]) -> None:
        self._passing.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("a message for another replica was lost: %s", task.exception())

    def _passed_on(self, session_id: str) -> Callable[[bytes, bytes], None]:
        """What handles what another replica passed on for the session."""

        def handle(kind: bytes, data: bytes) -> None:
            legacy = self.sessions.sessions.get(session_id)
            if legacy is None:
                return
            if kind == FROM_CLIENT:
                legacy.session.feed_message(data)  # an answer or a cancellation for work running here
            elif kind == TO_STREAM:
                channel = legacy.standalone or legacy.detached
                if channel is not None:
                    channel.put(Relayed(data))
            elif kind == STATE:
                with contextlib.suppress(orjson.JSONDecodeError, AttributeError):
                    apply_state(legacy, orjson.loads(data))
            elif kind == ENDED:
                task = asyncio.get_running_loop().create_task(self.sessions.end(session_id))
                self._passing.add(task)
                task.add_done_callback(self._passing.discard)

        return handle

    async def call(self, operation: Awaitable[Any], id: RequestId | None) -> Any:
        """Await a Redis operation of the shared sessions; 503 saying so when Redis is down."""
        try:
            return await operation
        except RedisUnavailable as exc:
            raise HttpError(503, INTERNAL_ERROR, f"Service unavailable: {exc}; try again shortly", id) from None

    # -- resuming -------------------------------------------------------------------------------------

    async def resume(self, stream: str, after: int, send: Send, disconnected: asyncio.Event) -> None:
        """Resume a stream another replica served (its connection, or that replica, gone):
        replay its events kept in the shared store after ``after``, then each new one as it
        is stored, until the answer it carries arrives, the client leaves, or nothing comes
        for :data:`REMOTE_QUIET` seconds. 404 when the store has none of it."""
        assert self.store is not None
        kept = await self.store.replay_after(stream, after)
        if not kept and not await self.store.replay_after(stream, -1):  # a stream nobody kept
            raise HttpError(404, INVALID_REQUEST, "Not found: no stream to resume after that event")
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        quiet_until = time.monotonic() + REMOTE_QUIET
        while not disconnected.is_set() and time.monotonic() < quiet_until:
            if kept:
                frames = b"".join(sse.event(data, f"{stream}:{sequence}") for sequence, data in kept)
                await send({"type": "http.response.body", "body": frames, "more_body": True})
                after = kept[-1][0]
                if any(_is_answer(data) for _, data in kept):
                    break
                quiet_until = time.monotonic() + REMOTE_QUIET
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(disconnected.wait(), REMOTE_POLL)
            kept = await self.store.replay_after(stream, after)
        if not disconnected.is_set():
            await send({"type": "http.response.body", "body": b"", "more_body": False})


def _is_answer(data: bytes) -> bool:
    """Whether an event's message is a JSON-RPC answer (which ends a request's stream)."""
    with contextlib.suppress(orjson.JSONDecodeError):
        message = orjson.loads(data)
        return isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message)
    return False
