"""The 2026-07-28 POST of the Streamable HTTP endpoint: stateless, any process can serve any
request. The request's headers are checked against its body (``Mcp-Method``, ``Mcp-Name``,
``Mcp-Param-*``: 400 with ``-32020`` on a mismatch), a fresh (or idle, clean) connection
serves it, and the answer comes back as JSON, or as an SSE stream when progress or log
notifications come first. ``subscriptions/listen`` answers with a stream that stays open
(counted, per client and in all). Closing a response stream cancels its request."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from ...auth.identity import Identity
from ...protocol import http_headers
from ...protocol.errors import (
    HEADER_MISMATCH,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    ProtocolError,
)
from ...protocol.http_headers import shown
from ...protocol.incoming import Request, RequestId
from ...protocol.outgoing import Answer, Outgoing
from ...server.session import ServerSession
from .asgi import HttpError, Receive, Send, first_steps, first_turn, meta_version, request_id, stream_beside
from .channel import Channel, respond, respond_at_once
from .checks import UNKNOWN

if TYPE_CHECKING:
    from ...server.server import Server

#: Connection-and-session pairs kept for 2026-07-28 requests.
MAX_IDLE_WORKERS = 64
#: HTTP status of a 2026-07-28 error answer, by JSON-RPC code (others: 200).
_MODERN_STATUS = {
    METHOD_NOT_FOUND: 404,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
}


class ModernWire:
    """Serves the 2026-07-28 POSTs of one endpoint of ``server``: ``keep_alive`` seconds
    between SSE comments on quiet streams, at most ``max_streams`` open
    ``subscriptions/listen`` streams (``max_streams_per_client`` of one client)."""

    def __init__(self, server: Server, keep_alive: float, max_streams: int, max_streams_per_client: int) -> None:
        self.server = server
        self.keep_alive = keep_alive
        self.max_streams = max_streams
        self.max_streams_per_client = max_streams_per_client
        self._listening: dict[str, int] = {}  # open subscriptions/listen streams by client
        #: The 2026-07-28 requests being served.
        self.requests: set[ServerSession] = set()
        self._idle: list[_Stateless] = []  # ready for the next 2026-07-28 request

    async def close(self) -> None:
        """End every request being served: calls in flight are cancelled, subscriptions get
        their final response."""
        for session in [*self.requests, *(worker.session for worker in self._idle)]:
            await session.close(grace=0)
        self._idle.clear()

    async def post(
        self,
        headers: dict[str, str],
        client: str,
        caller: Identity | None,
        body: bytes,
        message: Any,
        receive: Receive,
        send: Send,
        target: Any,
    ) -> None:
        """A 2026-07-28 POST. ``target``: what the message names, if :meth:`~.checks.Checks.authorize`
        looked it up (else :data:`~.checks.UNKNOWN`): looked up at most once, here, and handed to
        the request, for the header check and the dispatch to read."""
        if not isinstance(message, dict):
            raise HttpError(400, INVALID_REQUEST, "Invalid Request: a POST carries one JSON-RPC object")
        if "method" not in message:
            problem = "Invalid Request: a 2026-07-28 client sends no responses"
            raise HttpError(400, INVALID_REQUEST, problem, request_id(message))
        if "id" not in message:
            await respond(send, 202)  # notifications carry nothing to act on over HTTP
            return
        version = headers.get(http_headers.PROTOCOL_VERSION)
        if version is None:
            problem = "Header mismatch: the MCP-Protocol-Version header is missing"
            raise HttpError(400, HEADER_MISMATCH, problem, request_id(message))
        stated = meta_version(message)
        if stated is not None and stated != version:
            problem = f"MCP-Protocol-Version header value {shown(version)} does not match body value {shown(stated)}"
            raise HttpError(400, HEADER_MISMATCH, f"Header mismatch: {problem}", request_id(message))
        calls = message.get("method") == "tools/call"
        if calls and target is UNKNOWN:
            target = self.server.target_of("tools/call", message.get("params"))
        try:
            http_headers.check_request(
                headers, message, target.header_parameters if calls and target is not None else None
            )
        except ProtocolError as exc:
            raise HttpError(400, exc.code, exc.message, request_id(message), exc.data) from None
        worker = self._idle.pop() if self._idle else _Stateless(self.server)
        worker.channel = Channel(1, status=_modern_status, keep_alive=self.keep_alive)
        worker.session.peer = client
        self.requests.add(worker.session)
        try:
            await self._serve(worker, client, caller, body, message, calls, target, receive, send)
        except BaseException as failure:
            if not self._done_with(worker, client):
                await worker.session.close(grace=0)
            raise failure  # by name, after the await: not a finally (mypyc, see toolwire.build)
        if not self._done_with(worker, client):
            await worker.session.close(grace=0)

    async def _serve(
        self,
        worker: _Stateless,
        client: str,
        caller: Identity | None,
        body: bytes,
        message: dict[str, Any],
        calls: bool,
        target: Any,
        receive: Receive,
        send: Send,
    ) -> None:
        """Answer ``message`` on ``worker``'s connection and session (see :meth:`post`)."""
        channel, session = worker.channel, worker.session
        assert channel is not None
        events = worker.connection.receive_message(body, message)
        for event in events:
            if type(event) is Answer:
                sending = respond_at_once(send, _immediate_status(event), event.data)
                if sending is not None:
                    await sending
                return
        request = events[0] if events else None
        if type(request) is Request:
            request.auth = caller
            if calls and target is not UNKNOWN:
                request.target = target  # no await since the look-up: still what it names
        listening = type(request) is Request and request.method == "subscriptions/listen"
        if listening:
            self._open_listen_stream(client, request_id(message))
            worker.listening = True
        rest = first_steps(session, events)
        if rest is None:
            answer = channel.immediate_answer()
            if answer is None and not channel.complete():
                await first_turn()
                answer = channel.immediate_answer()
            if answer is not None:
                sending = respond_at_once(send, _modern_status(answer), answer.data)
                if sending is not None:
                    await sending
                return
            if not listening and channel.complete():
                await channel.send_whole(send)  # all queued: nothing to wait for
                return
        serve = channel.stream if listening else channel.serve  # a subscription streams at once
        gone = (
            functools.partial(session.cancel, request.id, "the client closed the response stream")
            if isinstance(request, Request)
            else None
        )
        await stream_beside(rest, receive, functools.partial(serve, send), gone)

    def _done_with(self, worker: _Stateless, client: str) -> bool:
        """``worker``'s request is over: true if it is idle, ready for the next one; false if
        it is not clean, and its session must be closed."""
        if worker.listening:
            worker.listening = False
            self._close_listen_stream(client)
        self.requests.discard(worker.session)
        worker.channel = None
        # clean: nothing left of the request (no call, subscription or handshake state)
        if worker.session.idle and worker.connection.legacy is None and len(self._idle) < MAX_IDLE_WORKERS:
            self._idle.append(worker)
            return True
        return False

    def _open_listen_stream(self, client: str, id: RequestId | None) -> None:
        """Count a ``subscriptions/listen`` stream of ``client``; 429 at a cap."""
        mine = self._listening.get(client, 0)
        if mine >= self.max_streams_per_client or sum(self._listening.values()) >= self.max_streams:
            cap = "this client's" if mine >= self.max_streams_per_client else "the server's"
            raise HttpError(
                429,
                INVALID_REQUEST,
                f"Too many requests: {cap} subscriptions/listen streams are at their maximum; close one first",
                id,
            )
        self._listening[client] = mine + 1

    def _close_listen_stream(self, client: str) -> None:
        left = self._listening[client] - 1
        if left:
            self._listening[client] = left
        else:
            del self._listening[client]


class _Stateless:
    """A connection and a session that serve one 2026-07-28 request at a time, each on the
    channel of its own exchange. Requests are independent (any may come from any client),
    so a pair that is done cleanly serves the next: making one costs more than a call."""

    __slots__ = ("channel", "connection", "listening", "session")

    def __init__(self, server: Server) -> None:
        self.channel: Channel | None = None
        self.listening = False  # its request is a subscriptions/listen stream, counted
        self.connection = server.connection(terminator=b"")
        self.session = ServerSession(server, self.connection, route=self.route, listen=False)

    def route(self, message: Outgoing, related: RequestId | None) -> None:
        if self.channel is not None:
            self.channel.put(message)


def _modern_status(answer: Answer) -> int:
    code = answer.code
    return _MODERN_STATUS.get(code, 200) if code is not None else 200


def _immediate_status(answer: Answer) -> int:
    """Errors the protocol core answers before any handler runs: method not found is 404,
    everything else (bad ``_meta``, versions, malformed requests) 400."""
    code = answer.code
    if code is None:
        return 200
    return 404 if code == METHOD_NOT_FOUND else 400
