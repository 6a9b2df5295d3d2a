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

For both: two ``Host`` or ``Origin`` headers, or a ``Host`` that is not ``host[:port]``, are
refused first (400, on every path); ``Host`` and ``Origin`` are checked against DNS rebinding (403), bodies are
limited (413), and every refusal carries a JSON-RPC error a person can act on. Beside the
endpoint, extensions' public documents are served (:mod:`.documents`: a server card).

This module routes requests and runs the app's life; each concern has a module of its own:
:mod:`.checks` (Host, Origin, auth), :mod:`.modern` (the 2026-07-28 POST), :mod:`.legacy`
(the legacy session wire), :mod:`.replicas` (sessions shared through Redis) and :mod:`.asgi`
(what they share about one request).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING

import orjson

from ...auth.identity import Identity
from ...protocol import http_headers
from ...protocol.connection import too_deep
from ...protocol.errors import INVALID_REQUEST, PARSE_ERROR, UNSUPPORTED_PROTOCOL_VERSION
from ...protocol.versions import HTTP_DEFAULT_VERSION, MODERN_VERSIONS, SUPPORTED_VERSIONS
from ...server.lifespan import LifespanFailed
from . import sse
from .asgi import (
    HttpError,
    Receive,
    Scope,
    Send,
    accepts_json_and_sse,
    body_at_once,
    meta_version,
    read_body,
    request_id,
    route_path,
)
from .asgi import headers as request_headers
from .channel import respond
from .checks import Checks
from .documents import Documents
from .forwarded import TrustedProxies
from .legacy import LegacyWire
from .modern import ModernWire
from .sessions import SessionManager

if TYPE_CHECKING:
    from ...auth.server.authorization import AuthorizationServer
    from ...auth.server.resource import ProtectedResource
    from ...server.server import Server
    from .replicas import Replicas
    from .shared import SharedSessions

