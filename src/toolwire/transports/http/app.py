"""Streamable HTTP: an ASGI application serving a :class:`~toolwire.Server` at one endpoint,
to clients of every protocol version at once.

Theory of operation
-------------------
Each POST carries one JSON-RPC message (or, in 2025-03-26, a batch). Which era it speaks is
read from the ``MCP-Protocol-Version`` header and the body's ``_meta``:

* **2026-07-28** (stateless): any process can serve any request. The request's headers are
  checked against its body (``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``: 400 with
  ``-32020`` on a mismatch), a fresh connection serves it, and the answer comes back as JSON,
  or as an SSE stream when progress or log notifications come first. ``subscriptions/listen``
  answers with a stream that stays open. Closing a response stream cancels its request.
  ``GET`` and ``DELETE`` are 405.
* **2025-03-26 … 2025-11-25**: ``initialize`` opens a session (``Mcp-Session-Id``); later
  requests name it (404 once it is gone: expired, deleted, never existed). The server may
  ask the client things (elicitation, sampling) on the request's stream; the client answers
  with POSTs (202). ``GET`` opens the session's stream for messages that belong to no
  request; ``GET`` with ``Last-Event-ID`` resumes a stream that lost its connection;
  ``DELETE`` ends the session. A dropped connection does not cancel a call
  (``notifications/cancelled`` does). With ``stateless=True`` no session is kept: every POST
  is served on its own, as if initialized (for deployments without sticky routing; the
  server can then not ask the client anything).

For both: ``Host`` and ``Origin`` are checked against DNS rebinding (403), bodies are
limited (413), and every refusal carries a JSON-RPC error a person can act on.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from ...auth.identity import Identity
from ...logs import get_logger
from ...protocol import http_headers
from ...protocol.connection import Cancelled, Request, RequestId, ServerIdentity, too_deep
from ...protocol.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    ProtocolError,
)
from ...protocol.http_headers import shown
from ...protocol.outgoing import Answer, Notification, Outgoing
from ...protocol.versions import (
    HTTP_DEFAULT_VERSION,
    LEGACY_VERSIONS,
    META_PROTOCOL_VERSION,
    MODERN_VERSIONS,
    SUPPORTED_VERSIONS,
)
from ...server.lifespan import LifespanFailed
from ...server.session import EAGER_TASKS, ServerSession
from ...server.stepping import at_once
from . import sse
from .channel import SSE_HEADERS, Channel, Relayed, respond
from .forwarded import TrustedProxies
from .sessions import LegacySession, SessionManager, TooManySessions

if TYPE_CHECKING:
    from ...auth.server.resource import AuthError, ProtectedResource
    from ...server.server import Server
    from .shared import SharedSessions

log = get_logger("toolwire.http")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

SESSION_HEADER = b"mcp-session-id"
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")
#: Connection-and-session pairs kept for 2026-07-28 requests.
MAX_IDLE_WORKERS = 64
#: Resuming a stream another replica served: how often its shared events are read, and how
#: long it stays open with nothing new.
REMOTE_POLL = 0.1
REMOTE_QUIET = 30.0
#: HTTP status of a 2026-07-28 error answer, by JSON-RPC code (others: 200).
_MODERN_STATUS = {METHOD_NOT_FOUND: 404, -32020: 400, -32021: 400, UNSUPPORTED_PROTOCOL_VERSION: 400}


class HttpError(Exception):
    """A refusal before any JSON-RPC processing: HTTP ``status`` and a JSON-RPC error (and
    ``headers`` to send with it)."""

    def __init__(
        self,
        status: int,
        code: int,
        message: str,
        id: RequestId | None = None,
        data: Any = None,
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error = ProtocolError(code, message, data)
        self.id = id
        self.headers = headers or []

    def body(self) -> bytes:
        return orjson.dumps({"jsonrpc": "2.0", "id": self.id, "error": self.error.to_dict()})


class StreamableHTTP:
    """The ASGI application; see the module's documentation. Options:

    - ``path``: the MCP endpoint (``/mcp``); other paths are 404.
    - ``allowed_hosts``: extra ``Host`` values (``host`` or ``host:port``) to accept besides
      localhost, for deployments behind a proxy or on a public name; ``["*"]`` accepts any.
    - ``allowed_origins``: extra ``Origin`` values to accept (``"*"``: any); by default only
      local origins and those of ``allowed_hosts``. Requests without ``Origin`` pass.
    - ``max_body_bytes``: larger bodies are refused with 413.
    - ``stateless``: keep no legacy sessions (see above).
    - ``session_idle_timeout`` (seconds, ``None`` for never), ``max_sessions`` and
      ``max_sessions_per_client``: at a cap, the least recently used idle session (the
      client's own, at its cap) is ended to make room; when all are busy, 429 (the client's
      cap) or 503 (the server's). A client is its address.
    - ``max_streams`` and ``max_streams_per_client``: open ``subscriptions/listen`` streams
      (2026-07-28); more are refused with 429.
    - ``body_timeout``: seconds a request body may take to arrive in full (408 after).
    - ``event_store``: where resumable streams keep their events (default: in memory);
      ``None`` together with ``resumable=False`` makes streams not resumable.
    - ``retry_ms``: the reconnection delay announced on resumable streams.
    - ``keep_alive``: seconds between SSE comments on otherwise quiet streams.
    - ``redis``: a Redis URL shared with other replicas of this server (default: the
      server's :meth:`~toolwire.Server.use_redis`): legacy sessions are then accepted by
      every replica, and their streams' events kept in Redis (see docs/scaling.md).
    - ``auth``: a :class:`~toolwire.auth.ProtectedResource`: every request needs a bearer
      token it accepts (401 otherwise), the metadata is served at its well-known paths, and
      what needs scopes a token lacks is refused with 403 (see docs/authorization.md).
      Legacy sessions belong to the caller that opened them. Per-client caps then count by
      caller instead of by address.
    - ``forwarded_allow_ips``: the reverse proxies (addresses, networks, ``"*"``) whose
      ``X-Forwarded-For`` (or ``Forwarded``) names the client: a request from one of them
      counts as its client's for the per-client caps and anonymous callers' rate limits
      (see :class:`~.forwarded.TrustedProxies`). By default no peer is trusted.
    """

    def __init__(
        self,
        server: Server,
        *,
        path: str = "/mcp",
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        max_body_bytes: int = 4 * 1024 * 1024,
        stateless: bool = False,
        session_idle_timeout: float | None = 30 * 60,
        max_sessions: int = 10_000,
        max_sessions_per_client: int = 100,
        max_streams: int = 1_000,
        max_streams_per_client: int = 32,
        body_timeout: float = 30.0,
        event_store: sse.EventStore | None = None,
        resumable: bool = True,
        retry_ms: int = 1000,
        keep_alive: float = 15.0,
        auth: ProtectedResource | None = None,
        redis: str | None = None,
        forwarded_allow_ips: TrustedProxies | str | Iterable[str] | None = None,
    ) -> None:
        self.server = server
        #: Whose forwarding headers name the client (see :meth:`TrustedProxies.client`).
        self.proxies = (
            forwarded_allow_ips
            if isinstance(forwarded_allow_ips, TrustedProxies)
            else TrustedProxies(forwarded_allow_ips)
        )
        self.path = path.rstrip("/") or "/"
        self.allowed_hosts = {host.lower() for host in allowed_hosts}
        self.allowed_origins = {origin.lower().rstrip("/") for origin in allowed_origins}
        self.max_body_bytes = max_body_bytes
        self.stateless = stateless
        self.sessions = SessionManager(max_sessions, session_idle_timeout, max_sessions_per_client)
        self.max_streams = max_streams
        self.max_streams_per_client = max_streams_per_client
        self.body_timeout = body_timeout
        self._listening: dict[str, int] = {}  # open subscriptions/listen streams by client
        redis = redis if redis is not None else server.redis_url
        #: Legacy sessions shared with other replicas through Redis (``None``: this process only).
        self.shared: SharedSessions | None = None
        if redis is not None:
            from ...stores.redis import RedisEventStore
            from .shared import SharedSessions

            self.shared = SharedSessions(redis, idle_timeout=session_idle_timeout)
            if event_store is None and resumable:
                event_store = RedisEventStore(redis)
        self.store = event_store if event_store is not None else (sse.MemoryEventStore() if resumable else None)
        self._passing: set[asyncio.Task[Any]] = set()  # messages being passed on to other replicas
        self.retry_ms = retry_ms
        self.keep_alive = keep_alive
        self._good_hosts: set[str] = set()  # Host values already found allowed
        self._requests: set[ServerSession] = set()  # the 2026-07-28 requests being served
        self._idle: list[_Stateless] = []  # ready for the next 2026-07-28 request
        self._started = False  # the server's lifespan entered
        self.auth = auth
        self._metadata_paths = auth.metadata_paths(self.path) if auth is not None else set()
        self._auth_error: type[AuthError] | tuple[()] = ()  # what a refusal raises, once auth is there
        if auth is not None:
            from ...auth.server.resource import AuthError

            self._auth_error = AuthError
        catalogs = (server.registry, server.resources, server.resource_templates, server.prompts)
        self._gated = any(catalog.gated for catalog in catalogs)  # kept current by the catalogs

        app = weakref.ref(self)

        def regate() -> None:
            alive = app()
            if alive is not None:
                alive._gated = any(catalog.gated for catalog in catalogs)

        for catalog in catalogs:
            catalog.on_change(regate)
        if auth is None and self._gated:
            log.warning(
                "some tools, resources or prompts need scopes, but this HTTP server has no auth=: "
                "nothing checks them, and anyone who can reach it may use them"
            )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if not self._started:  # an ASGI server (or a parent app) that sends no lifespan events
            await self._start()
        try:
            await self._http(scope, receive, send)
        except HttpError as exc:
            allowed = b"POST" if self.stateless else b"GET, POST, DELETE"
            allow = [(b"allow", allowed)] if exc.status == 405 and not exc.headers else []
            await respond(send, exc.status, exc.body(), allow + exc.headers)

    async def close(self) -> None:
        """End every session and stream: calls in flight are cancelled, 2026-07-28
        subscriptions get their final response, every response stream ends; tasks still
        running are stored as interrupted."""
        await self.sessions.close()
        for session in [*self._requests, *(worker.session for worker in self._idle)]:
            await session.close(grace=0)
        self._idle.clear()
        await self.server.close_tasks()
        if self.shared is not None:
            await self.shared.close()

    async def _start(self) -> None:
        """Enter the server's lifespan, once (``LifespanFailed`` if it raises); with shared
        sessions, hear the other replicas' news and tell them this one's."""
        self._started = True
        try:
            await self.server.start()
            if self.shared is not None:
                await self._share_news(self.shared)
        except BaseException:
            self._started = False
            raise

    async def _share_news(self, shared: SharedSessions) -> None:
        from .shared import RedisUnavailable

        server = self.server
        loop = asyncio.get_running_loop()

        def spawn(news: dict[str, Any]) -> None:
            task = loop.create_task(shared.broadcast(news))
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
            await shared.hear(self._heard)
        except RedisUnavailable as exc:
            log.warning("replicas' list changes will not reach this one's subscribers: %s", exc)

    def _heard(self, news: dict[str, Any]) -> None:
        """What another replica broadcast: told to the ``subscriptions/listen`` streams here,
        and to the legacy sessions whose ``GET`` stream is here."""
        kind, uri = news.get("kind"), news.get("uri")
        streams = [legacy.session for legacy in self.sessions.sessions.values() if legacy.standalone or legacy.detached]
        for session in [*self._requests, *streams]:
            if kind in ("tools", "prompts", "resources"):
                session.list_changed(str(kind))
            elif kind == "updated" and isinstance(uri, str):
                session.resource_updated(uri)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self._start()
                except LifespanFailed as exc:
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.close()
                if self._started:
                    self._started = False
                    await self.server.stop()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # -- routing -----------------------------------------------------------------------------

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = _route_path(scope).rstrip("/") or "/"
        if path != self.path:
            if path in self._metadata_paths:
                await self._metadata(scope, send)
                return
            raise HttpError(404, INVALID_REQUEST, f"Not found: the MCP endpoint is {self.path}")
        headers = _headers(scope)
        self._check_origin(headers)
        caller = await self._authenticate(headers) if self.auth is not None else None
        client = f"caller:{caller.name}" if caller is not None else self.proxies.client(scope)
        method = scope.get("method")
        version = headers.get(http_headers.PROTOCOL_VERSION)
        if method == "POST":
            await self._post(headers, client, caller, receive, send)
        elif method == "GET":
            if version in MODERN_VERSIONS or self.stateless:
                raise HttpError(405, INVALID_REQUEST, "Method not allowed: this endpoint opens no GET stream")
            await self._get(headers, caller, receive, send)
        elif method == "DELETE":
            if version in MODERN_VERSIONS or self.stateless:
                raise HttpError(405, INVALID_REQUEST, "Method not allowed: there are no sessions to end")
            await self._delete(headers, caller, send)
        else:
            raise HttpError(405, INVALID_REQUEST, f"Method not allowed: {method} (use POST, GET or DELETE)")

    def _check_origin(self, headers: dict[str, str]) -> None:
        """403 for a ``Host`` or ``Origin`` this server does not answer to (DNS rebinding)."""
        host = headers.get("host", "")
        if host not in self._good_hosts:
            host = host.lower()
            if "*" not in self.allowed_hosts and not _host_allowed(host, self.allowed_hosts):
                raise HttpError(403, INVALID_REQUEST, f"Forbidden: Host {host!r} is not allowed (see allowed_hosts)")
            if len(self._good_hosts) < 1024:
                self._good_hosts.add(headers.get("host", ""))
        origin = headers.get("origin")
        if origin is None or "*" in self.allowed_origins:
            return
        origin = origin.lower().rstrip("/")
        if origin in self.allowed_origins:
            return
        parts = urlsplit(origin)
        if parts.scheme in ("http", "https") and _host_allowed(parts.netloc, self.allowed_hosts - {"*"}):
            return
        raise HttpError(403, INVALID_REQUEST, f"Forbidden: Origin {origin!r} is not allowed (see allowed_origins)")

    # -- authorization -------------------------------------------------------------------------

    async def _metadata(self, scope: Scope, send: Send) -> None:
        """The Protected Resource Metadata document, to anyone (it is public, and browsers'
        clients may read it from other origins)."""
        assert self.auth is not None
        self._check_origin({"host": _headers(scope).get("host", "")})
        if scope.get("method") not in ("GET", "HEAD"):
            raise HttpError(
                405,
                INVALID_REQUEST,
                "Method not allowed: the resource metadata is read with GET",
                headers=[(b"allow", b"GET, HEAD")],
            )
        cors = [(b"access-control-allow-origin", b"*"), (b"cache-control", b"public, max-age=3600")]
        await respond(send, 200, orjson.dumps(self.auth.metadata()), cors)

    async def _authenticate(self, headers: dict[str, str]) -> Identity:
        """The caller of a request to the endpoint; 401 (or 403) with the challenge otherwise."""
        assert self.auth is not None
        try:
            caller = await self.auth.authenticate(headers.get("authorization"))
            if self.auth.required_scopes:
                self.auth.require(caller, (), "this server")
        except self._auth_error as exc:
            raise _refused(exc) from None
        return caller

    def _authorize(self, message: Any, caller: Identity | None) -> Any:
        """403 if ``message`` (or one of a batch) names a tool, resource or prompt whose
        scopes ``caller`` lacks. Returns what a single message names (see
        :meth:`Server.target_of`), when it had to be looked up, else :data:`_UNKNOWN`."""
        if caller is None or self.auth is None or not self._gated:
            return _UNKNOWN
        target = _UNKNOWN
        for item in message if isinstance(message, list) else (message,):
            if isinstance(item, dict) and isinstance(item.get("method"), str):
                method, params = item["method"], item.get("params")
                target = self.server.target_of(method, params)
                required, what = self.server.scopes_for(method, params, target)
                if required:
                    try:
                        self.auth.require(caller, required, what)
                    except self._auth_error as exc:
                        raise _refused(exc, _id(item)) from None
        return target if isinstance(message, dict) else _UNKNOWN

    # -- POST --------------------------------------------------------------------------------

    async def _post(
        self, headers: dict[str, str], client: str, caller: Identity | None, receive: Receive, send: Send
    ) -> None:
        content_type = headers.get("content-type", "")
        if not content_type.split(";")[0].strip().lower() == "application/json":
            raise HttpError(415, INVALID_REQUEST, "Unsupported Media Type: the body must be application/json")
        if not _accepts_json_and_sse(headers.get("accept", "")):
            raise HttpError(
                406,
                INVALID_REQUEST,
                "Not Acceptable: the Accept header must list application/json and text/event-stream",
            )
        body = await self._body(headers, receive)
        try:
            message = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise HttpError(400, PARSE_ERROR, f"Parse error: the body is not valid JSON ({exc})") from None
        limit = self.server.max_depth
        if too_deep(body, message, limit):  # before any of it is looked at
            raise HttpError(400, INVALID_REQUEST, f"Invalid Request: JSON nested deeper than {limit} levels")
        version = headers.get(http_headers.PROTOCOL_VERSION)
        if version is not None and version not in SUPPORTED_VERSIONS:
            raise HttpError(
                400,
                UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version: {version!r}",
                _id(message),
                {"supported": list(SUPPORTED_VERSIONS), "requested": version},
            )
        target = self._authorize(message, caller)
        if version in MODERN_VERSIONS or _meta_version(message) is not None:
            await self._modern(headers, client, caller, body, message, receive, send, target)
        elif self.stateless:
            await self._stateless_legacy(version or HTTP_DEFAULT_VERSION, caller, body, message, receive, send)
        else:
            await self._legacy(headers, client, caller, body, message, receive, send)

    async def _body(self, headers: dict[str, str], receive: Receive) -> bytes:
        """The request's body: 413 past ``max_body_bytes``, 408 (and the connection closed)
        when it takes longer than ``body_timeout`` (timed only when it is not all there at
        once, as it nearly always is), 400 when the client goes away first."""
        limit = self.max_body_bytes
        declared = headers.get("content-length")
        if declared is not None and declared.isascii() and declared.isdigit() and int(declared) > limit:
            raise HttpError(413, INVALID_REQUEST, f"Payload too large: {declared} bytes exceeds the limit of {limit}")
        message, rest = at_once(receive())
        if rest is None and message["type"] == "http.request" and not message.get("more_body"):
            body: bytes = message.get("body", b"")
            if len(body) > limit:
                raise HttpError(413, INVALID_REQUEST, f"Payload too large: the body exceeds the limit of {limit} bytes")
            return body
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.body_timeout):
                while True:
                    if rest is not None:
                        message, rest = await rest, None
                    elif message is None:
                        message = await receive()
                    if message["type"] == "http.disconnect":
                        raise HttpError(400, INVALID_REQUEST, "the client went away while sending the body")
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > limit:
                        problem = f"Payload too large: the body exceeds the limit of {limit} bytes"
                        raise HttpError(413, INVALID_REQUEST, problem)
                    chunks.append(chunk)
                    if not message.get("more_body"):
                        return b"".join(chunks)
                    message = None
        except TimeoutError:
            problem = f"Request timeout: the body did not arrive within {self.body_timeout:g} s"
            raise HttpError(408, INVALID_REQUEST, problem, headers=[(b"connection", b"close")]) from None

    # -- 2026-07-28 ----------------------------------------------------------------------------

    async def _modern(
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
        """A 2026-07-28 POST. ``target``: what the message names, if :meth:`_authorize`
        looked it up (else :data:`_UNKNOWN`): looked up at most once, here, and handed to
        the request, for the header check and the dispatch to read."""
        if not isinstance(message, dict):
            raise HttpError(400, INVALID_REQUEST, "Invalid Request: a POST carries one JSON-RPC object")
        id = _id(message)
        if "method" not in message:
            raise HttpError(400, INVALID_REQUEST, "Invalid Request: a 2026-07-28 client sends no responses", id)
        if "id" not in message:
            await respond(send, 202)  # notifications carry nothing to act on over HTTP
            return
        version = headers.get(http_headers.PROTOCOL_VERSION)
        if version is None:
            raise HttpError(400, -32020, "Header mismatch: the MCP-Protocol-Version header is missing", id)
        meta_version = _meta_version(message)
        if meta_version is not None and meta_version != version:
            problem = (
                f"MCP-Protocol-Version header value {shown(version)} does not match body value {shown(meta_version)}"
            )
            raise HttpError(400, -32020, f"Header mismatch: {problem}", id)
        calls = message.get("method") == "tools/call"
        if calls and target is _UNKNOWN:
            target = self.server.target_of("tools/call", message.get("params"))
        try:
            http_headers.check_request(
                headers, message, target.header_parameters if calls and target is not None else None
            )
        except ProtocolError as exc:
            raise HttpError(400, exc.code, exc.message, id, exc.data) from None
        worker = self._idle.pop() if self._idle else _Stateless(self.server)
        worker.channel = channel = Channel(1, status=_modern_status, keep_alive=self.keep_alive)
        connection, session = worker.connection, worker.session
        session.peer = client
        self._requests.add(session)
        listening = False
        try:
            events = connection.receive_message(body, message)
            for event in events:
                if type(event) is Answer:
                    await respond(send, _immediate_status(event), event.data)
                    return
            request = events[0] if events else None
            if type(request) is Request:
                request.auth = caller
                if calls and target is not _UNKNOWN:
                    request.target = target  # no await since the look-up: still what it names
            if type(request) is Request and request.method == "subscriptions/listen":
                self._open_listen_stream(client, id)
                listening = True
            rest = await _first_steps(session, events)
            if rest is None:
                answer = channel.immediate_answer()
                if answer is not None:
                    await respond(send, _modern_status(answer), answer.data)
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
            await _stream_beside(rest, receive, functools.partial(serve, send), gone)
        finally:
            if listening:
                self._close_listen_stream(client)
            self._requests.discard(session)
            worker.channel = None
            if worker.clean and len(self._idle) < MAX_IDLE_WORKERS:
                self._idle.append(worker)
            else:
                await session.close(grace=0)

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

    # -- 2025-03-26 … 2025-11-25 ---------------------------------------------------------------

    async def _legacy(
        self,
        headers: dict[str, str],
        client: str,
        caller: Identity | None,
        body: bytes,
        message: Any,
        receive: Receive,
        send: Send,
    ) -> None:
        session_id = headers.get(SESSION_HEADER.decode())
        if session_id is None:
            if not _is_initialize(message):
                raise HttpError(
                    400,
                    INVALID_REQUEST,
                    "Bad Request: no Mcp-Session-Id header; open a session with initialize first",
                    _id(message),
                )
            try:
                legacy = await self.sessions.create(
                    self.server, self.server.connection(terminator=b""), self.store, client
                )
                legacy.owner = caller.name if caller is not None else None
            except TooManySessions as exc:
                what = "Too many requests" if exc.status == 429 else "Service unavailable"
                raise HttpError(exc.status, INTERNAL_ERROR, f"{what}: {exc}", _id(message)) from None
            ok = False
            try:
                if self.shared is not None:
                    legacy.elsewhere = self._pass_on(legacy.id)
                await self._exchange(legacy, caller, body, message, receive, send, opening=client)
                ok = legacy.session.connection.legacy is not None
            finally:
                if not ok:
                    await self.sessions.end(legacy.id)
            return
        found = await self._held(session_id, caller, _id(message))
        _check_version(found, headers, _id(message))
        await self._exchange(found, caller, body, message, receive, send)

    async def _share_changes(
        self, legacy: LegacySession, before: dict[str, Any], undo: bool, id: RequestId | None = None
    ) -> None:
        """Share what a POST changed of a session's state (``logging/setLevel``,
        ``resources/subscribe``) before it is answered, so that the client's next request
        finds it on every replica. Redis unreachable: with ``undo`` (nothing of the POST
        still running), the change is undone here too and the POST answered 503; otherwise
        it stays on this replica only, logged. ``id``: the POST's request, for the error."""
        from .shared import RedisUnavailable, apply_state, session_state

        assert self.shared is not None
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

    async def _exchange(
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
        if self.shared is not None and legacy.elsewhere is not None:  # a session shared by replicas
            from .shared import session_state

            before: dict[str, Any] | None = session_state(legacy)
        else:
            before = None
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
            if self.shared is not None and legacy.elsewhere is not None:
                from .shared import FROM_CLIENT

                await self._shared_call(self.shared.publish(legacy.id, FROM_CLIENT, body), _id(message))
            if before is not None:
                await self._share_changes(legacy, before, undo=True, id=_id(message))  # answered by the core
            if opened and opening is not None and self.shared is not None:
                await self._share(legacy, opening)  # the core answered initialize itself
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
            rest = await _first_steps(legacy.session, others)
            if before is not None:
                await self._share_changes(legacy, before, undo=rest is None, id=_id(message))
            if opened and opening is not None and self.shared is not None:
                await self._share(legacy, opening)
            if rest is None:
                answer = channel.immediate_answer()
                if answer is not None:
                    await respond(send, _legacy_status(answer), answer.data, headers)
                    return
                if channel.complete():
                    await channel.send_whole(send)  # all queued: nothing to wait for
                    return
            # resumable: the stream goes on keeping events until done, the client there or not
            await _stream_beside(rest, receive, functools.partial(channel.serve, send))
        finally:
            legacy.release(channel, ids)

    async def _stateless_legacy(
        self, version: str, caller: Identity | None, body: bytes, message: Any, receive: Receive, send: Send
    ) -> None:
        """A legacy POST without a session: served alone, on a connection initialized for it."""
        if version not in LEGACY_VERSIONS:
            version = HTTP_DEFAULT_VERSION
        connection = self.server.connection(terminator=b"", identity=_without_notifications(self.server.identity))
        if not _is_initialize(message):
            connection.adopt(version, {}, None)  # as if an initialize for this version had opened it
        legacy = LegacySession("stateless", self.server, connection, None)
        try:
            await self._exchange(legacy, caller, body, message, receive, send)
        finally:
            await legacy.session.close(grace=0)

    # -- GET and DELETE ------------------------------------------------------------------------

    async def _get(self, headers: dict[str, str], caller: Identity | None, receive: Receive, send: Send) -> None:
        if not _accepts(headers.get("accept", ""), "text/event-stream"):
            raise HttpError(406, INVALID_REQUEST, "Not Acceptable: a GET stream is text/event-stream")
        session_id = headers.get(SESSION_HEADER.decode())
        if session_id is None:
            raise HttpError(400, INVALID_REQUEST, "Bad Request: no Mcp-Session-Id header")
        legacy = await self._held(session_id, caller, None)
        _check_version(legacy, headers, None)
        last = headers.get("last-event-id")
        async with _watch_disconnect(receive) as disconnected:
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
        if channel is None and self.shared is not None and self.store is not None:
            await self._resume_elsewhere(place[0], place[1], send, disconnected)
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

    async def _resume_elsewhere(self, stream: str, after: int, send: Send, disconnected: asyncio.Event) -> None:
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

    async def _delete(self, headers: dict[str, str], caller: Identity | None, send: Send) -> None:
        session_id = headers.get(SESSION_HEADER.decode())
        if session_id is None:
            raise HttpError(
                400, INVALID_REQUEST, "Bad Request: DELETE needs the Mcp-Session-Id header of the session to end"
            )
        local = self.sessions.get(session_id)
        if local is not None:
            _check_version(local, headers, None)
        if self.shared is not None:
            found = await self._held(session_id, caller, None)
            await self._shared_call(self.shared.end(session_id), None)
            await self.sessions.end(found.id)
            await respond(send, 200)
            return
        if (local is not None and not _owned_by(local, caller)) or not await self.sessions.end(session_id):
            raise HttpError(404, INVALID_REQUEST, "Session not found: it expired or was already ended")
        await respond(send, 200)

    # -- sessions shared by replicas -----------------------------------------------------------

    async def _held(self, session_id: str, caller: Identity | None, id: RequestId | None) -> LegacySession:
        """The session ``session_id`` of ``caller``: this process's; with shared sessions, its
        life renewed in Redis first (gone there: gone here) and its shared state (log level,
        subscriptions) taken from there, and one another replica opened taken up. 404
        otherwise; 503 when Redis cannot be reached."""
        found = self.sessions.get(session_id)
        if self.shared is not None:
            from .shared import apply_state

            record = await self._shared_call(self.shared.renew(session_id), id)
            if record is None:
                if found is not None:
                    await self.sessions.end(session_id)
                found = None
            elif found is None:
                found = await self._take_up(session_id, record, id)
            else:
                apply_state(found, record)
        if found is None or not _owned_by(found, caller):
            raise HttpError(
                404, INVALID_REQUEST, "Session not found: it expired or was ended; open a new one with initialize", id
            )
        return found

    async def _share(self, legacy: LegacySession, client: str) -> None:
        """Write a session opened here to Redis and follow what is passed on for it."""
        assert self.shared is not None
        connection = legacy.session.connection
        assert connection.legacy is not None
        record = {
            "version": connection.legacy.version,
            "capabilities": connection.client_capabilities,
            "clientInfo": connection.client_info,
            "owner": legacy.owner,
            "client": client,
        }
        await self._shared_call(self.shared.register(legacy.id, record), None)
        await self._shared_call(self.shared.follow(legacy.id, self._passed_on(legacy.id)), None)

    async def _take_up(self, session_id: str, record: dict[str, Any], id: RequestId | None) -> LegacySession:
        """A local copy of a session another replica opened."""
        from .shared import apply_state

        assert self.shared is not None
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
        await self._shared_call(self.shared.follow(session_id, self._passed_on(session_id)), id)
        return legacy

    def _pass_on(self, session_id: str) -> Callable[[Outgoing], None]:
        """What sends a message for the session's ``GET`` stream to the replica holding it."""

        def pass_on(message: Outgoing) -> None:
            from .shared import BROADCAST, TO_STREAM

            if self.shared is None or (type(message) is Notification and message.method in BROADCAST):
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
        from .shared import ENDED, FROM_CLIENT, STATE, TO_STREAM, apply_state

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

    async def _shared_call(self, operation: Awaitable[Any], id: RequestId | None) -> Any:
        """Await a Redis operation of the shared sessions; 503 saying so when Redis is down."""
        from .shared import RedisUnavailable

        try:
            return await operation
        except RedisUnavailable as exc:
            raise HttpError(503, INTERNAL_ERROR, f"Service unavailable: {exc}; try again shortly", id) from None


class _Stateless:
    """A connection and a session that serve one 2026-07-28 request at a time, each on the
    channel of its own exchange. Requests are independent (any may come from any client),
    so a pair that is done cleanly serves the next: making one costs more than a call."""

    __slots__ = ("channel", "connection", "session")

    def __init__(self, server: Server) -> None:
        self.channel: Channel | None = None
        self.connection = server.connection(terminator=b"")
        self.session = ServerSession(server, self.connection, route=self.route, listen=False)

    def route(self, message: Outgoing, related: RequestId | None) -> None:
        if self.channel is not None:
            self.channel.put(message)

    @property
    def clean(self) -> bool:
        """Nothing left of the last request: no call, subscription or handshake state."""
        return self.session.idle and self.connection.legacy is None


# -- helpers ---------------------------------------------------------------------------------

#: What a message names, when it was not looked up (yet).
_UNKNOWN: Any = object()


def _refused(exc: AuthError, id: RequestId | None = None) -> HttpError:
    """An authorization refusal as an HTTP answer: its status, the challenge, a JSON-RPC error."""
    challenge = [(b"www-authenticate", exc.challenge.encode("latin-1", "replace"))]
    return HttpError(exc.status, INVALID_REQUEST, str(exc), id, headers=challenge)


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
    return ServerIdentity(identity.info, capabilities, identity.instructions, identity.ttl_ms, identity.cache_scope)


def _route_path(scope: Scope) -> str:
    """The request's path below where the app is mounted (``root_path``), if it is."""
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


def _headers(scope: Scope) -> dict[str, str]:
    """Request headers by name (ASGI servers give names in lower case; the last one wins
    for repeated names)."""
    return {name.decode("latin-1"): value.decode("latin-1") for name, value in scope.get("headers", ())}


def _host_allowed(host: str, extra: set[str]) -> bool:
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name in LOCAL_HOSTS or host in extra or name in extra


@functools.lru_cache(maxsize=256)
def _accepts_json_and_sse(accept: str) -> bool:
    return _accepts(accept, "application/json") and _accepts(accept, "text/event-stream")


@functools.lru_cache(maxsize=256)
def _accepts(accept: str, kind: str) -> bool:
    major = kind.split("/")[0]
    for item in accept.split(","):
        media = item.split(";")[0].strip().lower()
        if media in (kind, "*/*", f"{major}/*"):
            return True
    return False


def _is_answer(data: bytes) -> bool:
    """Whether an event's message is a JSON-RPC answer (which ends a request's stream)."""
    with contextlib.suppress(orjson.JSONDecodeError):
        message = orjson.loads(data)
        return isinstance(message, dict) and "method" not in message and ("result" in message or "error" in message)
    return False


def _id(message: Any) -> RequestId | None:
    id = message.get("id") if isinstance(message, dict) else None
    return id if isinstance(id, (str, int)) and not isinstance(id, bool) else None


def _meta_version(message: Any) -> Any:
    if not isinstance(message, dict):
        return None
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None


def _is_initialize(message: Any) -> bool:
    return isinstance(message, dict) and message.get("method") == "initialize"


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


def _legacy_status(answer: Answer) -> int:
    """400 for a message refused before its id could be read (not JSON, not a request)."""
    return 400 if answer.code in (PARSE_ERROR, INVALID_REQUEST) and answer.id is None and not answer.batch else 200


async def _first_steps(session: ServerSession, events: list[Any]) -> Awaitable[None] | None:
    """Hand a POST's ``events`` to ``session``, and let the calls they start take their
    first step before the answer is waited for: most tools finish in it, and their answer
    then goes out whole, without the machinery of waiting (a disconnect watcher, wake-ups,
    keep-alive timers). Python 3.12 and later start calls at once (eager tasks). On 3.11 a
    call runs in this task (see :meth:`ServerSession.handle_inline`), and when it waits
    the rest of it is returned, to be awaited here; other calls get one turn of the loop."""
    if EAGER_TASKS:
        session.handle(events)
        return None
    work = session.handle_inline(events)
    if work is None:
        await asyncio.sleep(0)
        return None
    _, rest = at_once(work)
    return rest


async def _stream_beside(
    rest: Awaitable[None] | None,
    receive: Receive,
    serve: Callable[[asyncio.Event], Awaitable[bool | None]],
    gone: Callable[[], None] | None = None,
) -> None:
    """Serve the response stream (``serve(disconnected)``: true once it completed) while
    watching for the client going away, and call ``gone()`` if it did not complete. With
    ``rest`` (a call running in this task, from :func:`_first_steps`), the stream is served
    from a task of its own while this one finishes the call; if this task is cancelled,
    so is the stream."""

    async def streaming() -> None:
        async with _watch_disconnect(receive) as disconnected:
            completed = await serve(disconnected)
        if not completed and gone is not None:
            gone()

    if rest is None:
        await streaming()
        return
    streamer = asyncio.get_running_loop().create_task(streaming())
    try:
        await rest
    except BaseException:
        streamer.cancel()
        raise
    await streamer


@contextlib.asynccontextmanager
async def _watch_disconnect(receive: Receive) -> Any:
    """An event set when the client goes away, watched for as long as the block runs."""
    disconnected = asyncio.Event()

    async def watch() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        disconnected.set()

    watcher = asyncio.ensure_future(watch())
    try:
        yield disconnected
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await watcher
