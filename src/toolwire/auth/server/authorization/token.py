"""The token endpoint: a code (with its PKCE verifier) for tokens, and a refresh token for
new ones.

Codes are single-use: the first exchange takes the code from the store (atomically), and a
code presented again revokes every token issued from it (RFC 6749 section 4.1.2). Refresh
tokens rotate: each refresh answers a new one and retires the old. Two refreshes with the
same token at once (two replicas, two addresses of one client) give one winner, and the
other gets the winner's new refresh token (with an access token of its own) as long as that
one was not used yet and ``refresh_grace`` seconds have not passed: neither is locked out.
Any other use of a retired refresh token is reuse: the whole family (every token of that
sign-in) is revoked (and the provider's tokens kept for the person, when it was their last
sign-in). Errors are RFC 6749's (``invalid_grant``, ``invalid_client``...) with a
description saying what to do.
"""

from __future__ import annotations

import hmac
import re
from typing import TYPE_CHECKING, Any

from ...identity import parse_scopes
from ..verifiers import canonical_uri
from .authorize import s256
from .registration import ClientError
from .tokens import digest, random_token
from .web import NO_STORE, OAuthError, Request, Response, json_response

if TYPE_CHECKING:
    from .server import AuthorizationServer

#: A PKCE code verifier (RFC 7636 section 4.1).
VERIFIER = re.compile(r"[A-Za-z0-9._~-]{43,128}")
#: How long a used code is remembered, to revoke what it gave when it is replayed.
SPENT_CODE_TTL = 3600.0


async def token(server: AuthorizationServer, request: Request) -> Response:
    """``POST /oauth/token``: see the module."""
    form = request.form
    client_id = await authenticate_client(server, request)
    grant_type = form.get("grant_type")
    if grant_type == "authorization_code":
        return await _code(server, form, client_id)
    if grant_type == "refresh_token":
        return await _refresh(server, form, client_id)
    raise OAuthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token")


async def authenticate_client(server: AuthorizationServer, request: Request) -> str:
    """The ID of the client making a token or revocation request, authenticated as it
    registered (a secret by Basic or in the form, or none); ``invalid_client`` (401) otherwise."""
    basic = request.basic_credentials()
    client_id, secret = (
        basic if basic is not None else (request.form.get("client_id"), request.form.get("client_secret"))
    )
    if not client_id:
        raise OAuthError("invalid_client", "the request names no client_id", 401)
    try:
        client = await server.clients.find(client_id)
    except ClientError as exc:
        raise OAuthError("invalid_client", str(exc), 401) from None
    kept = client.get("secret")
    if kept is not None and (secret is None or not hmac.compare_digest(kept, digest(secret))):
        raise OAuthError("invalid_client", "the client secret is missing or wrong", 401)
    return client_id


async def _code(server: AuthorizationServer, form: dict[str, str], client_id: str) -> Response:
    code = form.get("code", "")
    grant = await server.state.take("code", digest(code)) if code else None
    if grant is None:
        spent = await server.state.get("spent", digest(code)) if code else None
        if spent is not None:
            await server.revoke(spent["family"], spent.get("subject", ""))
            raise OAuthError("invalid_grant", "the code was already used: the tokens it gave are revoked")
        raise OAuthError("invalid_grant", "the code is unknown or expired: authorize again")
    family = random_token()
    await server.state.put("spent", digest(code), {"family": family, "subject": grant["subject"]}, SPENT_CODE_TTL)
    if grant["client_id"] != client_id:
        raise OAuthError("invalid_grant", "the code was issued to another client")
    if form.get("redirect_uri", grant["redirect_uri"]) != grant["redirect_uri"]:
        raise OAuthError("invalid_grant", "redirect_uri is not the one the code was asked for with")
    verifier = form.get("code_verifier", "")
    if not VERIFIER.fullmatch(verifier) or not hmac.compare_digest(s256(verifier), grant["code_challenge"]):
        raise OAuthError("invalid_grant", "the code_verifier does not match the code_challenge (PKCE S256)")
    _check_resource(server, form, grant["resource"])
    return await _issue(server, {**grant, "family": family})


