"""The legacy session wire of the Streamable HTTP endpoint (2025-03-26 … 2025-11-25):
``initialize`` opens a session (``Mcp-Session-Id``); later requests name it (404 once it is
gone: expired, deleted, never existed). The server may ask the client things (elicitation,
sampling) on the request's stream; the client answers with POSTs (202). ``GET`` opens the
session's stream for messages that belong to no request; ``GET`` with ``Last-Event-ID``
resumes a stream that lost its connection; ``DELETE`` ends the session. A dropped connection
does not cancel a call (``notifications/cancelled`` does). Stateless (no sessions kept):
every POST is served on its own, as if initialized."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from ...auth.identity import Identity
from ...protocol import http_headers, tokens
from ...protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR
from ...protocol.http_headers import shown
from ...protocol.identity import ServerIdentity
from ...protocol.incoming import Cancelled, Request, RequestId
from ...protocol.outgoing import Answer
from ...protocol.versions import HTTP_DEFAULT_VERSION, LEGACY_VERSIONS
from . import sse
from .asgi import (
    HttpError,
    Receive,
    Send,
    accepts,
    first_steps,
    first_turn,
    is_initialize,
    request_id,
    stream_beside,
    watching_disconnect,
)
from .channel import Channel, respond, respond_at_once
from .sessions import LegacySession, SessionManager, TooManySessions

if TYPE_CHECKING:
    from ...server.server import Server
    from .replicas import Replicas

SESSION_HEADER = b"mcp-session-id"
#: The same, as request headers are read (by name, decoded).
_SESSION_HEADER_NAME = "mcp-session-id"


class LegacyWire:
    """Serves the legacy POSTs, GETs and DELETEs of one endpoint of ``server``: its
    ``sessions``, their resumable streams' events in ``store`` (``None``: not resumable),
    shared with other ``replicas`` (or ``None``); ``retry_ms`` announced on resumable
    streams, ``keep_alive`` seconds between SSE comments on quiet ones."""

    def __init__(
        self,
        server: Server,
        sessions: SessionManager,
        store: sse.EventStore | None,
        replicas: Replicas | None,
        retry_ms: int,
        keep_alive: float,
    ) -> None:
        self.server = server
        self.sessions = sessions
        self.store = store
        self.replicas = replicas
        self.retry_ms = retry_ms
        self.keep_alive = keep_alive

    # -- POST --------------------------------------------------------------------------------------

    async def post(
        self,
        headers: dict[str, str],
        client: str,
        caller: Identity | None,
        body: bytes,
        message: Any,
        receive: Receive,
        send: Send,
    ) -> None:
        """A legacy POST: ``initialize`` without ``Mcp-Session-Id`` opens a session, anything
        else goes to the session it names."""
        session_id = headers.get(_SESSION_HEADER_NAME)
        if session_id is None:
            if not is_initialize(message):
                raise HttpError(
                    400,
                    INVALID_REQUEST,
                    "Bad Request: no Mcp-Session-Id header; open a session with initialize first",
                    request_id(message),
                )
            try:
                legacy = await self.sessions.create(
                    self.server, self.server.connection(terminator=b""), self.store, client
                )
                legacy.owner = legacy.session.owner = caller.name if caller is not None else None
            except TooManySessions as exc:
                what = "Too many requests" if exc.status == 429 else "Service unavailable"
                raise HttpError(exc.status, INTERNAL_ERROR, f"{what}: {exc}", request_id(message)) from None
            try:
                if self.replicas is not None:
                    self.replicas.opened(legacy)
                await self.exchange(legacy, caller, body, message, receive, send, opening=client)
            except BaseException as failure:
                await self.sessions.end(legacy.id)
                raise failure  # by name, after the await: not a finally (mypyc, see toolwire.build)
            if legacy.session.connection.legacy is None:  # the handshake failed: nothing opened
                await self.sessions.end(legacy.id)
            return
        id = request_id(message)
        if self.replicas is None:  # this process's sessions only: found without waiting
            found = _of_caller(self.sessions.get(session_id), caller, id)
        else:
            found = await self.held(session_id, caller, id)
        _check_version(found, headers, id)
        await self.exchange(found, caller, body, message, receive, send)

    async def exchange(
        self,
        legacy: LegacySession,
        caller: Identity | None,
        body: bytes,
        message: Any,
        receive: Receive,
        send: Send,
        opening: str | None = None,
    ) -> None:
        """Feed one POST to a session and answer it: 202 when it carried no request, else
        the answers (JSON, or a stream when more than the answer is to be sent).
        ``opening``: the POST opens the session for this client address (its id goes out once
        the handshake worked; replicas sharing sessions have it before the answer leaves, so
        that the client's next request finds it on any of them)."""
        replicas = self.replicas
        before = replicas.state(legacy) if replicas is not None else None  # a session shared by replicas
        events = legacy.session.connection.receive_message(body, message)
        opened = opening is not None and legacy.session.connection.legacy is not None
        headers = [(SESSION_HEADER, legacy.id.encode())] if opened else []
        immediate: list[Answer] = []
        others: list[Any] = []
        ids: list[RequestId] = []
        batched = False
        for event in events:
            if type(event) is Answer:
                immediate.append(event)
            else:
                others.append(event)
                if type(event) is Request:
                    event.auth = caller
                    ids.append(event.id)
                    batched = event.batch is not None
        if not ids:
            legacy.session.handle(others)
            for event in others:
                if isinstance(event, Cancelled):
                    legacy.forgo(event.request.id)
            if replicas is not None:
                await replicas.from_client(legacy, body, request_id(message))
                if before is not None:  # answered by the core
                    await replicas.share_changes(legacy, before, undo=True, id=request_id(message))
                if opened and opening is not None:
                    await replicas.share(legacy, opening)  # the core answered initialize itself
            if immediate:
                await respond(send, _legacy_status(immediate[0]), immediate[0].data, headers)
            else:
                await respond(send, 202, b"", headers)
            return
        resumable = legacy.resumable
        channel = Channel(
            1 if batched else len(ids),  # a batch is answered in one array
            headers=headers,
            status=_legacy_status,
            resumable=legacy.name_stream if resumable else None,
            store=self.store if resumable else None,
            retry_ms=self.retry_ms if resumable else None,
            keep_alive=self.keep_alive,
        )
        legacy.open(channel, ids)
        try:
            for early in immediate:
                channel.put(early)
            rest = first_steps(legacy.session, others)
            if rest is None and not channel.complete():
                await first_turn()
            if replicas is not None:
                if before is not None:
                    await replicas.share_changes(legacy, before, undo=rest is None, id=request_id(message))
                if opened and opening is not None:
                    await replicas.share(legacy, opening)
            if rest is None:
                answer = channel.immediate_answer()
                if answer is not None:
                    sending = respond_at_once(send, _legacy_status(answer), answer.data, headers)
                    if sending is not None:
                        await sending
                    return
                if channel.complete():
                    await channel.send_whole(send)  # all queued: nothing to wait for
                    return
            # resumable: the stream goes on keeping events until done, the client there or not
            await stream_beside(rest, receive, functools.partial(channel.serve, send))
        finally:
            legacy.release(channel, ids)

    async def post_stateless(
        self, version: str, caller: Identity | None, body: bytes, message: Any, receive: Receive, send: Send
    ) -> None:
        """A legacy POST without a session: served alone, on a connection initialized for it."""
        if version not in LEGACY_VERSIONS:
            version = HTTP_DEFAULT_VERSION
        connection = self.server.connection(terminator=b"", identity=_without_notifications(self.server.identity))
        if not is_initialize(message):
            connection.adopt(version, {}, None)  # as if an initialize for this version had opened it
        legacy = LegacySession("stateless", self.server, connection, None)
        try:
            await self.exchange(legacy, caller, body, message, receive, send)
        except BaseException as exc:
            await legacy.session.close(grace=0)
            raise exc  # by name, after the await: not a finally (mypyc, see toolwire.build)
        await legacy.session.close(grace=0)

    # -- GET and DELETE ------------------------------------------------------------------------

    async def get(self, headers: dict[str, str], caller: Identity | None, receive: Receive, send: Send) -> None:
        if not accepts(headers.get("accept", ""), "text/event-stream"):
            raise HttpError(406, INVALID_REQUEST, "Not Acceptable: a GET stream is text/event-stream")
        session_id = headers.get(_SESSION_HEADER_NAME)
        if session_id is None:
            raise HttpError(400, INVALID_REQUEST, "Bad Request: no Mcp-Session-Id header")
        legacy = await self.held(session_id, caller, None)
        _check_version(legacy, headers, None)
        stream = functools.partial(self._get_stream, legacy, headers.get("last-event-id"), send)
        await watching_disconnect(receive, stream)

    async def _get_stream(
        self, legacy: LegacySession, last: str | None, send: Send, disconnected: asyncio.Event
    ) -> None:
        """The GET stream of ``legacy``: resumed after event ``last``, or its standalone stream."""
        if last is not None:
            await self._resume(legacy, last, send, disconnected)
            return
        if legacy.standalone is not None:
            raise HttpError(409, INVALID_REQUEST, "Conflict: this session already has a GET stream open")
        resumable = legacy.resumable
        channel = Channel(
            0,
            resumable=legacy.name_stream if resumable else None,
            store=self.store if resumable else None,
            keep_alive=self.keep_alive,
        )
        if legacy.detached is not None:  # replaced: what waited for a resumption is dropped
            legacy.release(legacy.detached, [])
            legacy.detached = None
        await self._standalone(legacy, channel, channel.stream(send, disconnected))

    async def _standalone(self, legacy: LegacySession, channel: Channel, serving: Awaitable[Any]) -> None:
        """Serve a session's GET stream; when its connection drops, it waits (if resumable)
        for a GET with ``Last-Event-ID``, and another GET may open meanwhile."""
        legacy.standalone = channel
        try:
            await serving
        finally:
            if legacy.standalone is channel:
                legacy.standalone = None
            if channel.stream_id is not None and not channel.done:
                legacy.detached = channel
            else:
                legacy.release(channel, [])

    async def _resume(self, legacy: LegacySession, last: str, send: Send, disconnected: asyncio.Event) -> None:
        place = sse.split_event_id(last)
        if place is None:
            problem = f"Bad Request: Last-Event-ID {shown(last)} is not an event id of this server"
            raise HttpError(400, INVALID_REQUEST, problem)
        channel = legacy.streams.get(place[0])
        if channel is None and self.replicas is not None and self.store is not None:
            await self.replicas.resume(place[0], place[1], send, disconnected)
            return
        if channel is None or self.store is None:
            raise HttpError(404, INVALID_REQUEST, f"Not found: no stream to resume after event {shown(last)}")
        if channel is legacy.detached:
            if legacy.standalone is not None:
                raise HttpError(409, INVALID_REQUEST, "Conflict: this session already has a GET stream open")
            legacy.detached = None
            await self._standalone(legacy, channel, channel.resume(send, place[1], disconnected))
            return
        await channel.resume(send, place[1], disconnected)

    async def delete(self, headers: dict[str, str], caller: Identity | None, send: Send) -> None:
        session_id = headers.get(_SESSION_HEADER_NAME)
        if session_id is None:
            raise HttpError(
                400, INVALID_REQUEST, "Bad Request: DELETE needs the Mcp-Session-Id header of the session to end"
            )
        local = self.sessions.get(session_id)
        if local is not None:
            _check_version(local, headers, None)
        if self.replicas is not None:
            found = await self.held(session_id, caller, None)
            await self.replicas.end(session_id)
            await self.sessions.end(found.id)
            await respond(send, 200)
            return
        if (local is not None and not _owned_by(local, caller)) or not await self.sessions.end(session_id):
            raise HttpError(404, INVALID_REQUEST, "Session not found: it expired or was already ended")
        await respond(send, 200)

    async def held(self, session_id: str, caller: Identity | None, id: RequestId | None) -> LegacySession:
        """The session ``session_id`` of ``caller``: this process's, or with shared sessions
        the replicas' (see :meth:`Replicas.held`). 404 otherwise; 503 when Redis cannot be
        reached."""
        found = self.sessions.get(session_id)
        if self.replicas is not None and (found is not None or tokens.is_id(session_id)):  # others: not in Redis
            found = await self.replicas.held(session_id, found, id)
        return _of_caller(found, caller, id)


def _of_caller(found: LegacySession | None, caller: Identity | None, id: RequestId | None) -> LegacySession:
    """``found`` if there is one and ``caller`` may use it; 404 otherwise."""
    if found is None or not _owned_by(found, caller):
        raise HttpError(
            404, INVALID_REQUEST, "Session not found: it expired or was ended; open a new one with initialize", id
        )
    return found


def _check_version(legacy: LegacySession, headers: dict[str, str], id: RequestId | None) -> None:
    """400 when the request's ``MCP-Protocol-Version`` is not the version its session
    negotiated (a request without the header passes, as 2025-03-26 clients send none)."""
    version = headers.get(http_headers.PROTOCOL_VERSION)
    codec = legacy.session.connection.legacy
    if version is not None and codec is not None and version != codec.version:
        problem = f"MCP-Protocol-Version {shown(version)} is not this session's protocol version {codec.version}"
        raise HttpError(400, INVALID_REQUEST, f"Bad Request: {problem}", id)


def _owned_by(legacy: LegacySession, caller: Identity | None) -> bool:
    """Whether ``caller`` may use the session: the one who opened it (anyone, without auth)."""
    return legacy.owner is None or (caller is not None and caller.name == legacy.owner)


def _without_notifications(identity: ServerIdentity) -> ServerIdentity:
    """``identity`` promising no notifications (list changes, subscriptions): a stateless
    legacy server has no stream to send them on."""
    capabilities = {
        name: {key: value for key, value in offer.items() if key not in ("listChanged", "subscribe")}
        if isinstance(offer, dict)
        else offer
        for name, offer in identity.capabilities.items()
    }
    return ServerIdentity(
        identity.info,
        capabilities,
        identity.instructions,
        identity.ttl_ms,
        identity.cache_scope,
        contributions=identity.contributions,
    )


def _legacy_status(answer: Answer) -> int:
    """400 for a message refused before its id could be read (not JSON, not a request)."""
    return 400 if answer.code in (PARSE_ERROR, INVALID_REQUEST) and answer.id is None and not answer.batch else 200
