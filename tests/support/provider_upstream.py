"""The upstream side for the authorization-server tests: oidc-provider (a real OpenID
provider, :mod:`tests.support.oidcserve`) as an :class:`~toolwire.auth.server.upstream.Upstream`,
with a confidential client registered there for the authorization server's callback."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

import httpx
import orjson

from toolwire.auth.server.upstream import UpstreamError, UpstreamIdentity, UpstreamTokens


def register_at_provider(issuer: str, callback: str) -> tuple[str, str]:
    """A client registered at the provider (dynamically) for ``callback``: (ID, secret)."""
    answer = httpx.post(
        f"{issuer}/reg",
        json={
            "redirect_uris": [callback],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "client_secret_basic",
        },
    )
    answer.raise_for_status()
    return str(answer.json()["client_id"]), str(answer.json()["client_secret"])


class ProviderUpstream:
    """oidc-provider at ``issuer`` as the upstream, signing in as client ``client_id``."""

    name = "oidc-provider"

    def __init__(self, issuer: str, client_id: str, client_secret: str, timeout: float = 5.0) -> None:
        self.issuer = issuer
        self.auth = (client_id, client_secret)
        self.timeout = timeout
        self._discovery: dict[str, Any] | None = None

    async def _endpoints(self) -> dict[str, Any]:
        if self._discovery is None:
            self._discovery = (await self._ask("GET", f"{self.issuer}/.well-known/openid-configuration")).json()
        return self._discovery

    async def _ask(self, method: str, url: str, **options: Any) -> httpx.Response:
        try:
            async with httpx.AsyncClient(timeout=self.timeout) as http:
                response = await http.request(method, url, **options)
        except httpx.HTTPError as exc:
            raise UpstreamError(f"{self.issuer} cannot be reached ({type(exc).__name__})") from None
        if response.status_code != 200:
            raise UpstreamError(f"{self.issuer} answered {response.status_code}")
        return response

    async def authorization_url(
        self, *, state: str, redirect_uri: str, code_challenge: str, scopes: Sequence[str] | None = None
    ) -> str:
        endpoint = (await self._endpoints())["authorization_endpoint"]
        query = {
            "response_type": "code",
            "client_id": self.auth[0],
            "redirect_uri": redirect_uri,
            "state": state,
            "code_challenge": code_challenge,
            "code_challenge_method": "S256",
            "scope": " ".join(scopes or ["openid"]),
        }
        return f"{endpoint}?{urlencode(query)}"

    async def exchange(
        self, *, code: str, redirect_uri: str, code_verifier: str
    ) -> tuple[UpstreamIdentity, UpstreamTokens]:
        endpoint = (await self._endpoints())["token_endpoint"]
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
        answer = (
            await self._ask("POST", endpoint, data={**form, "code_verifier": code_verifier}, auth=self.auth)
        ).json()
        payload = answer["id_token"].split(".")[1]
        claims = orjson.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        tokens = UpstreamTokens(answer["access_token"], answer.get("refresh_token"), id_token=answer["id_token"])
        return UpstreamIdentity(subject=claims["sub"], claims=claims), tokens

    async def refresh(self, tokens: UpstreamTokens) -> UpstreamTokens:
        raise UpstreamError("these tests do not refresh at the provider")
