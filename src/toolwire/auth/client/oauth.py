"""OAuth 2.1 for MCP clients over HTTP: what a client does when a server answers ``401``.

    client = Client("https://mcp.example.com/mcp", auth=OAuth())

:class:`OAuth` is an ``httpx.Auth``: it adds the bearer token to every request and, when the
server refuses one, does what the MCP authorization specification orders:

1. Discovery: the server's Protected Resource Metadata (the ``resource_metadata`` of its
   ``WWW-Authenticate`` header, else the well-known URIs with and then without the endpoint's
   path), whose ``resource`` must be this server; then the authorization server's metadata
   (RFC 8414 and OpenID discovery, in the specification's order), whose ``issuer`` must be
   the one asked for. A server without resource metadata (2025-03-26) has its own origin
   as authorization server, with the default endpoints when it has no metadata either.
2. Registration: pre-registered credentials (``client_id=``), else a Client ID Metadata
   Document (``client_metadata_url=``) where the authorization server supports them, else
   Dynamic Client Registration (RFC 7591); registrations are kept per authorization server.
3. A token: authorization code with PKCE (S256), ``state`` and the ``resource`` parameter
   (RFC 8707), the response's ``iss`` checked (RFC 9207); or client credentials
   (``grant="client_credentials"``); or a JWT assertion (``grant="jwt_bearer"``, RFC 7523:
   a workload identity token, or an enterprise identity provider's ID-JAG obtained with
   :class:`~.id_jag.IdJagExchange`). Token endpoint authentication: ``none``,
   ``client_secret_basic``, ``client_secret_post`` or ``private_key_jwt``.
4. Scopes: the challenge's ``scope``, else the resource's ``scopes_supported``, else none
   (``offline_access`` added when the authorization server offers it); on ``403
   insufficient_scope``, authorization again with the union of the scopes asked before and
   those the challenge names ("step-up"), at most ``max_step_ups`` times per request.
5. Tokens are refreshed shortly before they expire and when the server says one is no longer
   valid; a failed refresh starts over at step 1. Where both servers take DPoP (RFC 9449),
   tokens are bound to a key of the client's and every request carries a proof.

How the user authorizes: ``authorize(url)`` is awaited with the authorization URL and must
return the URL the authorization server redirected to (with ``code`` and ``state``). The
default opens the system browser and waits for the redirect on a loopback port. Programs and
tests pass their own (see :mod:`.authorize`). :class:`~.errors.AuthorizationError` when it
cannot be done; its message says why.
Tokens never appear in messages or logs.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Sequence
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

import httpx

from ...fetch import FetchFailed, fetch
from ...logs import get_logger
from .authorize import Authorize, browser_authorize
from .challenge import read_challenge
from .discovery import Discovered, MetadataDiscovery
from .dpop import DPoPKey
from .errors import AuthorizationError, oauth_error
from .registration import ClientRegistration, Registration
from .tokenstore import MemoryTokenStore, TokenStore

log = get_logger("toolwire.auth")

#: Makes the assertion of a JWT-bearer grant: ``(issuer, resource, scopes) -> JWT``.
AssertionSource = Callable[[str, str, "list[str] | None"], Awaitable[str]]
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
#: Seconds before a token's expiry at which it is refreshed.
REFRESH_MARGIN = 30.0
DEFAULT_REDIRECT = "http://127.0.0.1:53682/callback"


class OAuth(MetadataDiscovery, ClientRegistration, httpx.Auth):
    """OAuth for the toolwire ``Client`` (and any ``httpx`` client); see the module's
    description. ``client_id``/``client_secret``/``token_endpoint_auth_method``: a
    pre-registered client. ``client_metadata_url``: this client's Client ID Metadata
    Document. ``client_name``, ``redirect_uri``: what Dynamic Client Registration sends.
    ``scopes``: ask for these instead of choosing. ``private_key`` (a ``cryptography`` private
    key, or PEM text) with ``key_id``: authenticate with ``private_key_jwt``.
    ``grant``: ``"authorization_code"`` (people), ``"client_credentials"`` (a program acting
    for itself) or ``"jwt_bearer"`` with ``assertion``: a JWT, or an async
    ``(issuer, resource, scopes) -> JWT`` such as :class:`~.id_jag.IdJagExchange`. ``store``: where
    registrations and tokens are kept (in memory by default). ``dpop``: bind tokens to a key
    of this client's (RFC 9449; by default when both servers take such tokens), then
    sent as ``Authorization: DPoP`` with a fresh proof on every request, the servers' nonces
    honoured.
    """

    def __init__(
        self,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        token_endpoint_auth_method: str | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "toolwire",
        redirect_uri: str = DEFAULT_REDIRECT,
        scopes: Sequence[str] | None = None,
        grant: str = "authorization_code",
        assertion: str | AssertionSource | None = None,
        authorize: Authorize | None = None,
        private_key: Any = None,
        key_id: str | None = None,
        signing_algorithm: str = "RS256",
        store: TokenStore | None = None,
        offline_access: bool = True,
        dpop: bool | None = None,
        max_step_ups: int = 2,
        timeout: float = 30.0,
    ) -> None:
        if grant not in ("authorization_code", "client_credentials", "jwt_bearer"):
            raise ValueError('grant must be "authorization_code", "client_credentials" or "jwt_bearer"')
        if grant != "authorization_code" and client_id is None:
            raise ValueError(f"the {grant} grant needs a client_id (registered with the authorization server)")
        if (grant == "jwt_bearer") != (assertion is not None):
            raise ValueError('assertion= goes with grant="jwt_bearer", which needs one')
        self.client_id = client_id
        self.client_secret = client_secret
        self.token_endpoint_auth_method = token_endpoint_auth_method
        self.client_metadata_url = client_metadata_url
        self.client_name = client_name
        self.redirect_uri = redirect_uri
        self.scopes = list(scopes) if scopes is not None else None
        self.grant = grant
        self.assertion = assertion
        self.authorize = authorize if authorize is not None else browser_authorize(redirect_uri)
        self.private_key = private_key
        self.key_id = key_id
        self.signing_algorithm = signing_algorithm
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.offline_access = offline_access
        self.dpop = dpop
        self.max_step_ups = max_step_ups
        self.timeout = timeout
        self._locks: dict[str, asyncio.Lock] = {}
        self._metadata: dict[str, dict[str, Any]] = {}  # authorization server metadata by issuer
        self._asked: dict[str, list[str]] = {}  # the scopes last asked for, by resource
        self._nonces: dict[str, str] = {}  # the last DPoP nonce of each origin
        self._keys: dict[str, DPoPKey] = {}  # DPoP keys of stored tokens, by their PEM
        self._obtaining: set[asyncio.Future[dict[str, Any]]] = set()
        self._records: dict[str, dict[str, Any]] = {}  # token records read or written, by target

    # -- the httpx hook ----------------------------------------------------------------------

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        target = str(request.url.copy_with(query=None, fragment=None))
        record = await self._current_record(target)
        self._present(request, record)
        response = yield request
        fresh = False
        step_ups = 0
        nonce_retries = 0
        while True:
            self._note_nonce(str(response.request.url), response.headers)
            scheme, challenge = read_challenge(response.headers.get("www-authenticate")) or ("", {})
            if response.status_code == 401 and challenge.get("error") == "use_dpop_nonce" and nonce_retries < 2:
                nonce_retries += 1  # the same token again, with the server's nonce in the proof
            elif response.status_code == 401:
                if fresh:
                    reason = challenge.get("error_description") or challenge.get("error") or "no reason given"
                    raise AuthorizationError(f"{target} refused the token it was just issued: {reason}")
                record = await self._shielded(self._obtain(target, scheme, challenge, refused=record))
                fresh = True
            elif response.status_code == 403 and challenge.get("error") == "insufficient_scope":
                if step_ups >= self.max_step_ups:
                    return  # the 403 goes to the caller
                step_ups += 1
                record = await self._shielded(self._obtain(target, scheme, challenge, step_up=True))
                fresh = True
            else:
                return
            self._present(request, record)
            response = yield request

    async def _shielded(self, obtaining: Coroutine[Any, Any, dict[str, Any]]) -> dict[str, Any]:
        """Obtaining a token goes on if the request that started it is cancelled (a person
        may be logging in): the next request finds the token."""
        task = asyncio.ensure_future(obtaining)
        self._obtaining.add(task)
        task.add_done_callback(self._obtaining.discard)
        task.add_done_callback(lambda done: done.cancelled() or done.exception())
        return await asyncio.shield(task)

    def _present(self, request: httpx.Request, record: dict[str, Any] | None) -> None:
        """Put the record's token on ``request`` (``Bearer``, or ``DPoP`` with a fresh proof)."""
        if record is None:
            return
        token = str(record["access_token"])
        if record.get("dpop_key"):
            url = str(request.url)
            key = self._dpop_key(record)
            request.headers["Authorization"] = f"DPoP {token}"
            request.headers["DPoP"] = key.proof(request.method, url, token, self._nonces.get(_origin(url)))
        else:
            request.headers["Authorization"] = f"Bearer {token}"

    def _note_nonce(self, url: str, headers: httpx.Headers) -> None:
        nonce = headers.get("dpop-nonce")
        if nonce:
            self._nonces[_origin(url)] = nonce

    def _dpop_key(self, record: dict[str, Any]) -> DPoPKey:
        pem = str(record["dpop_key"])
        key = self._keys.get(pem)
        if key is None:
            key = self._keys[pem] = DPoPKey(pem)
        return key

    # -- tokens ------------------------------------------------------------------------------

    async def _current_record(self, target: str) -> dict[str, Any] | None:
        """The token record for ``target`` (from memory, else the store), refreshed first if
        about to expire."""
        record = self._record(target)
        if record is None or not _expiring(record):
            return record
        async with self._lock(target):
            record = self._record(target)
            if record is not None and _expiring(record):
                record = await self._refresh(target, record)
        return record

    def _record(self, target: str) -> dict[str, Any] | None:
        record = self._records.get(target)
        if record is None:
            record = self.store.load(tokens_key(target))
            if record is not None:
                self._records[target] = record
        return record

    async def _obtain(
        self,
        target: str,
        scheme: str,
        challenge: dict[str, str],
        refused: dict[str, Any] | None = None,
        step_up: bool = False,
    ) -> dict[str, Any]:
        """A new token record for ``target``, after the server refused the request."""
        async with self._lock(target):
            record = self._record(target)
            if record is not None and not step_up:
                if refused is None or record.get("access_token") != refused.get("access_token"):
                    return record  # another request got a token meanwhile
                refreshed = await self._refresh(target, record)
                if refreshed is not None:
                    return refreshed
            found = await self._discover(target, challenge, takes_dpop=scheme == "dpop")
            scopes = self._choose_scopes(target, found, challenge, step_up)
            key = DPoPKey() if self._wants_dpop(found) else None
            tokens = await self._grant(found, scopes, key)
            return self._save(target, found, tokens, key)

    async def _refresh(self, target: str, record: dict[str, Any]) -> dict[str, Any] | None:
        """The record renewed with its refresh token; ``None`` when there is none or the
        authorization server refuses (authorization then starts over)."""
        refresh_token = record.get("refresh_token")
        issuer = record.get("issuer")
        if not isinstance(refresh_token, str) or not isinstance(issuer, str):
            return None
        key = self._dpop_key(record) if record.get("dpop_key") else None
        try:
            metadata = await self._server_metadata(issuer, legacy=bool(record.get("legacy")))
            registration = await self._registration(issuer, metadata)
            form = {"grant_type": "refresh_token", "refresh_token": refresh_token, "resource": record["resource"]}
            tokens = await self._token_request(metadata, registration, form, key)
        except AuthorizationError as exc:
            log.info("refreshing the token for %s failed (%s): authorizing again", target, exc)
            self._records.pop(target, None)
            self.store.delete(tokens_key(target))
            return None
        tokens.setdefault("refresh_token", refresh_token)
        found = Discovered(str(record["resource"]), issuer, metadata, None)
        return self._save(target, found, tokens, key)

    def _save(self, target: str, found: Discovered, tokens: dict[str, Any], key: DPoPKey | None) -> dict[str, Any]:
        expires_in = tokens.get("expires_in")
        record = {
            "access_token": tokens["access_token"],
            "refresh_token": tokens.get("refresh_token"),
            "expires_at": time.time() + expires_in if isinstance(expires_in, int | float) else None,
            "scope": tokens.get("scope"),
            "issuer": found.issuer,
            "resource": found.resource,
            "legacy": bool(found.metadata.get("_fallback")),
            "dpop_key": key.pem if key is not None and str(tokens.get("token_type")).lower() == "dpop" else None,
        }
        self._records[target] = record
        self.store.save(tokens_key(target), record)
        return record

    def _wants_dpop(self, found: Discovered) -> bool:
        """Whether to ask for DPoP-bound tokens: as told, else when both servers take them
        (the authorization server offers ES256 proofs; the MCP server challenges with
        ``DPoP`` or its metadata names DPoP)."""
        if self.dpop is not None:
            return self.dpop
        offered = found.metadata.get("dpop_signing_alg_values_supported")
        return found.takes_dpop and isinstance(offered, list) and "ES256" in offered

    def _lock(self, target: str) -> asyncio.Lock:
        lock = self._locks.get(target)
        if lock is None:
            lock = self._locks[target] = asyncio.Lock()
        return lock

    # -- scopes ------------------------------------------------------------------------------

    def _choose_scopes(
        self, target: str, found: Discovered, challenge: dict[str, str], step_up: bool
    ) -> list[str] | None:
        challenged = challenge.get("scope", "").split() or None
        if step_up:
            scopes = list(dict.fromkeys([*(self._asked.get(target) or []), *(challenged or [])]))
        elif self.scopes is not None:
            scopes = list(self.scopes)
        else:
            scopes = challenged or found.scopes_supported or []
        offered = found.metadata.get("scopes_supported")
        if (
            self.offline_access
            and self.grant == "authorization_code"
            and isinstance(offered, list)
            and "offline_access" in offered
            and "offline_access" not in scopes
        ):
            scopes = [*scopes, "offline_access"]
        self._asked[target] = scopes
        return scopes or None

    # -- grants ------------------------------------------------------------------------------

    async def _grant(self, found: Discovered, scopes: list[str] | None, key: DPoPKey | None) -> dict[str, Any]:
        registration = await self._registration(found.issuer, found.metadata)
        if self.grant == "authorization_code":
            return await self._authorization_code(found, registration, scopes, key)
        form = {"grant_type": "client_credentials", "resource": found.resource}
        if self.grant == "jwt_bearer":
            made = self.assertion
            assertion = made if isinstance(made, str) else await made(found.issuer, found.resource, scopes)  # type: ignore[misc]
            form = {"grant_type": JWT_BEARER, "assertion": assertion, "resource": found.resource}
        if scopes:
            form["scope"] = " ".join(scopes)
        return await self._token_request(found.metadata, registration, form, key)

    async def _authorization_code(
        self, found: Discovered, registration: Registration, scopes: list[str] | None, key: DPoPKey | None
    ) -> dict[str, Any]:
        endpoint = found.metadata.get("authorization_endpoint")
        if not isinstance(endpoint, str):
            raise AuthorizationError(f"the authorization server {found.issuer} has no authorization endpoint")
        verifier = secrets.token_urlsafe(48)
        state = secrets.token_urlsafe(24)
        parameters = {
            "response_type": "code",
            "client_id": registration.client_id,
            "redirect_uri": self.redirect_uri,
            "code_challenge": _s256(verifier),
            "code_challenge_method": "S256",
            "state": state,
            "resource": found.resource,
        }
        if scopes:
            parameters["scope"] = " ".join(scopes)
        url = f"{endpoint}{'&' if '?' in endpoint else '?'}{urlencode(parameters, quote_via=quote)}"
        redirected = await self.authorize(url)
        answer = {key: values[0] for key, values in parse_qs(urlsplit(redirected).query).items()}
        self._check_issuer(found.metadata, answer)
        if "error" in answer:
            description = answer.get("error_description")
            raise AuthorizationError(
                f"the authorization was refused: {answer['error']}" + (f" ({description})" if description else "")
            )
        if answer.get("state") != state:
            raise AuthorizationError("the authorization response does not carry this request's state: ignored")
        if "code" not in answer:
            raise AuthorizationError("the authorization response carries no code")
        form = {
            "grant_type": "authorization_code",
            "code": answer["code"],
            "redirect_uri": self.redirect_uri,
            "code_verifier": verifier,
            "resource": found.resource,
        }
        return await self._token_request(found.metadata, registration, form, key)

    @staticmethod
    def _check_issuer(metadata: dict[str, Any], answer: dict[str, str]) -> None:
        """RFC 9207: a present ``iss`` must be the issuer (compared as strings, nothing
        normalized); an absent one only when the server does not say it sends one."""
        issuer = answer.get("iss")
        if issuer is not None and issuer != metadata.get("issuer"):
            raise AuthorizationError(
                f"the authorization response names issuer {issuer!r}, not {metadata.get('issuer')!r}: ignored (mix-up)"
            )
        if issuer is None and metadata.get("authorization_response_iss_parameter_supported") is True:
            raise AuthorizationError("the authorization response lacks the iss its server promises: ignored")

    async def _token_request(
        self, metadata: dict[str, Any], registration: Registration, form: dict[str, str], key: DPoPKey | None = None
    ) -> dict[str, Any]:
        endpoint = metadata.get("token_endpoint")
        if not isinstance(endpoint, str):
            raise AuthorizationError(f"the authorization server {metadata.get('issuer')} has no token endpoint")
        form = dict(form)
        headers = {"Accept": "application/json"}
        method = registration.method
        if method == "client_secret_basic" and registration.client_secret is not None:
            pair = f"{quote(registration.client_id, safe='')}:{quote(registration.client_secret, safe='')}"
            headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        elif method == "client_secret_post" and registration.client_secret is not None:
            form.update(client_id=registration.client_id, client_secret=registration.client_secret)
        elif method == "private_key_jwt":
            form.update(
                client_id=registration.client_id,
                client_assertion_type="urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
                client_assertion=self._assertion(registration.client_id, metadata),
            )
        else:
            form["client_id"] = registration.client_id
        try:
            for _attempt in range(2):  # again once, with the nonce a DPoP server asks for
                if key is not None:
                    headers["DPoP"] = key.proof("POST", endpoint, nonce=self._nonces.get(_origin(endpoint)))
                response = await fetch(
                    endpoint, method="POST", data=form, headers=headers, timeout=self.timeout, follow_redirects=False
                )
                self._note_nonce(endpoint, response.headers)
                answer = response.json()
                if not (key is not None and isinstance(answer, dict) and answer.get("error") == "use_dpop_nonce"):
                    break
        except (FetchFailed, ValueError) as exc:
            raise AuthorizationError(f"the token request to {endpoint} failed: {type(exc).__name__}") from None
        if response.status != 200 or not isinstance(answer, dict) or not isinstance(answer.get("access_token"), str):
            raise AuthorizationError(f"the token endpoint refused: {oauth_error(response.status, answer)}")
        kind = str(answer.get("token_type", "Bearer")).lower()
        if kind not in ("bearer", "dpop") or (kind == "dpop" and key is None):
            raise AuthorizationError(
                f"the token endpoint issued a {answer.get('token_type')!r} token, which this client cannot use"
            )
        return answer

    def _assertion(self, client_id: str, metadata: dict[str, Any]) -> str:
        """A ``private_key_jwt`` client assertion (RFC 7523) for this token request."""
        from ...extras import needs

        with needs("auth", "private_key_jwt client authentication"):
            import jwt

        now = int(time.time())
        claims = {
            "iss": client_id,
            "sub": client_id,
            "aud": metadata.get("issuer") or metadata.get("token_endpoint"),
            "iat": now,
            "exp": now + 300,
            "jti": secrets.token_urlsafe(16),
        }
        headers = {"kid": self.key_id} if self.key_id else None
        return jwt.encode(claims, self.private_key, algorithm=self.signing_algorithm, headers=headers)


# -- helpers -----------------------------------------------------------------------------------


def _expiring(record: dict[str, Any]) -> bool:
    expires = record.get("expires_at")
    return isinstance(expires, int | float) and expires - REFRESH_MARGIN < time.time()


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


TOKENS_PREFIX = "tokens "


def tokens_key(target: str) -> str:
    """The store key of the token record for the MCP server at ``target``."""
    return TOKENS_PREFIX + target


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
