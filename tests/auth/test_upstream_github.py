"""GitHub as the upstream, against a local server speaking GitHub's OAuth endpoints and REST
API over real HTTP (``servers/github_api.py``, a process of its own: there is no network
here): sign-in with PKCE, the identity from ``/user``, ``/user/emails`` and ``/user/orgs``,
a GitHub App's expiring tokens refreshed and rotated, and GitHub's refusals as clear errors."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.support.httpserve import github_api
from toolwire.auth.server.upstream import UpstreamError, UpstreamTokens
from toolwire.auth.server.upstreams import GitHubUpstream, resolve_upstream
from toolwire.auth.server.upstreams.exchange import s256

CALLBACK = "http://127.0.0.1:9/oauth/callback"


@pytest.fixture(scope="module")
def github() -> Iterator[str]:
    with github_api() as url:
        yield url


def upstream_at(
    base: str, client_id: str = "Ov23-oauth-app", secret: str = "oauth-secret", **options: object
) -> GitHubUpstream:
    return GitHubUpstream(client_id, secret, base_url=base, api_url=f"{base}/api", **options)  # type: ignore[arg-type]


async def sign_in(upstream: GitHubUpstream, login: str = "octocat") -> tuple[str, str]:
    """The person authorizes the app at GitHub: (the code sent back, the PKCE verifier)."""
    verifier = secrets.token_urlsafe(48)
    url = await upstream.authorization_url(state="st", redirect_uri=CALLBACK, code_challenge=s256(verifier))
    async with httpx.AsyncClient() as browser:
        back = (await browser.get(f"{url}&login={login}")).headers["location"]
    query = parse_qs(urlsplit(back).query)
    assert query["state"] == ["st"]
    return query["code"][0], verifier


async def test_an_oauth_app_signs_a_person_in_with_their_verified_email_and_orgs(github: str) -> None:
    upstream = upstream_at(github, orgs=True)
    url = await upstream.authorization_url(state="st", redirect_uri=CALLBACK, code_challenge="c" * 43)
    query = parse_qs(urlsplit(url).query)
    assert url.startswith(f"{github}/login/oauth/authorize?")
    assert query["scope"] == ["read:user user:email read:org"] and query["code_challenge_method"] == ["S256"]
    code, verifier = await sign_in(upstream)
    identity, tokens = await upstream.exchange(code=code, redirect_uri=CALLBACK, code_verifier=verifier)
    assert identity.subject == "583231" and identity.name == "The Octocat"
    assert identity.email == "octocat@github.com" and identity.groups == ("github", "octo-org")
    assert identity.claims["login"] == "octocat"
    assert tokens.access_token.startswith("gho_") and tokens.refresh_token is None and tokens.expires_at is None
    assert tokens.scope == "read:org,read:user,user:email"


async def test_without_the_email_scope_or_a_verified_address_there_is_no_email(github: str) -> None:
    narrow = upstream_at(github, scopes=["read:user"])
    code, verifier = await sign_in(narrow)
    identity, _tokens = await narrow.exchange(code=code, redirect_uri=CALLBACK, code_verifier=verifier)
    assert identity.email is None and identity.groups == () and identity.subject == "583231"
    upstream = upstream_at(github)
    code, verifier = await sign_in(upstream, "hubot")
    identity, _tokens = await upstream.exchange(code=code, redirect_uri=CALLBACK, code_verifier=verifier)
    assert (identity.subject, identity.name, identity.email) == ("480938", "hubot", None)


async def test_a_github_apps_expiring_token_is_refreshed_and_its_refresh_token_rotated(github: str) -> None:
    upstream = upstream_at(github, "Iv23-github-app", "app-secret")
    code, verifier = await sign_in(upstream)
    _identity, tokens = await upstream.exchange(code=code, redirect_uri=CALLBACK, code_verifier=verifier)
    assert tokens.access_token.startswith("ghu_") and tokens.refresh_token and tokens.expires_at is not None
    fresh = await upstream.refresh(tokens)
    assert fresh.access_token != tokens.access_token and fresh.refresh_token != tokens.refresh_token
    assert (await upstream.identity(fresh.access_token)).subject == "583231"
    with pytest.raises(UpstreamError, match=r"github refused the token request: bad_refresh_token \(The refresh"):
        await upstream.refresh(tokens)  # the old refresh token was used up


async def test_githubs_refusals_are_clear_errors(github: str) -> None:
    upstream = upstream_at(github)
    code, _verifier = await sign_in(upstream)
    with pytest.raises(UpstreamError, match=r"bad_verification_code \(The code_verifier does not match"):
        await upstream.exchange(code=code, redirect_uri=CALLBACK, code_verifier=secrets.token_urlsafe(48))
    with pytest.raises(UpstreamError, match=r"bad_verification_code \(The code passed is incorrect or expired"):
        await upstream.exchange(code=code, redirect_uri=CALLBACK, code_verifier="x" * 43)  # used up
    wrong = upstream_at(github, secret="not-the-secret")
    code, verifier = await sign_in(wrong)
    with pytest.raises(UpstreamError, match="github refused the token request: incorrect_client_credentials"):
        await wrong.exchange(code=code, redirect_uri=CALLBACK, code_verifier=verifier)
    with pytest.raises(UpstreamError, match="GitHub's API answered HTTP 401 for /user: Bad credentials"):
        await upstream.identity("gho_revoked")
    with pytest.raises(UpstreamError, match="github gave no refresh token: the person must sign in again"):
        await upstream.refresh(UpstreamTokens(access_token="gho_x"))


def test_the_github_preset_and_its_enterprise_endpoints() -> None:
    preset = resolve_upstream("github:orgs=true", "Ov23-x", "s")
    assert isinstance(preset, GitHubUpstream) and preset.name == "github"
    assert preset.token_endpoint == "https://github.com/login/oauth/access_token"
    assert preset.api_url == "https://api.github.com" and "read:org" in preset.scopes
    enterprise = resolve_upstream(
        "github", "Ov23-x", "s", base_url="https://ghe.example.com", api_url="https://ghe.example.com/api/v3"
    )
    assert isinstance(enterprise, GitHubUpstream)
    assert enterprise.authorize_endpoint == "https://ghe.example.com/login/oauth/authorize"
    with pytest.raises(ValueError, match="GitHub needs the client secret"):
        resolve_upstream("github", "Ov23-x", None)