__all__ = ["HttpError", "StreamableHTTP"]


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
      caller instead of by address. An :class:`~toolwire.auth.server.authorization.AuthorizationServer`
      does the same with the tokens it issues, and serves its own endpoints beside this one.
    - ``forwarded_allow_ips``: the reverse proxies (addresses, networks, ``"*"``) whose
      ``X-Forwarded-For`` (or ``Forwarded``) names the client: a request from one of them
      counts as its client's for the per-client caps and anonymous callers' rate limits
      (see :class:`~.forwarded.TrustedProxies`). By default no peer is trusted.
    - ``pages``: an ASGI application answering the paths nothing else here answers (not the
      endpoint, its metadata, its authorization server's or its documents'): the gateway's
      admin page. It gets them after the ``Host`` check and without ``auth`` (it has its
      own); ``scope["app"]`` is this application.
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
        body_timeout: float = 10.0,
        event_store: sse.EventStore | None = None,
        resumable: bool = True,
        retry_ms: int = 1000,
        keep_alive: float = 15.0,
        auth: ProtectedResource | AuthorizationServer | None = None,
        redis: str | None = None,
        forwarded_allow_ips: TrustedProxies | str | Iterable[str] | None = None,
        pages: Callable[[Scope, Receive, Send], Awaitable[None]] | None = None,
    ) -> None:
        self.server = server
        self.pages = pages
        #: Whose forwarding headers name the client (see :meth:`TrustedProxies.client`).
        self.proxies = (
            forwarded_allow_ips
            if isinstance(forwarded_allow_ips, TrustedProxies)
            else TrustedProxies(forwarded_allow_ips)
        )
        self.path = path.rstrip("/") or "/"
        self.max_body_bytes = max_body_bytes
        self.stateless = stateless
        self.sessions = SessionManager(max_sessions, session_idle_timeout, max_sessions_per_client)
        self.body_timeout = body_timeout
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
        #: What the endpoint does to share legacy sessions with other replicas (``None``: none).
        self.replicas: Replicas | None = None
        if self.shared is not None:
            from .replicas import Replicas

            self.replicas = Replicas(server, self.shared, self.sessions, self.store)
        #: The authorization server whose endpoints are served here too (``None``: none).
        self.authorization: AuthorizationServer | None = None
        if auth is not None:
            from ...auth.server.resource import ProtectedResource

            if not isinstance(auth, ProtectedResource):
                self.authorization, auth = auth, auth.protected_resource
                self.authorization.proxies = self.proxies
                if self.authorization.vault is not None:  # tools may have the provider's tokens
                    server.upstream_tokens = self.authorization.vault
        self.auth = auth
        self.checks = Checks(server, self.path, allowed_hosts, allowed_origins, auth)
        self.documents = Documents(server, self.path, auth)
        self.modern = ModernWire(server, keep_alive, max_streams, max_streams_per_client)
        self.legacy = LegacyWire(server, self.sessions, self.store, self.replicas, retry_ms, keep_alive)
        self._started = False  # the server's lifespan entered

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self._lifespan(receive, send)
            return
        if not self._started:  # an ASGI server (or a parent app) that sends no lifespan events
            await self._start()
        try:  # the MCP endpoint's requests are routed here, without a coroutine of their own
            headers = request_headers(scope)
            checks = self.checks
            if headers.get("host") not in checks.good_hosts or len(headers) != len(scope["headers"]):
                checks.check_host(scope, headers)  # before anything else: two Hosts, a Host that is not one
            path = route_path(scope).rstrip("/") or "/"
            if path != self.path:
                await self._elsewhere(path, scope, headers, receive, send)
                return
            if "origin" in headers or headers.get("host") not in checks.good_hosts:  # else nothing to check
                checks.check_origin(headers)
            caller = await checks.authenticate(headers) if self.auth is not None else None
            client = f"caller:{caller.name}" if caller is not None else self.proxies.client(scope)
            method = scope.get("method")
            if method == "POST":
                await self._post(headers, client, caller, receive, send)
            else:
                await self._other(method, headers, caller, receive, send)
        except HttpError as exc:
            allowed = b"POST" if self.stateless else b"GET, POST, DELETE"
            allow = [(b"allow", allowed)] if exc.status == 405 and not exc.headers else []
            await respond(send, exc.status, exc.body(), allow + exc.headers)

    async def close(self) -> None:
        """End every session and stream: calls in flight are cancelled, 2026-07-28
        subscriptions get their final response, every response stream ends; tasks still
        running are stored as interrupted."""
        await self.sessions.close()
        await self.modern.close()
        await self.server.close_tasks()
        if self.replicas is not None:
            await self.replicas.close()
        if self.authorization is not None:
            await self.authorization.close()

    async def _start(self) -> None:
        """Enter the server's lifespan, once (``LifespanFailed`` if it raises); with shared
        sessions, hear the other replicas' news and tell them this one's."""
        self._started = True
        try:
            await self.server.start()
            if self.authorization is not None:
                await self.authorization.start()
            if self.replicas is not None:
                modern = self.modern
                await self.replicas.start(lambda: modern.requests)
        except BaseException:
            self._started = False
            raise

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

    async def _elsewhere(self, path: str, scope: Scope, headers: dict[str, str], receive: Receive, send: Send) -> None:
        """A request for another path than the MCP endpoint's: metadata, the authorization
        server's endpoints, documents, the pages mounted beside; else 404."""
        checks = self.checks
        if path in checks.metadata_paths:
            await checks.metadata(scope, send)
            return
        if self.authorization is not None and path in self.authorization.paths:
            checks.check_origin({"host": headers.get("host", "")})
            await self.authorization.handle(path, scope, headers, receive, send)
            return
        document = self.documents.find(path)
        if document is not None:
            await self.documents.serve(document, scope, send, checks)
            return
        if self.pages is not None:
            scope["app"] = self
            await self.pages(scope, receive, send)
            return
        raise HttpError(404, INVALID_REQUEST, f"Not found: the MCP endpoint is {self.path}")

    async def _other(
        self, method: object, headers: dict[str, str], caller: Identity | None, receive: Receive, send: Send
    ) -> None:
        """A request to the MCP endpoint other than a POST: a legacy session's GET stream or
        its end (DELETE); else 405."""
        version = headers.get(http_headers.PROTOCOL_VERSION)
        if method == "GET":
            if version in MODERN_VERSIONS or self.stateless:
                raise HttpError(405, INVALID_REQUEST, "Method not allowed: this endpoint opens no GET stream")
            await self.legacy.get(headers, caller, receive, send)
        elif method == "DELETE":
            if version in MODERN_VERSIONS or self.stateless:
                raise HttpError(405, INVALID_REQUEST, "Method not allowed: there are no sessions to end")
            await self.legacy.delete(headers, caller, send)
        else:
            raise HttpError(405, INVALID_REQUEST, f"Method not allowed: {method} (use POST, GET or DELETE)")

    async def _post(
        self, headers: dict[str, str], client: str, caller: Identity | None, receive: Receive, send: Send
    ) -> None:
        """What every POST is checked for (media types, body size and time, JSON, depth, the
        protocol version, the scopes of what it names), then handed to its era's wire."""
        content_type = headers.get("content-type", "")
        if content_type != "application/json" and content_type.split(";")[0].strip().lower() != "application/json":
            raise HttpError(415, INVALID_REQUEST, "Unsupported Media Type: the body must be application/json")
        if not accepts_json_and_sse(headers.get("accept", "")):
            raise HttpError(
                406,
                INVALID_REQUEST,
                "Not Acceptable: the Accept header must list application/json and text/event-stream",
            )
        body = body_at_once(headers, receive, self.max_body_bytes)
        if body is None:
            body = await read_body(headers, receive, self.max_body_bytes, self.body_timeout)
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
                request_id(message),
                {"supported": list(SUPPORTED_VERSIONS), "requested": version},
            )
        target = self.checks.authorize(message, caller)
        if version in MODERN_VERSIONS or meta_version(message) is not None:
            await self.modern.post(headers, client, caller, body, message, receive, send, target)
        elif self.stateless:
            await self.legacy.post_stateless(version or HTTP_DEFAULT_VERSION, caller, body, message, receive, send)
        else:
            await self.legacy.post(headers, client, caller, body, message, receive, send)
