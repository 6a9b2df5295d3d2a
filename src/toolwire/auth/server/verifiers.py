"""Token verifiers: what turns a bearer token into an :class:`~.identity.Identity`.

A verifier is any object with ``async verify(token) -> Identity`` that raises
:class:`InvalidToken` (its message is sent back in the ``WWW-Authenticate`` header's
``error_description``; it must never contain the token). Built in: :class:`JWTVerifier`
(signed JWT access tokens, keys from a JWKS URL) and :class:`IntrospectionVerifier`
(RFC 7662). A plain ``async def verify(token) -> Identity | None`` works too.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import time
from collections.abc import Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

import orjson

from ...errors import ToolwireError
from ...fetch import FetchFailed, fetch
from ...logs import get_logger
from ...protocol import tokens
from ..identity import Identity, parse_scopes
from ..metadata import metadata_urls
from .jwks import JWKS, KeyNotFound

log = get_logger("toolwire.auth")

#: Asymmetric algorithms accepted by default (``none`` and shared-secret HMAC never are).
DEFAULT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")


class InvalidToken(ToolwireError):
    """The token is not accepted; the message says why (for the 401's ``error_description``)."""


class TokenVerifier(Protocol):
    async def verify(self, token: str) -> Identity:
        """The identity ``token`` stands for; :class:`InvalidToken` if it is not accepted."""
        ...


def canonical_uri(uri: str) -> str:
    """``uri`` as RFC 8707 resource identifiers compare: scheme and host in lower case, no
    trailing slash. ``ValueError`` for one that is not an absolute http(s) URI or has a fragment."""
    parts = urlsplit(uri)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{uri!r} is not an absolute http(s) URI")
    if parts.fragment or uri.endswith("#"):
        raise ValueError(f"{uri!r} has a fragment: a resource identifier may not")
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def _audiences(value: str | Sequence[str]) -> frozenset[str]:
    return frozenset(canonical_uri(item) for item in ([value] if isinstance(value, str) else value))


def _bound_to(claimed: Any, audiences: frozenset[str]) -> bool:
    """Whether a token's ``aud`` claim names one of ``audiences`` (compared canonically)."""
    if isinstance(claimed, str) and claimed in audiences:
        return True
    for item in [claimed] if isinstance(claimed, str) else claimed if isinstance(claimed, list) else []:
        try:
            if isinstance(item, str) and canonical_uri(item) in audiences:
                return True
        except ValueError:
            continue
    return False


def identity_from_claims(claims: dict[str, Any]) -> Identity:
    """An identity from JWT or introspection claims (``sub``, ``client_id``/``azp``,
    ``scope``/``scp``, ``exp``)."""
    client = claims.get("client_id", claims.get("azp"))
    expires = claims.get("exp")
    subject = claims.get("sub")
    return Identity(
        subject=subject if isinstance(subject, str) else None,
        client_id=client if isinstance(client, str) else None,
        scopes=parse_scopes(claims["scope"] if "scope" in claims else claims.get("scp")),
        claims=claims,
        expires_at=float(expires) if isinstance(expires, int | float) and not isinstance(expires, bool) else None,
    )


class JWTVerifier:
    """Verifies JWT access tokens (RFC 9068) signed by ``issuer``'s keys (the signature with
    PyJWT's algorithms, on ``cryptography``).

    ``audience``: this server's canonical resource URI (or several); a token must name one in
    ``aud`` (RFC 8707). ``jwks_url``: where the keys are; by default read from the issuer's
    metadata (RFC 8414, then OpenID discovery) on first use: one fetch, which the requests
    that arrive meanwhile wait for; when it fails, tokens are refused (401, saying so) without
    fetching again for ``discovery_retry`` seconds. ``jwks``: the keys themselves, as a JWKS
    document (then nothing is fetched). ``algorithms``: the allow-list
    (asymmetric ones by default; a token in any other is refused before its key is looked
    up). ``exp`` is required; ``exp``, ``nbf`` and ``iat`` are checked with ``leeway``
    seconds of clock skew.
    """

    def __init__(
        self,
        issuer: str,
        audience: str | Sequence[str],
        *,
        jwks_url: str | None = None,
        jwks: dict[str, Any] | None = None,
        algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
        leeway: float = 30.0,
        discovery_retry: float = 30.0,
    ) -> None:
        from ...extras import require

        require("auth", "JWTVerifier")
        bad = [algorithm for algorithm in algorithms if algorithm.lower() == "none" or algorithm.startswith("HS")]
        if bad:
            raise ValueError(f"algorithms {bad} cannot verify access tokens from an authorization server")
        self.issuer = issuer
        self.audiences = _audiences(audience)
        self.algorithms = tuple(algorithms)
        self.leeway = leeway
        self.jwks = JWKS.static(jwks) if jwks is not None else JWKS(jwks_url) if jwks_url is not None else None
        self.discovery_retry = discovery_retry
        self._discovery: asyncio.Task[None] | None = None  # the metadata fetch under way
        self._discovery_failed: tuple[float, str] | None = None  # when the last one failed, and why

    async def verify(self, token: str) -> Identity:
        header, claims, signing_input, signature = _parse_jwt(token)
        algorithm = header.get("alg")
        if algorithm not in self.algorithms:
            raise InvalidToken(f"the token's signing algorithm {algorithm!r} is not accepted")
        if "crit" in header:
            raise InvalidToken("the token has critical header parameters this server does not understand")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("the token's key id is not a string")
        jwks = self.jwks if self.jwks is not None else await self._discovered()
        key = jwks.known(kid, algorithm)
        if key is None:
            try:
                key = await jwks.key(kid, algorithm)
            except KeyNotFound as exc:
                raise InvalidToken(str(exc)) from None
        try:
            verified = _signature_algorithm(algorithm).verify(signing_input, key, signature)
        except Exception:  # a key of another type than the algorithm's, a mangled signature
            verified = False
        if not verified:
            raise InvalidToken("the token's signature does not verify")
        self._check_claims(claims)
        return identity_from_claims(claims)

    async def _discovered(self) -> JWKS:
        """The keys named by the issuer's metadata: fetched once for all the requests waiting
        on it; :class:`InvalidToken` at once for ``discovery_retry`` seconds after a failure."""
        if self._discovery is None:
            failed = self._discovery_failed
            if failed is not None and time.monotonic() - failed[0] < self.discovery_retry:
                raise InvalidToken(failed[1])
            self._discovery = asyncio.ensure_future(self._discover())
        await asyncio.shield(self._discovery)  # a waiter that goes away leaves it running
        if self.jwks is None:
            raise InvalidToken(self._discovery_failed[1] if self._discovery_failed else "no signing keys")
        return self.jwks

    async def _discover(self) -> None:
        try:
            self.jwks = JWKS(await jwks_url_of(self.issuer))
        except Exception as exc:
            problem = str(exc) if isinstance(exc, InvalidToken) else f"{self.issuer}'s metadata: {type(exc).__name__}"
            log.warning("%s; tokens are refused for %g s before it is asked again", problem, self.discovery_retry)
            self._discovery_failed = (time.monotonic(), problem)
        finally:
            self._discovery = None

    def _check_claims(self, claims: dict[str, Any]) -> None:
        now = time.time()
        expires = claims.get("exp")
        if expires is None:
            raise InvalidToken("the token has no 'exp' claim")
        if not _is_number(expires):
            raise InvalidToken("the token's 'exp' claim is not a number")
        if expires <= now - self.leeway:
            raise InvalidToken("the token has expired")
        for name in ("nbf", "iat"):
            value = claims.get(name)
            if value is not None and (not _is_number(value) or value > now + self.leeway):
                raise InvalidToken("the token is not valid yet")
        if claims.get("iss") != self.issuer:
            raise InvalidToken(f"the token was not issued by {self.issuer}")
        if not _bound_to(claims.get("aud"), self.audiences):
            raise InvalidToken(f"the token is not for this server (its audience must be {min(self.audiences)})")


def _parse_jwt(token: str) -> tuple[dict[str, Any], dict[str, Any], bytes, bytes]:
    """A compact JWS's header, claims, signing input and signature; :class:`InvalidToken`
    if it is not one (with JSON objects for header and claims), or not spelled as base64url
    without padding (:func:`toolwire.protocol.tokens.decode`: one spelling of a signature)."""
    parts = token.split(".")
    if len(parts) != 3:
        raise InvalidToken("the token is malformed: not a signed JWT")
    header_bytes, claims_bytes, signature = (tokens.decode(part, len(token)) for part in parts)
    try:
        header = orjson.loads(header_bytes) if header_bytes is not None else None
        claims = orjson.loads(claims_bytes) if claims_bytes is not None else None
    except orjson.JSONDecodeError:
        raise InvalidToken("the token is malformed: not a signed JWT") from None
    if not isinstance(header, dict) or not isinstance(claims, dict) or signature is None:
        raise InvalidToken("the token is malformed: not a signed JWT")
    return header, claims, token[: len(parts[0]) + 1 + len(parts[1])].encode(), signature


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@functools.cache
def _signature_algorithm(name: str) -> Any:
    """PyJWT's implementation of a JWS algorithm (it verifies with ``cryptography``)."""
    from jwt.algorithms import get_default_algorithms

    return get_default_algorithms()[name]


async def jwks_url_of(issuer: str) -> str:
    """The ``jwks_uri`` of ``issuer``'s metadata (RFC 8414 first, then OpenID discovery);
    :class:`InvalidToken` when none can be had (the request is refused, and tried again)."""
    for url in metadata_urls(issuer):
        try:
            response = await fetch(url, headers={"accept": "application/json"})
            document = response.json() if response.status == 200 else None
        except (FetchFailed, ValueError):
            continue
        if (
            isinstance(document, dict)
            and document.get("issuer") == issuer
            and isinstance(document.get("jwks_uri"), str)
        ):
            return str(document["jwks_uri"])
    raise InvalidToken(f"the authorization server {issuer} publishes no signing keys that could be fetched")


class IntrospectionVerifier:
    """Asks the authorization server about each token (RFC 7662) at ``url``, authenticating
    with ``client_id``/``client_secret`` (HTTP Basic) when given. An inactive token is refused;
    with ``audience`` set the answer's ``aud`` must name it. An introspection endpoint that
    cannot be reached (or answers other than 200) refuses the token (401) with a message
    saying so, and so are the tokens of the next ``failure_retry`` seconds, without asking it:
    requests cannot make the server send one of its own each while the endpoint is down."""

    def __init__(
        self,
        url: str,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        audience: str | Sequence[str] | None = None,
        timeout: float = 10.0,
        failure_retry: float = 5.0,
    ) -> None:
        self.url = url
        self.auth = (client_id, client_secret or "") if client_id is not None else None
        self.audiences = _audiences(audience) if audience is not None else None
        self.timeout = timeout
        self.failure_retry = failure_retry
        self._failed: tuple[float, str] | None = None  # when the endpoint last failed, and how

    async def verify(self, token: str) -> Identity:
        failed = self._failed
        if failed is not None and time.monotonic() - failed[0] < self.failure_retry:
            raise InvalidToken(failed[1])
        headers = {"accept": "application/json"}
        if self.auth is not None:
            pair = f"{self.auth[0]}:{self.auth[1]}".encode()
            headers["authorization"] = "Basic " + base64.b64encode(pair).decode()
        try:
            response = await fetch(
                self.url,
                method="POST",
                data={"token": token, "token_type_hint": "access_token"},
                headers=headers,
                timeout=self.timeout,
                follow_redirects=False,
            )
        except FetchFailed:
            raise self._failing("the introspection endpoint did not answer") from None
        if response.status != 200:
            raise self._failing(f"introspection answered {response.status}")
        try:
            answer = response.json()
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise self._failing("introspection answered something other than a JSON object")
        if answer.get("active") is not True:
            raise InvalidToken("the token is not active (expired, revoked or unknown)")
        expires = answer.get("exp")
        if isinstance(expires, int | float) and expires < time.time():
            raise InvalidToken("the token has expired")
        if self.audiences is not None and not _bound_to(answer.get("aud"), self.audiences):
            raise InvalidToken(f"the token is not for this server (its audience must be {min(self.audiences)})")
        return identity_from_claims(answer)

    def _failing(self, how: str) -> InvalidToken:
        """The refusal when the endpoint failed, kept for ``failure_retry`` seconds."""
        message = f"the token could not be checked: {how}"
        log.warning("%s; tokens are refused for %g s before it is asked again", message, self.failure_retry)
        self._failed = (time.monotonic(), message)
        return InvalidToken(message)
