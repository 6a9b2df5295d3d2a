"""The authorization endpoint and what follows it in the browser: the client's request is
checked (client, exact redirect URI, PKCE S256, ``resource``), the person consents on the
server's own page (unless they already did for this client), is sent to the upstream
provider with the server's own PKCE and ``state``, and comes back to the callback, which
exchanges the provider's code (keeping the provider's tokens in the vault when the operator
allows tools to have them) and sends the browser back to the client with a code of the
server's own.

Until the redirect URI is known good, errors are shown on a page (never redirected, RFC 6749
section 4.1.2.1); after, they go back to the client as ``error`` with its ``state``. A
``state`` the callback does not know, or that another browser started, is refused with a
page; a provider that fails or cannot be reached gets a page saying so (its time limit
bounds the wait).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from typing import TYPE_CHECKING, Any

from ...identity import parse_scopes
from ..upstream import UpstreamError
from ..verifiers import canonical_uri
from .consent import consent_page, error_page
from .registration import ClientError, redirect_matches
from .tokens import digest, random_token
from .web import Request, Response, browser_cookie_name, redirect, set_cookie, with_query

if TYPE_CHECKING:
    from .server import AuthorizationServer

#: Seconds a person has between the client's request and coming back from the provider.
PENDING_TTL = 15 * 60.0
#: A browser cookie and a remembered consent last 30 days.
REMEMBERED_TTL = 30 * 24 * 3600


def s256(verifier: str) -> str:
    """The PKCE S256 challenge of ``verifier``."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


async def authorize(server: AuthorizationServer, request: Request) -> Response:
    """``GET /oauth/authorize``: see the module."""
    asked = request.query
    client_id = asked.get("client_id", "")
    if not client_id:
        return error_page(400, "Invalid request", "The application sent no client_id. Tell its developer.")
    try:
        client = await server.clients.find(client_id)
    except ClientError as exc:
        return error_page(400, "Unknown application", f"{exc} The application must register again.")
    redirect_uri = asked.get("redirect_uri", "")
    if not redirect_uri and len(client["redirect_uris"]) == 1:
        redirect_uri = client["redirect_uris"][0]
    if not redirect_matches(client["redirect_uris"], redirect_uri):
        return error_page(
            400,
            "Wrong redirect address",
            f"The application asked to be sent back to {redirect_uri or '(nothing)'}, which it did not register. "
            "Nothing was sent there.",
        )
    state = asked.get("state")

    def back(error: str, description: str) -> Response:
        answer = {"error": error, "error_description": description, "iss": server.issuer}
        return redirect(with_query(redirect_uri, {**answer, **({"state": state} if state is not None else {})}))

    if asked.get("response_type") != "code":
        return back("unsupported_response_type", "response_type must be 'code'")
    challenge = asked.get("code_challenge", "")
    if asked.get("code_challenge_method") != "S256" or not 43 <= len(challenge) <= 128:
        return back("invalid_request", "PKCE is required: code_challenge with code_challenge_method=S256")
    try:
        resource = canonical_uri(asked["resource"]) if "resource" in asked else server.resource
    except ValueError as exc:
        return back("invalid_target", str(exc))
    if resource != server.resource:
        return back("invalid_target", f"this authorization server issues tokens for {server.resource} only")
    scopes = server.grantable(sorted(parse_scopes(asked.get("scope"))))
    secure = server.issuer.startswith("https:")
    cookie_name = browser_cookie_name(secure)
    browser = request.cookies.get(cookie_name) or random_token()
    pending_id, form_token = random_token(), random_token()
    pending = {
        "client_id": client_id,
        "client_name": client.get("client_name", client_id),
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": challenge,
        "scope": scopes,
        "resource": resource,
        "browser": digest(browser),
        "form_token": digest(form_token),
    }
    cookie = [set_cookie(cookie_name, browser, secure, REMEMBERED_TTL)]
    subject = await _remembered_subject(server, browser)
    if subject is not None and await _consented(server, subject, client_id, redirect_uri, scopes):
        pending["consented_by"] = subject
        await server.state.put("pending", pending_id, pending, PENDING_TTL)
        response = await _to_upstream(server, pending_id, pending)
        response.headers.extend(cookie)
        return response
    await server.state.put("pending", pending_id, pending, PENDING_TTL)
    response = consent_page(
        server=server.resource,
        provider=server.upstream.name,
        client_name=pending["client_name"],
        client_id=client_id,
        redirect_uri=redirect_uri,
        scopes=scopes,
        pending=pending_id,
        form_token=form_token,
    )
    response.headers.extend(cookie)
    return response


