"""The authorization server as a whole: its settings, the protected resource it issues
tokens for, and the routing of its endpoints (served by the MCP server's own HTTP app beside
the MCP endpoint; see :class:`AuthorizationServer`)."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import orjson

from ....logs import get_logger
from ....transports.http.forwarded import TrustedProxies
from ..upstream import Upstream
from ..verifiers import canonical_uri
from . import authorize, metadata, revocation, token
from .consent import error_page
from .registration import ClientError, Clients
from .signins import SignIns
from .state import AuthState, open_auth_state
from .throttle import RegistrationLimit
from .tokens import Tokens
from .web import CORS, NO_STORE, OAuthError, Request, Response, json_response

if TYPE_CHECKING:
    from ..resource import ProtectedResource
    from ..vault import TokenVault, VaultKeys

log = get_logger("toolwire.auth")

Handler = Callable[["AuthorizationServer", Request], Awaitable[Response]]
#: The body of any request to these endpoints is small (a form, a registration).
MAX_BODY = 64 * 1024


def default_state_path() -> Path:
    """Where the state is kept when not told: ``$XDG_STATE_HOME/toolwire/authorization.sqlite3``."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "toolwire" / "authorization.sqlite3"


class AuthorizationServer:
    """toolwire as the authorization server MCP clients talk to, signing people in at
    ``upstream`` (any :class:`~..upstream.Upstream`).

    ``public_url``: the MCP endpoint's URL as clients reach it (``https://mcp.example.com/mcp``);
    it is the resource tokens are for, and its origin is the issuer. ``state``: an
    :class:`~.state.AuthState`, a ``redis://`` URL (for replicas) or an SQLite file (default:
    :func:`default_state_path`). ``scopes``: the scopes clients may ask for (and the resource
    advertises); ``required_scopes``: those every request needs. ``upstream_scopes``: asked of
    the provider (``None``: its defaults). ``access_token_ttl`` (15 min), ``refresh_token_ttl``
    (30 days), ``code_ttl`` (1 min), ``refresh_grace`` (seconds in which a racing refresh gets
    the winner's answer). ``signing_key``: a PEM P-256 private key (default: one made and kept
    in ``state``, sealed with the vault keys when there are any, else kept in the clear with a
    warning). ``allow_private_client_metadata``: fetch client metadata documents from this
    machine or private networks (development and tests only). ``allow_upstream_token``: keep
    the provider's tokens for each person who signs in (sealed with ``vault_keys``, by default
    from ``TOOLWIRE_VAULT_KEYS``), for tools to call the provider as them
    (``ctx.upstream_token()``). ``registration_rate`` and ``registration_burst``: how many
    clients one address may register (:mod:`.throttle`). ``ValueError`` for a ``public_url``
    that is not an absolute http(s) URL; :class:`~..vault.VaultError` when tokens are to be
    kept and there is no key, or a vault key is malformed.

    Pass it as ``auth=`` to :meth:`~toolwire.Server.run_http` or ``http_app``.
    """

    def __init__(
        self,
        upstream: Upstream,
        public_url: str,
        *,
        state: AuthState | str | os.PathLike[str] | None = None,
        scopes: Iterable[str] = (),
        required_scopes: Iterable[str] = (),
        upstream_scopes: Sequence[str] | None = None,
        access_token_ttl: float = 900.0,
        refresh_token_ttl: float = 30 * 24 * 3600.0,
        code_ttl: float = 60.0,
        refresh_grace: float = 30.0,
        signing_key: str | bytes | None = None,
        allow_private_client_metadata: bool = False,
        allow_upstream_token: bool = False,
        vault_keys: VaultKeys | None = None,
        registration_rate: str | float = "20/hour",
        registration_burst: int = 10,
    ) -> None:
        self.upstream = upstream
        self.resource = canonical_uri(public_url)
        parts = urlsplit(self.resource)
        self.issuer = f"{parts.scheme}://{parts.netloc}"
        self.callback_url = f"{self.issuer}/oauth/callback"
        if state is None:
            state = default_state_path()
        self.state: AuthState = open_auth_state(state) if isinstance(state, str | os.PathLike) else state
        self.required_scopes = tuple(required_scopes)
        self.scopes_supported = tuple(dict.fromkeys([*scopes, *self.required_scopes]))
        self.upstream_scopes = upstream_scopes
        self.refresh_token_ttl = refresh_token_ttl
        self.code_ttl = code_ttl
        self.refresh_grace = refresh_grace
        if vault_keys is None:
            from ..vault import VaultKeys

            vault_keys = VaultKeys.configured()
        self.tokens = Tokens(
            self.issuer,
            self.resource,
            self.state,
            access_token_ttl=access_token_ttl,
            signing_key=signing_key,
            keys=vault_keys,
        )
        self.clients = Clients(self.state, allow_private=allow_private_client_metadata)
        self.registrations = RegistrationLimit(self.state, registration_rate, registration_burst)
        #: Whose forwarding headers name the client (the HTTP app's, once it serves this).
        self.proxies = TrustedProxies()
        #: The provider's tokens kept for tools (``allow_upstream_token``); ``None``: none are kept.
        self.vault: TokenVault | None = None
        if allow_upstream_token:
            from ..vault import TokenVault

            self.vault = TokenVault(self.state, upstream, vault_keys, keep_for=refresh_token_ttl)
        #: Who has which sign-ins live, to forget the provider's tokens with the last (with the vault).
        self.signins = SignIns(self.state, self.vault, refresh_token_ttl) if self.vault is not None else None
        self._resource: ProtectedResource | None = None

    @property
    def protected_resource(self) -> ProtectedResource:
        """The MCP endpoint as a protected resource whose tokens this server issues (verified
        in-process; a verified token is trusted for at most 30 seconds before its family is
        checked again, so a revocation reaches every replica within that)."""
        if self._resource is None:
            from ..resource import ProtectedResource

            self._resource = ProtectedResource(
                self.resource,
                [self.issuer],
                self.tokens,
                required_scopes=self.required_scopes,
                scopes_supported=self.scopes_supported,
                cache_seconds=30.0,
            )
        return self._resource

    def grantable(self, asked: Iterable[str]) -> list[str]:
        """The scopes granted for those asked: the supported ones among them, or the required
        ones when none of them is (any asked, when no scopes are declared)."""
        asked = list(dict.fromkeys(asked))
        if not self.scopes_supported:
            return asked
        return [scope for scope in asked if scope in self.scopes_supported] or list(self.required_scopes)

    async def revoke(self, family: str, subject: str) -> None:
        """Revoke every token of the sign-in ``family`` (``subject``'s), and forget the
        provider's tokens kept for ``subject`` when it was their last live sign-in."""
        await self.tokens.revoke_family(family, self.refresh_token_ttl)
        if self.signins is not None and subject:  # records from before subjects were kept have none
            await self.signins.ended(subject, family)

    async def start(self) -> None:
        """Read the signing key (when the HTTP app starts): :class:`~..vault.VaultError` when
        it is sealed and the vault keys given do not open it."""
        await self.tokens.load()

    async def close(self) -> None:
        """Let go of the state store (when the HTTP app shuts down)."""
        await self.state.close()

    @property
    def paths(self) -> frozenset[str]:
        """The paths this server answers (beside the MCP endpoint)."""
        return frozenset(ROUTES)

    async def handle(self, path: str, scope: dict[str, Any], headers: dict[str, str], receive: Any, send: Any) -> None:
        """Answer one request for one of :attr:`paths` (``HEAD`` as ``GET``, without the body);
        failures of its own are logged and answered 500 (a page for the browser's endpoints),
        never with their details."""
        from ....transports.http.asgi import read_body

        methods, handler = ROUTES[path]
        method = scope.get("method", "GET")
        if method == "OPTIONS" and path in _CROSS_ORIGIN:
            await _send(send, Response(204, b"", [*CORS, *_PREFLIGHT, (b"allow", ", ".join(methods).encode())]))
            return
        if method not in methods:
            description = f"{method} is not allowed here (use {' or '.join(methods)})"
            response = json_response({"error": "invalid_request", "error_description": description}, 405)
            response.headers.append((b"allow", ", ".join(methods).encode()))
            await _send(send, response)
            return
        body = await read_body(headers, receive, MAX_BODY, 10.0) if method == "POST" else b""
        request = Request.of(scope, headers, body, self.proxies.client(scope))
        try:
            response = await handler(self, request)
        except OAuthError as exc:
            response = exc.response()
        except Exception:
            log.exception("the authorization server failed at %s", path)
            if path in _PAGES:
                response = error_page(500, "Something went wrong", "The server failed; its log says why. Try again.")
            else:
                description = "the authorization server failed (its log says why)"
                response = json_response({"error": "server_error", "error_description": description}, 500)
        await _send(send, response, with_body=method != "HEAD")


