"""Who may reach the Streamable HTTP endpoint, checked before any JSON-RPC processing:
first, before anything else, a request with two ``Host`` or two ``Origin`` headers, or a
``Host`` that is not ``host[:port]`` (``localhost:x@evil``, ``localhost:evil``, a path),
is refused (400) whatever its path; then ``Host`` and ``Origin`` against DNS rebinding (403),
and with ``auth`` the caller's bearer token (401), the scopes of what a message names (403)
and the Protected Resource Metadata served at its well-known paths."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import orjson

from ...auth.identity import Identity
from ...logs import get_logger
from ...protocol.errors import INVALID_REQUEST
from ...protocol.http_headers import shown
from ...protocol.incoming import RequestId
from .asgi import HttpError, Scope, Send, headers, request_id
from .channel import respond

if TYPE_CHECKING:
    from ...auth.server.resource import AuthError, ProtectedResource
    from ...server.server import Server

log = get_logger("toolwire.http")

LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")
#: A ``Host`` value: a name (labels of letters, digits, ``-`` and ``_``) or an IPv4 address,
#: or an IPv6 address in brackets; then maybe ``:`` and a port.
HOST = re.compile(r"(?:[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")
#: An ``Origin`` value: ``http`` or ``https``, ``://`` and a host as ``Host`` has it.
ORIGIN = re.compile(r"(https?)://(" + HOST.pattern + ")", re.IGNORECASE)

#: What a message names, when it was not looked up (yet).
UNKNOWN: Any = object()


class Checks:
    """The checks of one endpoint (``path``) of ``server``: ``allowed_hosts`` and
    ``allowed_origins`` as :class:`~.app.StreamableHTTP` takes them, ``auth`` (or ``None``)."""

    def __init__(
        self,
        server: Server,
        path: str,
        allowed_hosts: Iterable[str],
        allowed_origins: Iterable[str],
        auth: ProtectedResource | None,
    ) -> None:
        self.server = server
        self.allowed_hosts = {host.lower() for host in allowed_hosts}
        self.allowed_origins = {origin.lower().rstrip("/") for origin in allowed_origins}
        #: ``Host`` values already found well formed and allowed.
        self.good_hosts: set[str | None] = set()
        self.auth = auth
        #: Where the resource metadata is served (besides the endpoint).
        self.metadata_paths = auth.metadata_paths(path) if auth is not None else set()
        self._auth_error: type[AuthError] | tuple[()] = ()  # what a refusal raises, once auth is there
        if auth is not None:
            from ...auth.server.resource import AuthError

            self._auth_error = AuthError
        self._catalogs = (server.registry, server.resources, server.resource_templates, server.prompts)
        if auth is None and self._gated():
            log.warning(
                "some tools, resources or prompts need scopes, but this HTTP server has no auth=: "
                "nothing checks them, and anyone who can reach it may use them"
            )

    def check_host(self, scope: Scope, headers: dict[str, str]) -> None:
        """400 for a request with two ``Host`` or two ``Origin`` headers (``headers`` keeps
        one of each name), or a ``Host`` that is not ``host[:port]``: before anything else."""
        if len(headers) != len(scope.get("headers", ())):  # a name repeats: rare, looked at closely
            names = [name for name, _ in scope.get("headers", ()) if name in (b"host", b"origin")]
            for name in (b"host", b"origin"):
                if names.count(name) > 1:
                    said = name.decode().capitalize()
                    raise HttpError(400, INVALID_REQUEST, f"Bad Request: the request has more than one {said} header")
        host = headers.get("host", "")
        if host and host not in self.good_hosts and not HOST.fullmatch(host):
            raise HttpError(400, INVALID_REQUEST, f"Bad Request: Host {shown(host)} is not host[:port]")

    def check_origin(self, headers: dict[str, str]) -> None:
        """403 for a ``Host`` or ``Origin`` this server does not answer to (DNS rebinding); a
        ``Host`` must have passed :meth:`check_host`."""
        raw = headers.get("host")
        if raw not in self.good_hosts:
            host = (raw or "").lower()
            if "*" not in self.allowed_hosts and not _host_allowed(host, self.allowed_hosts):
                raise HttpError(403, INVALID_REQUEST, f"Forbidden: Host {host!r} is not allowed (see allowed_hosts)")
            if len(self.good_hosts) < 1024:
                self.good_hosts.add(raw)
        origin = headers.get("origin")
        if origin is None or "*" in self.allowed_origins:
            return
        origin = origin.lower().rstrip("/")
        if origin in self.allowed_origins:
            return
        parts = ORIGIN.fullmatch(origin)
        if parts is not None and _host_allowed(parts.group(2), self.allowed_hosts - {"*"}):
            return
        said = shown(origin)
        raise HttpError(403, INVALID_REQUEST, f"Forbidden: Origin {said} is not allowed (see allowed_origins)")

    def _gated(self) -> bool:
        """Whether some tool, resource or prompt needs scopes (read per request: they change)."""
        return any(catalog.gated for catalog in self._catalogs)

    async def metadata(self, scope: Scope, send: Send) -> None:
        """The Protected Resource Metadata document, to anyone (it is public, and browsers'
        clients may read it from other origins)."""
        assert self.auth is not None
        self.check_origin({"host": headers(scope).get("host", "")})
        if scope.get("method") not in ("GET", "HEAD"):
            raise HttpError(
                405,
                INVALID_REQUEST,
                "Method not allowed: the resource metadata is read with GET",
                headers=[(b"allow", b"GET, HEAD")],
            )
        cors = [(b"access-control-allow-origin", b"*"), (b"cache-control", b"public, max-age=3600")]
        await respond(send, 200, orjson.dumps(self.auth.metadata()), cors)

    async def authenticate(self, headers: dict[str, str]) -> Identity:
        """The caller of a request to the endpoint; 401 (or 403) with the challenge otherwise."""
        assert self.auth is not None
        try:
            caller = await self.auth.authenticate(headers.get("authorization"))
            if self.auth.required_scopes:
                self.auth.require(caller, (), "this server")
        except self._auth_error as exc:
            raise _refused(exc) from None
        return caller

    def authorize(self, message: Any, caller: Identity | None) -> Any:
        """403 if ``message`` (or one of a batch) names a tool, resource or prompt whose
        scopes ``caller`` lacks. Returns what a single message names (see
        :meth:`Server.target_of`), when it had to be looked up, else :data:`UNKNOWN`."""
        if caller is None or self.auth is None or not self._gated():
            return UNKNOWN
        target = UNKNOWN
        for item in message if isinstance(message, list) else (message,):
            if isinstance(item, dict) and isinstance(item.get("method"), str):
                method, params = item["method"], item.get("params")
                target = self.server.target_of(method, params)
                required, what = self.server.scopes_for(method, params, target)
                if required:
                    try:
                        self.auth.require(caller, required, what)
                    except self._auth_error as exc:
                        raise _refused(exc, request_id(item)) from None
        return target if isinstance(message, dict) else UNKNOWN


def _refused(exc: AuthError, id: RequestId | None = None) -> HttpError:
    """An authorization refusal as an HTTP answer: its status, the challenge, a JSON-RPC error."""
    challenge = [(b"www-authenticate", exc.challenge.encode("latin-1", "replace"))]
    return HttpError(exc.status, INVALID_REQUEST, str(exc), id, headers=challenge)


def _host_allowed(host: str, extra: set[str]) -> bool:
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    return name in LOCAL_HOSTS or host in extra or name in extra
