"""An OpenID upstream against a second, independent provider: django-oidc-provider (from
PyPI) in a Django site of its own (``servers/django_oidc.py``), a person signing in through
Django's own login form. What oidc-provider (npm) passes must pass here too: another
implementation's discovery document, ID tokens, user-info and refresh."""

from __future__ import annotations

import re
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.support.httpserve import free_port
from toolwire.auth.server.upstream import UpstreamError
from toolwire.auth.server.upstreams import OIDCUpstream
from toolwire.auth.server.upstreams.exchange import s256

DJANGO_OIDC = str(Path(__file__).resolve().parents[1] / "servers" / "django_oidc.py")
CALLBACK = "http://127.0.0.1:9/oauth/callback"
SCOPES = ("openid", "email", "profile", "groups")


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, DJANGO_OIDC, str(port), CALLBACK], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == b"ready", f"django-oidc-provider did not start ({process.poll()})"
        yield f"http://127.0.0.1:{port}/openid"
    finally:
        process.terminate()
        process.wait(10)
        if process.stdout is not None:
            process.stdout.close()


async def sign_in(upstream: OIDCUpstream, password: str = "dora-password") -> tuple[str, str]:
    """Dora signs in through Django's login form: (the code sent back, the PKCE verifier)."""
    verifier = secrets.token_urlsafe(48)
    url = await upstream.authorization_url(state="st", redirect_uri=CALLBACK, code_challenge=s256(verifier))
    async with httpx.AsyncClient() as browser:
        login = await browser.get(url, follow_redirects=True)  # to the login form
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text)
        assert token is not None, login.text[:300]
        form = {"csrfmiddlewaretoken": token.group(1), "username": "dora", "password": password}
        response = await browser.post(str(login.url), data=form)
        while not response.headers.get("location", "").startswith(CALLBACK):
            assert response.status_code == 302, f"the sign-in stopped at {response.url}: {response.text[:300]}"
            response = await browser.get(response.url.join(response.headers["location"]))
    back = parse_qs(urlsplit(response.headers["location"]).query)
    assert back["state"] == ["st"]
    return back["code"][0], verifier


async def test_a_person_signs_in_at_another_implementation_and_is_refreshed(issuer: str) -> None:
    upstream = OIDCUpstream(issuer, "toolwire-upstream", "django-secret", scopes=SCOPES)
    code, verifier = await sign_in(upstream)
    identity, tokens = await upstream.exchange(code=code, redirect_uri=CALLBACK, code_verifier=verifier)
    assert (identity.subject, identity.name, identity.email) == ("1", "Dora Explorer", "dora@example.com")
    assert identity.groups == ("backpack", "maps") and identity.claims["iss"] == issuer
    assert tokens.refresh_token and tokens.id_token and tokens.expires_at is not None
    fresh = await upstream.refresh(tokens)
    assert fresh.access_token != tokens.access_token and fresh.refresh_token != tokens.refresh_token


async def test_the_form_authentication_and_a_wrong_verifier(issuer: str) -> None:
    upstream = OIDCUpstream(
        issuer, "toolwire-upstream", "django-secret", scopes=SCOPES, token_auth_method="client_secret_post"
    )
    code, _verifier = await sign_in(upstream)
    with pytest.raises(UpstreamError, match="refused the token request: invalid_grant"):
        await upstream.exchange(code=code, redirect_uri=CALLBACK, code_verifier=secrets.token_urlsafe(48))
    code, verifier = await sign_in(upstream)
    identity, _tokens = await upstream.exchange(code=code, redirect_uri=CALLBACK, code_verifier=verifier)
    assert identity.subject == "1"