async def _send(send: Any, response: Response, *, with_body: bool = True) -> None:
    """Send ``response``; without its body (the same headers, its length too) for ``HEAD``."""
    headers = [(b"content-length", str(len(response.body)).encode()), *response.headers]
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": response.body if with_body else b""})


async def _metadata(server: AuthorizationServer, request: Request) -> Response:
    return json_response(metadata.metadata(server), headers=[*CORS, (b"cache-control", b"public, max-age=3600")])


async def _jwks(server: AuthorizationServer, request: Request) -> Response:
    return json_response(await server.tokens.jwks(), headers=[*CORS, (b"cache-control", b"public, max-age=600")])


async def _register(server: AuthorizationServer, request: Request) -> Response:
    """``POST /oauth/register`` (RFC 7591): 201 with the client's ID (and secret), 400, or
    429 from an address over its limit."""
    await server.registrations.check(request.client)
    try:
        registration = orjson.loads(request.body)
    except orjson.JSONDecodeError:
        raise OAuthError("invalid_client_metadata", "the registration is not JSON") from None
    try:
        answer = await server.clients.register(registration)
    except ClientError as exc:
        raise OAuthError(exc.error, str(exc)) from None
    return json_response(answer, 201, [*NO_STORE, *CORS])


ROUTES: dict[str, tuple[tuple[str, ...], Handler]] = {
    metadata.WELL_KNOWN: (("GET", "HEAD"), _metadata),
    "/oauth/jwks": (("GET", "HEAD"), _jwks),
    "/oauth/register": (("POST",), _register),
    "/oauth/authorize": (("GET",), authorize.authorize),
    "/oauth/consent": (("POST",), authorize.consent),
    "/oauth/callback": (("GET",), authorize.callback),
    "/oauth/token": (("POST",), token.token),
    "/oauth/revoke": (("POST",), revocation.revoke),
}
_PAGES = frozenset({"/oauth/authorize", "/oauth/consent", "/oauth/callback"})
#: Endpoints clients in browsers may call from other origins (no cookies go there).
_CROSS_ORIGIN = frozenset({metadata.WELL_KNOWN, "/oauth/jwks", "/oauth/register", "/oauth/token", "/oauth/revoke"})
_PREFLIGHT = [
    (b"access-control-allow-methods", b"GET, POST"),
    (b"access-control-allow-headers", b"Authorization, Content-Type, MCP-Protocol-Version"),
    (b"access-control-max-age", b"86400"),
]
