"""An OpenID Connect provider as the upstream, found by its discovery document.

:class:`OIDCUpstream` reads the discovery document once (within a time and size cap; a
failed read is tried again on the next sign-in), sends the browser to the authorization
endpoint with PKCE S256 and a nonce, and exchanges the code at the token endpoint (the
client authenticated as the provider's metadata allows: HTTP Basic first, else the form).
The ID token is verified (signature with the provider's published keys, ``iss``, ``aud``,
``azp``, ``exp``, ``iat``, the nonce) and its claims, completed by the user-info endpoint
when there is one, become the :class:`~..upstream.UpstreamIdentity`. Every failure is an
:class:`~..upstream.UpstreamError` that says what the provider did or failed to do.

The nonce is derived from the PKCE challenge (so the exchange, which has the verifier, can
check it without keeping anything between the two legs): an ID token minted for another
sign-in does not pass.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from ....extras import require
from ....fetch import shown
from ..jwks import JWKS, KeyNotFound
from ..upstream import UpstreamError, UpstreamIdentity, UpstreamTokens
from ..verifiers import DEFAULT_ALGORITHMS
from .exchange import (
    TOKEN_AUTH_METHODS,
    authorization_parameters,
    json_of,
    refresh_tokens,
    request,
    s256,
    token_request,
    tokens_from,
    with_query,
)

DISCOVERY_PATH = "/.well-known/openid-configuration"
#: Entra ID's multi-tenant documents name the issuer with this placeholder for the tenant's id.
TENANT_PLACEHOLDER = "{tenantid}"

#: A claim by name, or a path into nested objects (``("realm_access", "roles")``).
ClaimPath = str | tuple[str, ...]


class OIDCUpstream:
    """The OpenID provider whose discovery document is at ``discovery_url`` (or whose issuer
    is: the well-known path is added), with the client ``client_id``/``client_secret``
    registered there (no secret: a public client, PKCE alone).

    ``scopes`` are asked when the server names none; ``subject_claim`` is the claim that
    names the person (``sub``; Entra ID's ``oid`` is stable across applications) and
    ``groups_claim`` the one holding the groups or roles. ``userinfo`` (default: when the
    provider has the endpoint) completes the ID token's claims with the user-info answer.
    ``token_auth_method`` overrides the client authentication the metadata suggests.
    ``name`` names the provider on pages and in logs (default: the issuer's host).
    :class:`~toolwire.extras.ExtraMissing` without the ``auth`` extra.
    """

    def __init__(
        self,
        discovery_url: str,
        client_id: str,
        client_secret: str | None = None,
        *,
        scopes: Sequence[str] = ("openid", "email", "profile"),
        subject_claim: ClaimPath = "sub",
        groups_claim: ClaimPath | None = "groups",
        userinfo: bool | None = None,
        token_auth_method: str | None = None,
        extra_authorization_parameters: Mapping[str, str] | None = None,
        name: str | None = None,
        timeout: float = 10.0,
        leeway: float = 60.0,
    ) -> None:
        require("auth", "an OpenID upstream (its ID tokens are verified)")
        if not discovery_url.startswith(("https://", "http://")):
            raise ValueError(f"{discovery_url!r} is not an http(s) URL of an OpenID provider")
        if token_auth_method is not None and token_auth_method not in TOKEN_AUTH_METHODS:
            raise ValueError(f"token_auth_method must be one of {', '.join(TOKEN_AUTH_METHODS)}")
        if "openid" not in scopes:
            raise ValueError("the scopes of an OpenID provider must include 'openid'")
        if not discovery_url.rstrip("/").endswith(DISCOVERY_PATH):
            discovery_url = discovery_url.rstrip("/") + DISCOVERY_PATH
        self.discovery_url = discovery_url
        self.client_id = client_id
        self.client_secret = client_secret
        self.scopes = tuple(scopes)
        self.subject_claim = subject_claim
        self.groups_claim = groups_claim
        self.userinfo = userinfo
        self.token_auth_method = token_auth_method
        self.extra_authorization_parameters = dict(extra_authorization_parameters or {})
        self.timeout = timeout
        self.leeway = leeway
        self._name = name or (urlsplit(discovery_url).hostname or "the identity provider")
        self._metadata: dict[str, Any] | None = None
        self._reading: asyncio.Lock | None = None
        self._keys: JWKS | None = None

    @property
    def name(self) -> str:
        return self._name

    # -- the Upstream interface --------------------------------------------------------------

    async def authorization_url(
        self, *, state: str, redirect_uri: str, code_challenge: str, scopes: Sequence[str] | None = None
    ) -> str:
        metadata = await self.metadata()
        parameters = authorization_parameters(
            self.client_id,
            state=state,
            redirect_uri=redirect_uri,
            code_challenge=code_challenge,
            scopes=self.scopes if scopes is None else scopes,
        )
        parameters["nonce"] = nonce_for(code_challenge)
        return with_query(metadata["authorization_endpoint"], {**self.extra_authorization_parameters, **parameters})

    async def exchange(
        self, *, code: str, redirect_uri: str, code_verifier: str
    ) -> tuple[UpstreamIdentity, UpstreamTokens]:
        metadata = await self.metadata()
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": code_verifier,
        }
        answer = await token_request(self.name, metadata["token_endpoint"], form, **self._client(metadata))
        tokens = tokens_from(answer)
        if tokens.id_token is None:
            raise UpstreamError(f"{self.name} sent no ID token (was the 'openid' scope granted?)")
        claims = await self.verify_id_token(tokens.id_token, nonce=nonce_for(s256(code_verifier)))
        if self._wants_userinfo(metadata):
            claims = {**await self._userinfo(metadata, tokens.access_token, claims["sub"]), **claims}
        return self.identity(claims), tokens

    async def refresh(self, tokens: UpstreamTokens) -> UpstreamTokens:
        metadata = await self.metadata()
        return await refresh_tokens(self.name, metadata["token_endpoint"], tokens, **self._client(metadata))

    # -- the pieces ----------------------------------------------------------------------------

    async def metadata(self) -> dict[str, Any]:
        """The discovery document, read once (concurrent first sign-ins wait for one read);
        :class:`UpstreamError` when it cannot be read or is not the provider's."""
        if self._metadata is not None:
            return self._metadata
        if self._reading is None:
            self._reading = asyncio.Lock()
        async with self._reading:
            if self._metadata is None:
                self._metadata = await self._read_metadata()
        return self._metadata

    async def _read_metadata(self) -> dict[str, Any]:
        response = await request(
            self.name, self.discovery_url, headers={"Accept": "application/json"}, timeout=self.timeout
        )
        document = json_of(response)
        if response.status != 200 or not isinstance(document, dict):
            raise UpstreamError(
                f"{self.name}'s discovery document {shown(self.discovery_url)} could not be read "
                f"(HTTP {response.status})"
            )
        issuer = document.get("issuer")
        if not isinstance(issuer, str) or not _is_discovery_of(self.discovery_url, issuer):
            raise UpstreamError(
                f"the discovery document at {shown(self.discovery_url)} names the issuer {shown(repr(issuer))}, "
                "which it does not belong to: not used"
            )
        for endpoint in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
            if not isinstance(document.get(endpoint), str):
                raise UpstreamError(f"{self.name}'s discovery document has no {endpoint}")
        methods = document.get("code_challenge_methods_supported")
        if isinstance(methods, list) and "S256" not in methods:
            raise UpstreamError(f"{self.name} does not support PKCE with S256, which sign-in requires")
        return document

    async def verify_id_token(self, id_token: str, *, nonce: str | None) -> dict[str, Any]:
        """The claims of ``id_token`` once its signature, issuer, audience, times and
        ``nonce`` (when given) check out; :class:`UpstreamError` saying which did not."""
        import jwt

        metadata = await self.metadata()
        try:
            header = jwt.get_unverified_header(id_token)
        except jwt.PyJWTError:
            raise UpstreamError(f"{self.name} sent an ID token that is not a signed JWT") from None
        algorithm = header.get("alg")
        supported = metadata.get("id_token_signing_alg_values_supported") or DEFAULT_ALGORITHMS
        if algorithm not in DEFAULT_ALGORITHMS or algorithm not in supported:
            raise UpstreamError(f"{self.name} signed its ID token with {shown(str(algorithm))}, which is not accepted")
        if self._keys is None:
            self._keys = JWKS(metadata["jwks_uri"], timeout=self.timeout)
        try:
            key = await self._keys.key(header.get("kid"), algorithm)
        except KeyNotFound as exc:
            raise UpstreamError(f"{self.name}'s ID token cannot be verified: {exc}") from None
        try:
            claims: dict[str, Any] = jwt.decode(
                id_token,
                key,
                algorithms=[algorithm],
                audience=self.client_id,
                leeway=self.leeway,
                options={"require": ["iss", "sub", "aud", "exp", "iat"], "verify_iss": False},
            )
        except jwt.PyJWTError as exc:
            raise UpstreamError(f"{self.name}'s ID token was refused: {exc}") from None
        expected = _expected_issuer(metadata["issuer"], claims)
        if claims["iss"] != expected:
            raise UpstreamError(f"{self.name}'s ID token was issued by {shown(str(claims['iss']))}, not {expected}")
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if len(audiences) > 1 and claims.get("azp") != self.client_id:
            raise UpstreamError(f"{self.name}'s ID token is for several clients and not authorized for this one")
        if nonce is not None and claims.get("nonce") != nonce:
            raise UpstreamError(f"{self.name}'s ID token was not issued for this sign-in (its nonce differs)")
        if not isinstance(claims["sub"], str) or not claims["sub"]:
            raise UpstreamError(f"{self.name}'s ID token names no subject")
        return claims

    def identity(self, claims: Mapping[str, Any]) -> UpstreamIdentity:
        """The person the claims describe: the subject from ``subject_claim``, the e-mail
        address unless the provider says it is not verified, the name, the groups."""
        subject = claim(claims, self.subject_claim)
        if not isinstance(subject, str | int) or isinstance(subject, bool) or subject == "":
            raise UpstreamError(f"{self.name} did not say who signed in (no {_spelled(self.subject_claim)} claim)")
        email = claims.get("email")
        if not isinstance(email, str) or claims.get("email_verified") is False:
            email = None
        name = claims.get("name") or claims.get("preferred_username")
        groups = claim(claims, self.groups_claim) if self.groups_claim is not None else None
        return UpstreamIdentity(
            subject=str(subject),
            email=email,
            name=name if isinstance(name, str) else None,
            groups=_strings(groups),
            claims=dict(claims),
        )

    def _client(self, metadata: Mapping[str, Any]) -> dict[str, Any]:
        method = self.token_auth_method or _auth_method(metadata, self.client_secret is not None)
        return {
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "method": method,
            "timeout": self.timeout,
        }

    def _wants_userinfo(self, metadata: Mapping[str, Any]) -> bool:
        has_endpoint = isinstance(metadata.get("userinfo_endpoint"), str)
        if self.userinfo and not has_endpoint:
            raise UpstreamError(f"{self.name} has no user-info endpoint")
        return has_endpoint if self.userinfo is None else self.userinfo

    async def _userinfo(self, metadata: Mapping[str, Any], access_token: str, subject: str) -> dict[str, Any]:
        """The user-info answer; it must be about the ID token's subject (OIDC Core §5.3.2)."""
        headers = {"Accept": "application/json", "Authorization": f"Bearer {access_token}"}
        response = await request(self.name, metadata["userinfo_endpoint"], headers=headers, timeout=self.timeout)
        answer = json_of(response)
        if response.status != 200 or not isinstance(answer, dict):
            raise UpstreamError(f"{self.name}'s user-info endpoint answered HTTP {response.status}")
        if answer.get("sub") != subject:
            raise UpstreamError(f"{self.name}'s user-info answer is about someone other than who signed in")
        return answer


def nonce_for(code_challenge: str) -> str:
    """The nonce of the sign-in whose PKCE challenge is ``code_challenge``."""
    return s256("nonce:" + code_challenge)


def claim(claims: Mapping[str, Any], path: ClaimPath | None) -> Any:
    """The claim at ``path`` (a name, or the names into nested objects); ``None`` if absent."""
    if path is None:
        return None
    value: Any = claims
    for step in (path,) if isinstance(path, str) else path:
        value = value.get(step) if isinstance(value, Mapping) else None
    return value


def _strings(value: Any) -> tuple[str, ...]:
    """Groups as the provider sent them: a list of names, or one name."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(item for item in value if isinstance(item, str))
    return ()


def _spelled(path: ClaimPath) -> str:
    return path if isinstance(path, str) else ".".join(path)


def _auth_method(metadata: Mapping[str, Any], has_secret: bool) -> str:
    """HTTP Basic when the provider takes it (its default, RFC 8414), else the form."""
    if not has_secret:
        return "none"
    supported = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    return "client_secret_basic" if "client_secret_basic" in supported else "client_secret_post"


def _is_discovery_of(discovery_url: str, issuer: str) -> bool:
    """Whether the document at ``discovery_url`` may speak for ``issuer`` (OIDC Discovery
    §4.3: the issuer plus the well-known path; a multi-tenant template, that of its tenant)."""
    if TENANT_PLACEHOLDER in issuer:
        prefix, _, rest = issuer.partition(TENANT_PLACEHOLDER)
        return discovery_url.startswith(prefix) and discovery_url.endswith(rest.rstrip("/") + DISCOVERY_PATH)
    return discovery_url == issuer.rstrip("/") + DISCOVERY_PATH


def _expected_issuer(issuer: str, claims: Mapping[str, Any]) -> str:
    """The issuer an ID token must name: a multi-tenant template filled with its ``tid``."""
    tenant = claims.get("tid")
    if TENANT_PLACEHOLDER in issuer and isinstance(tenant, str):
        return issuer.replace(TENANT_PLACEHOLDER, tenant)
    return issuer