async def _refresh(server: AuthorizationServer, form: dict[str, str], client_id: str) -> Response:
    presented = form.get("refresh_token", "")
    if not presented:
        raise OAuthError("invalid_request", "refresh_token is missing")
    kept = digest(presented)
    grant = await server.state.get("refresh", kept)
    if grant is None:
        return await _retired(server, kept, client_id)
    if grant["client_id"] != client_id:
        raise OAuthError("invalid_grant", "the refresh token was issued to another client")
    if await server.state.get("revoked", grant["family"]) is not None:
        raise OAuthError("invalid_grant", "the refresh token was revoked: authorize again")
    _check_resource(server, form, grant["resource"])
    asked = sorted(parse_scopes(form.get("scope"))) if form.get("scope") else None
    if asked is not None and not set(asked) <= set(grant["scope"]):
        raise OAuthError("invalid_scope", "a refresh may ask for the scopes first granted or fewer, not more")
    successor = random_token()
    await server.state.put("refresh", digest(successor), grant, server.refresh_token_ttl)
    if not await server.state.add("rotated", kept, {"successor": successor}, server.refresh_grace):
        await server.state.delete("refresh", digest(successor))  # another request won: answer as it did
        return await _retired(server, kept, client_id)
    used = {"family": grant["family"], "subject": grant["subject"]}
    await server.state.put("used", kept, used, server.refresh_token_ttl)
    await server.state.delete("refresh", kept)
    if server.signins is not None:
        await server.signins.seen(grant["subject"], grant["family"])
    return await _issue(server, grant, successor, asked)


async def _retired(server: AuthorizationServer, kept: str, client_id: str) -> Response:
    """A refresh token that is no longer current: a racing request's (answered with the
    winner's successor), a reuse (the family revoked), or one never issued or expired."""
    rotated = await server.state.get("rotated", kept)
    if rotated is not None:
        grant = await server.state.get("refresh", digest(rotated["successor"]))
        if grant is not None and grant["client_id"] == client_id:
            return await _issue(server, grant, rotated["successor"])
    used = await server.state.get("used", kept)
    if used is not None:
        await server.revoke(used["family"], used.get("subject", ""))
        raise OAuthError("invalid_grant", "the refresh token was already used: every token of this sign-in is revoked")
    raise OAuthError("invalid_grant", "the refresh token is unknown or expired: authorize again")


def _check_resource(server: AuthorizationServer, form: dict[str, str], bound: str) -> None:
    if "resource" not in form:
        return
    try:
        asked = canonical_uri(form["resource"])
    except ValueError as exc:
        raise OAuthError("invalid_target", str(exc)) from None
    if asked != bound:
        raise OAuthError("invalid_target", f"the grant is for {bound}, not {asked}")


async def _issue(
    server: AuthorizationServer,
    grant: dict[str, Any],
    refresh_token: str | None = None,
    scopes: list[str] | None = None,
) -> Response:
    """The token response: an access token for the grant (``scopes``: fewer than granted),
    and its refresh token (a new one unless given)."""
    if refresh_token is None:
        refresh_token = random_token()
        grant = {
            key: grant[key]
            for key in ("client_id", "scope", "resource", "subject", "email", "name", "groups", "family")
        }
        await server.state.put("refresh", digest(refresh_token), grant, server.refresh_token_ttl)
        if server.signins is not None:
            await server.signins.seen(grant["subject"], grant["family"])
    scope = scopes if scopes is not None else grant["scope"]
    access = await server.tokens.access_token({**grant, "scope": " ".join(scope)})
    answer = {
        "access_token": access,
        "token_type": "Bearer",
        "expires_in": int(server.tokens.access_token_ttl),
        "refresh_token": refresh_token,
        "scope": " ".join(scope),
    }
    return json_response(answer, headers=NO_STORE)
