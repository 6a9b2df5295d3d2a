"""What every OAuth upstream does alike: the browser's authorization address, requests to the
provider's token endpoint (the client authenticated as the provider asks), and its answers
turned into :class:`~..upstream.UpstreamTokens`. Every failure is an :class:`UpstreamError`
whose message names the provider and what it said, never a secret or a token."""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import quote, urlencode

from ....fetch import Fetched, FetchFailed, fetch, shown
from ..upstream import UpstreamError, UpstreamTokens

#: How the client authenticates at a token endpoint (RFC 8414's names).
TOKEN_AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")


def s256(verifier: str) -> str:
    """The PKCE S256 challenge of ``verifier`` (RFC 7636)."""
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def with_query(endpoint: str, parameters: Mapping[str, str]) -> str:
    """``endpoint`` with ``parameters`` added to its query (it may have one already)."""
    return f"{endpoint}{'&' if '?' in endpoint else '?'}{urlencode(parameters, quote_via=quote)}"


def authorization_parameters(
    client_id: str, *, state: str, redirect_uri: str, code_challenge: str, scopes: Sequence[str]
) -> dict[str, str]:
    """The query of an authorization-code request with PKCE S256."""
    parameters = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": code_challenge,
        "code_challenge_method": "S256",
    }
    if scopes:
        parameters["scope"] = " ".join(scopes)
    return parameters


async def token_request(
    provider: str,
    endpoint: str,
    form: Mapping[str, str],
    *,
    client_id: str,
    client_secret: str | None,
    method: str,
    timeout: float,
) -> dict[str, Any]:
    """POST ``form`` to the token endpoint, the client authenticated by ``method`` (one of
    :data:`TOKEN_AUTH_METHODS`); the JSON answer with an ``access_token``. :class:`UpstreamError`
    when the provider cannot be reached in ``timeout`` seconds or refuses (its ``error`` and
    ``error_description`` in the message)."""
    form = dict(form)
    headers = {"Accept": "application/json"}
    if method == "client_secret_basic" and client_secret is not None:
        pair = f"{quote(client_id, safe='')}:{quote(client_secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    elif method == "client_secret_post" and client_secret is not None:
        form.update(client_id=client_id, client_secret=client_secret)
    else:
        form["client_id"] = client_id
    response = await request(provider, endpoint, method="POST", data=form, headers=headers, timeout=timeout)
    answer = json_of(response)
    if response.status != 200 or not isinstance(answer, dict) or not isinstance(answer.get("access_token"), str):
        raise UpstreamError(f"{provider} refused the token request: {refusal(response.status, answer)}")
    return answer


async def request(
    provider: str,
    url: str,
    *,
    method: str = "GET",
    data: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float,
    max_bytes: int = 256 * 1024,
) -> Fetched:
    """One request to the provider, no redirect followed; :class:`UpstreamError` when it gives
    no answer within ``timeout`` seconds and ``max_bytes``."""
    try:
        return await fetch(
            url, method=method, data=data, headers=headers, timeout=timeout, max_bytes=max_bytes, follow_redirects=False
        )
    except FetchFailed as exc:
        raise UpstreamError(f"{provider} could not be reached: {exc}") from None


def json_of(response: Fetched) -> Any:
    """The answer's JSON, ``None`` when it is not JSON."""
    try:
        return response.json()
    except ValueError:
        return None


def refusal(status: int, answer: Any) -> str:
    """What a provider's error answer says (RFC 6749 §5.2), for a message."""
    if isinstance(answer, dict) and isinstance(answer.get("error"), str):
        description = answer.get("error_description")
        said = shown(answer["error"], 80)
        return said + (f" ({shown(description)})" if isinstance(description, str) else "")
    return f"HTTP {status}"


def tokens_from(answer: Mapping[str, Any], previous: UpstreamTokens | None = None) -> UpstreamTokens:
    """A token response as :class:`UpstreamTokens`; on a refresh (``previous``) what the
    provider did not send again (the refresh token, the scope, the ID token) is kept."""
    lifetime: Any = answer.get("expires_in")
    if isinstance(lifetime, str) and lifetime.isdigit():  # some providers send a string
        lifetime = int(lifetime)
    numeric = isinstance(lifetime, int | float) and not isinstance(lifetime, bool)
    expires_at = time.time() + float(lifetime) if numeric else None

    def kept(name: str) -> str | None:
        value = answer.get(name)
        if isinstance(value, str) and value:
            return value
        return getattr(previous, name) if previous is not None else None

    return UpstreamTokens(
        access_token=str(answer["access_token"]),
        refresh_token=kept("refresh_token"),
        expires_at=expires_at,
        scope=kept("scope"),
        id_token=kept("id_token"),
    )


async def refresh_tokens(
    provider: str,
    endpoint: str,
    tokens: UpstreamTokens,
    *,
    client_id: str,
    client_secret: str | None,
    method: str,
    timeout: float,
) -> UpstreamTokens:
    """New tokens for ``tokens`` from its refresh token; :class:`UpstreamError` without one."""
    if tokens.refresh_token is None:
        raise UpstreamError(f"{provider} gave no refresh token: the person must sign in again")
    form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
    answer = await token_request(
        provider, endpoint, form, client_id=client_id, client_secret=client_secret, method=method, timeout=timeout
    )
    return tokens_from(answer, tokens)
