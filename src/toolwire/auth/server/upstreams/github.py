"""GitHub as the upstream: plain OAuth 2.0, no ID token; who signed in is what GitHub's REST
API says about the token's user (``GET /user``, the verified primary address of
``GET /user/emails``, the organizations of ``GET /user/orgs`` when asked).

Works for OAuth apps and GitHub Apps (whose user tokens expire and come with a refresh
token), on github.com or a GitHub Enterprise Server (``base_url`` and ``api_url``). Every
failure is an :class:`~..upstream.UpstreamError` saying what GitHub answered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ....fetch import shown
from ..upstream import UpstreamError, UpstreamIdentity, UpstreamTokens
from .exchange import (
    authorization_parameters,
    json_of,
    refresh_tokens,
    request,
    token_request,
    tokens_from,
    with_query,
)

#: What GitHub asks of every REST API request.
API_HEADERS = {
    "Accept": "application/vnd.github+json",
    "X-GitHub-Api-Version": "2022-11-28",
    "User-Agent": "toolwire",
}


class GitHubUpstream:
    """GitHub, with the OAuth app or GitHub App ``client_id``/``client_secret``.

    ``scopes``: asked when the server names none (an OAuth app's: ``read:user`` and
    ``user:email``; a GitHub App ignores scopes, its permissions are set where it is
    registered). ``orgs=True`` makes the person's organizations their groups (``read:org``
    is added to the scopes). The person is their numeric GitHub id (a login can be renamed).
    """

    name = "github"

    def __init__(
        self,
        client_id: str,
        client_secret: str | None,
        *,
        scopes: Sequence[str] = ("read:user", "user:email"),
        orgs: bool = False,
        base_url: str = "https://github.com",
        api_url: str = "https://api.github.com",
        timeout: float = 10.0,
    ) -> None:
        if client_secret is None:
            raise ValueError("GitHub needs the client secret of the OAuth app or GitHub App")
        self.client_id = client_id
        self.client_secret = client_secret
        self.orgs = orgs
        self.scopes = (*scopes, "read:org") if orgs and "read:org" not in scopes else tuple(scopes)
        self.authorize_endpoint = f"{base_url.rstrip('/')}/login/oauth/authorize"
        self.token_endpoint = f"{base_url.rstrip('/')}/login/oauth/access_token"
        self.api_url = api_url.rstrip("/")
        self.timeout = timeout

    async def authorization_url(
        self, *, state: str, redirect_uri: str, code_challenge: str, scopes: Sequence[str] | None = None
    ) -> str:
        parameters = authorization_parameters(
            self.client_id,
            state=state,
            redirect_uri=redirect_uri,
            code_challenge=code_challenge,
            scopes=self.scopes if scopes is None else scopes,
        )
        return with_query(self.authorize_endpoint, parameters)

    async def exchange(
        self, *, code: str, redirect_uri: str, code_verifier: str
    ) -> tuple[UpstreamIdentity, UpstreamTokens]:
        form = {"code": code, "redirect_uri": redirect_uri, "code_verifier": code_verifier}
        answer = await token_request(self.name, self.token_endpoint, form, **self._client())
        tokens = tokens_from(answer)
        return await self.identity(tokens.access_token), tokens

    async def refresh(self, tokens: UpstreamTokens) -> UpstreamTokens:
        return await refresh_tokens(self.name, self.token_endpoint, tokens, **self._client())

    async def identity(self, access_token: str) -> UpstreamIdentity:
        """Who ``access_token`` belongs to: ``/user``; the e-mail address from ``/user/emails``
        (the primary one if verified; none when the token may not read them); the
        organizations from ``/user/orgs`` when ``orgs`` is set."""
        user = await self._api("/user", access_token)
        if not isinstance(user, dict) or not isinstance(user.get("id"), int) or not isinstance(user.get("login"), str):
            raise UpstreamError("GitHub's /user answer names no user")
        emails = await self._api("/user/emails", access_token, optional=True)
        primary = [
            entry["email"]
            for entry in emails or []
            if isinstance(entry, dict) and entry.get("primary") and entry.get("verified") and "email" in entry
        ]
        groups: tuple[str, ...] = ()
        if self.orgs:
            organizations = await self._api("/user/orgs", access_token)
            groups = tuple(org["login"] for org in organizations or [] if isinstance(org, dict) and "login" in org)
        name = user.get("name")
        return UpstreamIdentity(
            subject=str(user["id"]),
            email=str(primary[0]) if primary else None,
            name=name if isinstance(name, str) and name else user["login"],
            groups=groups,
            claims=user,
        )

    def _client(self) -> dict[str, Any]:
        """GitHub takes the client's credentials in the form."""
        return {
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "method": "client_secret_post",
            "timeout": self.timeout,
        }

    async def _api(self, path: str, access_token: str, *, optional: bool = False) -> Any:
        """GET ``path`` of the REST API as the token's user; ``None`` when ``optional`` and the
        token may not read it (403, 404: the scope was not granted)."""
        headers = {**API_HEADERS, "Authorization": f"Bearer {access_token}"}
        response = await request(self.name, self.api_url + path, headers=headers, timeout=self.timeout)
        if optional and response.status in (403, 404):
            return None
        answer = json_of(response)
        if response.status != 200:
            said = answer.get("message") if isinstance(answer, dict) else None
            detail = f": {shown(said)}" if isinstance(said, str) else ""
            raise UpstreamError(f"GitHub's API answered HTTP {response.status} for {path}{detail}")
        return answer