async def consent(server: AuthorizationServer, request: Request) -> Response:
    """``POST /oauth/consent``: the person's answer, accepted only with the form's token and
    from the browser that was shown the page."""
    form = request.form
    pending_id = form.get("pending", "")
    pending = await server.state.get("pending", pending_id) if pending_id else None
    browser = request.cookies.get(browser_cookie_name(server.issuer.startswith("https:")), "")
    if (
        pending is None
        or not hmac.compare_digest(pending["form_token"], digest(form.get("form_token", "")))
        or not hmac.compare_digest(pending["browser"], digest(browser))
    ):
        return error_page(
            400,
            "This page has expired",
            "The consent form is not valid in this browser any more. Go back to the application and start again.",
        )
    if form.get("decision") != "allow":
        await server.state.delete("pending", pending_id)
        answer = {
            "error": "access_denied",
            "error_description": "the person did not allow access",
            "iss": server.issuer,
        }
        if pending["state"] is not None:
            answer["state"] = pending["state"]
        return redirect(with_query(pending["redirect_uri"], answer))
    return await _to_upstream(server, pending_id, pending)


async def _to_upstream(server: AuthorizationServer, pending_id: str, pending: dict[str, Any]) -> Response:
    """The redirect to the provider: the server's own ``state`` and PKCE for this sign-in."""
    upstream_state, verifier = random_token(), random_token() + random_token()
    try:
        url = await server.upstream.authorization_url(
            state=upstream_state,
            redirect_uri=server.callback_url,
            code_challenge=s256(verifier),
            scopes=server.upstream_scopes,
        )
    except UpstreamError as exc:
        return _provider_failed(server, exc)
    await server.state.put("upstream", upstream_state, {"pending": pending_id, "verifier": verifier}, PENDING_TTL)
    return redirect(url)


async def callback(server: AuthorizationServer, request: Request) -> Response:
    """``GET /oauth/callback``: the provider sent the browser back (see the module)."""
    asked = request.query
    upstream_state = asked.get("state", "")
    started = await server.state.take("upstream", upstream_state) if upstream_state else None
    pending = await server.state.take("pending", started["pending"]) if started is not None else None
    browser = request.cookies.get(browser_cookie_name(server.issuer.startswith("https:")), "")
    if started is None or pending is None or not hmac.compare_digest(pending["browser"], digest(browser)):
        return error_page(
            400,
            "This sign-in is not valid",
            "The identity provider sent back a sign-in this server did not start in this browser, or one that "
            "expired. Go back to the application and start again.",
        )
    answer: dict[str, str] = {"iss": server.issuer}
    if pending["state"] is not None:
        answer["state"] = pending["state"]
    if "error" in asked or "code" not in asked:
        said = asked.get("error_description") or asked.get("error") or "no code"
        answer.update(error="access_denied", error_description=f"{server.upstream.name} said: {said}"[:300])
        return redirect(with_query(pending["redirect_uri"], answer))
    try:
        identity, tokens = await server.upstream.exchange(
            code=asked["code"], redirect_uri=server.callback_url, code_verifier=started["verifier"]
        )
    except UpstreamError as exc:
        return _provider_failed(server, exc)
    if pending.get("consented_by") not in (None, identity.subject):
        answer.update(
            error="access_denied", error_description="signed in as another person than the one who allowed access"
        )
        return redirect(with_query(pending["redirect_uri"], answer))
    if server.vault is not None:
        await server.vault.keep(identity.subject, tokens)
    await server.state.put("browser", digest(browser), {"subject": identity.subject}, REMEMBERED_TTL)
    await _remember_consent(server, identity.subject, pending)
    await server.clients.used(pending["client_id"])
    code = random_token()
    grant = {
        "client_id": pending["client_id"],
        "redirect_uri": pending["redirect_uri"],
        "code_challenge": pending["code_challenge"],
        "scope": pending["scope"],
        "resource": pending["resource"],
        "subject": identity.subject,
        "email": identity.email,
        "name": identity.name,
        "groups": list(identity.groups),
        "at": time.time(),
    }
    await server.state.put("code", digest(code), grant, server.code_ttl)
    answer["code"] = code
    return redirect(with_query(pending["redirect_uri"], answer))


def _provider_failed(server: AuthorizationServer, exc: UpstreamError) -> Response:
    return error_page(
        502,
        "Sign-in is unavailable",
        f"The identity provider {server.upstream.name} could not be used: {exc}. Try again later.",
    )


async def _remembered_subject(server: AuthorizationServer, browser: str) -> str | None:
    record = await server.state.get("browser", digest(browser))
    return record["subject"] if record is not None else None


def _consent_key(subject: str, client_id: str) -> str:
    return digest(f"{subject}\n{client_id}")


async def _consented(
    server: AuthorizationServer, subject: str, client_id: str, redirect_uri: str, scopes: list[str]
) -> bool:
    record = await server.state.get("consent", _consent_key(subject, client_id))
    return record is not None and redirect_uri in record["redirect_uris"] and set(scopes) <= set(record["scopes"])


async def _remember_consent(server: AuthorizationServer, subject: str, pending: dict[str, Any]) -> None:
    key = _consent_key(subject, pending["client_id"])
    record = await server.state.get("consent", key) or {"redirect_uris": [], "scopes": []}
    record["redirect_uris"] = sorted({*record["redirect_uris"], pending["redirect_uri"]})
    record["scopes"] = sorted({*record["scopes"], *pending["scope"]})
    await server.state.put("consent", key, record, REMEMBERED_TTL)
