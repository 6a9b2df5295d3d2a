"""An MCP server as an OAuth 2.1 protected resource: its metadata (RFC 9728), the checks on
each request's bearer token, and the challenges that tell a client what to do.

    auth = ProtectedResource.for_issuer("https://auth.example.com", "https://mcp.example.com/mcp")
    server.run_http(port=8000, auth=auth)

Every request to the MCP endpoint must carry ``Authorization: Bearer <token>``: without
one it gets 401 with ``WWW-Authenticate: Bearer resource_metadata="…", scope="…"``; with a
token that does not verify, 401 with ``error="invalid_token"`` and why. A tool, resource or
prompt that needs scopes the token lacks is missing from lists and refused with 403
``error="insufficient_scope"`` naming all the scopes it needs. Verified tokens are cached
(by the token, until it expires or ``cache_seconds`` pass), so a client reusing a token pays
for its verification once. Tokens are never logged and never passed on.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from ...errors import ToolwireError
from ...logs import get_logger
from ..identity import Identity, expand_scopes
from .verifiers import InvalidToken, JWTVerifier, TokenVerifier, canonical_uri

log = get_logger("toolwire.auth")

VerifyFunction = Callable[[str], Awaitable[Identity | None]]
WELL_KNOWN = "/.well-known/oauth-protected-resource"


class AuthError(ToolwireError):
    """A refusal at the HTTP edge: ``status`` (401, 403, or 503 when checking failed), the
    ``WWW-Authenticate`` value, and the message for the JSON-RPC error body."""

    def __init__(self, status: int, challenge: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.challenge = challenge


class ProtectedResource:
    """The authorization settings of an HTTP server (see the module's description).

    ``resource``: this server's canonical URI (what clients reach it at, and the audience
    tokens must name), e.g. ``https://mcp.example.com/mcp``. ``authorization_servers``: the
    issuers clients get tokens from. ``verifier``: a :class:`~.verifiers.TokenVerifier` or an
    ``async verify(token) -> Identity | None``. ``required_scopes``: needed for every request;
    ``scopes_supported``: advertised in the metadata (default: the required ones).
    ``scope_hierarchy``: broader scopes and the narrower ones they include, e.g.
    ``{"files": ["files:read", "files:write"]}``. ``leeway``: seconds of clock skew a token's
    expiry is allowed (by default the verifier's own ``leeway``, as a
    :class:`~.verifiers.JWTVerifier` has, else none). ``ValueError`` for a ``resource`` that
    is not an absolute http(s) URI without a fragment.
    """

    def __init__(
        self,
        resource: str,
        authorization_servers: Sequence[str],
        verifier: TokenVerifier | VerifyFunction,
        *,
        required_scopes: Iterable[str] = (),
        scopes_supported: Iterable[str] | None = None,
        scope_hierarchy: Mapping[str, Iterable[str]] | None = None,
        resource_name: str | None = None,
        resource_documentation: str | None = None,
        cache_seconds: float = 300.0,
        cache_size: int = 10_000,
        max_token_bytes: int = 16 * 1024,
        leeway: float | None = None,
    ) -> None:
        self.resource = canonical_uri(resource)
        if not authorization_servers:
            raise ValueError("a protected resource names at least one authorization server")
        self.authorization_servers = list(authorization_servers)
        self._verify = verifier.verify if hasattr(verifier, "verify") else _function_verifier(verifier)
        self.required_scopes = tuple(required_scopes)
        self.scopes_supported = list(scopes_supported) if scopes_supported is not None else list(self.required_scopes)
        self.scope_hierarchy = {key: tuple(value) for key, value in (scope_hierarchy or {}).items()}
        self.resource_name = resource_name
        self.resource_documentation = resource_documentation
        self.cache_seconds = cache_seconds
        self.cache_size = cache_size
        self.max_token_bytes = max_token_bytes
        self.leeway = float(leeway if leeway is not None else getattr(verifier, "leeway", 0.0))
        self._verified: OrderedDict[str, tuple[Identity, float]] = OrderedDict()
        parts = urlsplit(self.resource)
        self.metadata_url = f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}{parts.path}"

    @classmethod
    def for_issuer(cls, issuer: str, resource: str, **options: Any) -> ProtectedResource:
        """The common case: JWT access tokens from ``issuer`` (keys from its metadata), for
        ``resource``. Other keywords as for the class; ``algorithms``, ``jwks_url``, ``jwks``,
        ``leeway`` and ``discovery_retry`` go to the :class:`~.verifiers.JWTVerifier` (whose
        ``leeway`` the resource then applies too)."""
        verifier_options = {
            key: options.pop(key)
            for key in ("algorithms", "jwks_url", "jwks", "leeway", "discovery_retry")
            if key in options
        }
        return cls(resource, [issuer], JWTVerifier(issuer, resource, **verifier_options), **options)

    # -- metadata ----------------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        """The Protected Resource Metadata document (RFC 9728)."""
        document: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        }
        if self.scopes_supported:
            document["scopes_supported"] = self.scopes_supported
        if self.resource_name:
            document["resource_name"] = self.resource_name
        if self.resource_documentation:
            document["resource_documentation"] = self.resource_documentation
        return document

    def metadata_paths(self, endpoint: str) -> set[str]:
        """Where the metadata is served: the well-known path with the MCP endpoint's path
        after it, and without (both, as the spec lets clients try them in that order)."""
        paths = {WELL_KNOWN, WELL_KNOWN + urlsplit(self.resource).path}
        if endpoint != "/":
            paths.add(WELL_KNOWN + endpoint)
        return paths

    # -- requests ----------------------------------------------------------------------------

    async def authenticate(self, authorization: str | None) -> Identity:
        """The identity of a request's ``Authorization`` header; :class:`AuthError` (401) if
        there is no bearer token or it does not verify, (503) if the verifier itself fails."""
        if authorization is None:
            raise AuthError(401, self.challenge(), "Unauthorized: this server needs an OAuth access token")
        now = time.time()
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise self._invalid("the Authorization header must be 'Bearer <access token>'")
        if len(token) > self.max_token_bytes:
            raise self._invalid(f"the token is {len(token)} bytes; at most {self.max_token_bytes} are accepted")
        cached = self._verified.get(token)
        if cached is not None:
            if cached[1] > now:
                return cached[0]
            del self._verified[token]
        try:
            identity = await self._verify(token)
        except InvalidToken as exc:
            raise self._invalid(str(exc)) from None
        except Exception:  # the verifier's own failure, not the token's: never a 401
            log.exception("the token verifier failed")
            raise AuthError(
                503, self.challenge(), "Service unavailable: the token could not be checked (see the server's log)"
            ) from None
        if self.scope_hierarchy:
            identity = identity.with_scopes(expand_scopes(identity.scopes, self.scope_hierarchy))
        if identity.expires_at is not None and identity.expires_at + self.leeway <= now:
            raise self._invalid("the token has expired")
        if self.cache_seconds > 0:
            until = now + self.cache_seconds
            if identity.expires_at is not None:
                until = min(until, identity.expires_at + self.leeway)
            self._verified[token] = (identity, until)
            if len(self._verified) > self.cache_size:
                self._verified.popitem(last=False)
        return identity

    def require(self, identity: Identity, required: Iterable[str], what: str) -> None:
        """:class:`AuthError` (403 ``insufficient_scope``) unless ``identity`` has every scope
        of ``required`` (and those every request needs); the challenge names them all."""
        needed = [*self.required_scopes, *(scope for scope in required if scope not in self.required_scopes)]
        missing = identity.missing(needed)
        if not missing:
            return
        description = f"{what} needs the scope{'s' if len(missing) > 1 else ''} {' '.join(missing)}"
        raise AuthError(
            403,
            self.challenge("insufficient_scope", description, needed),
            f"Forbidden: {description} (insufficient_scope); authorize again with them",
        )

    def challenge(
        self, error: str | None = None, description: str | None = None, scopes: Sequence[str] | None = None
    ) -> str:
        """A ``WWW-Authenticate`` value: ``Bearer`` with the error, the scopes to ask for
        (by default those every request needs, else those supported) and the metadata URL."""
        parameters = []
        if error is not None:
            parameters.append(f'error="{error}"')
        wanted = scopes if scopes is not None else (self.required_scopes or self.scopes_supported)
        if wanted:
            parameters.append(f'scope="{_quoted(" ".join(wanted))}"')
        parameters.append(f'resource_metadata="{_quoted(self.metadata_url)}"')
        if description is not None:
            parameters.append(f'error_description="{_quoted(description)}"')
        return "Bearer " + ", ".join(parameters)

    def _invalid(self, reason: str) -> AuthError:
        return AuthError(401, self.challenge("invalid_token", reason), f"Unauthorized: {reason}")


def _quoted(text: str) -> str:
    """``text`` fit for a quoted-string: quotes and backslashes escaped, no control characters."""
    return "".join(ch for ch in text if ch >= " " and ch != "\x7f").replace("\\", "\\\\").replace('"', '\\"')


def _function_verifier(function: VerifyFunction) -> Callable[[str], Awaitable[Identity]]:
    async def verify(token: str) -> Identity:
        identity = await function(token)
        if identity is None:
            raise InvalidToken("the token is not valid")
        return identity

    return verify
