"""What the authorization-server tests share: oidc-provider as the upstream, toolwire's
authorization server in front of it serving the vault server (in this process, on a real
socket), and a person's browser scripted over HTTP (the Chromium tests drive a real one)."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import re
import secrets
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

from tests.support.httpserve import InProcess, fresh_server
from tests.support.oidcserve import oidc_provider
from toolwire.auth.server.authorization import AuthorizationServer
from toolwire.auth.server.upstreams import OIDCUpstream

VAULT = str(Path(__file__).resolve().parents[2] / "servers" / "vault.py")
#: What the authorization server asks oidc-provider for: the person's e-mail, name and groups too.
SCOPES = ("openid", "email", "profile", "groups")


@contextlib.contextmanager
def provider() -> Iterator[str]:
    """oidc-provider, the identity provider upstream; yields its issuer URL."""
    with oidc_provider() as issuer:
        yield issuer


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


def upstream_at(issuer: str, client_id: str, secret: str) -> OIDCUpstream:
    """oidc-provider as the upstream."""
    return OIDCUpstream(issuer, client_id, secret, scopes=SCOPES, name="oidc-provider")


@dataclass
class Deployment:
    url: str  # the MCP endpoint
    issuer: str  # the authorization server's (its origin)
    auth: AuthorizationServer
    app: Any  # the ASGI application served


def listener() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock


@contextlib.asynccontextmanager
async def deployment(issuer: str, state: Any, **options: Any) -> AsyncIterator[Deployment]:
    """The vault server behind an authorization server signing in at ``issuer``."""
    sock = listener()
    origin = f"http://127.0.0.1:{sock.getsockname()[1]}"
    client_id, secret = register_at_provider(issuer, f"{origin}/oauth/callback")
    upstream = options.pop("upstream", None) or upstream_at(issuer, client_id, secret)
    auth = AuthorizationServer(upstream, f"{origin}/mcp", state=state, scopes=["tools", "admin"], **options)
    app = fresh_server(VAULT).http_app(auth=auth)
    async with InProcess(app, listener=sock) as url:
        yield Deployment(url, origin, auth, app)


def pkce() -> tuple[str, str]:
    """(verifier, S256 challenge)."""
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


async def register(issuer: str, redirect_uri: str, **extra: Any) -> dict[str, Any]:
    async with httpx.AsyncClient() as http:
        answer = await http.post(
            f"{issuer}/oauth/register",
            json={"redirect_uris": [redirect_uri], "token_endpoint_auth_method": "none", **extra},
        )
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def authorize_url(issuer: str, client_id: str, redirect_uri: str, challenge: str, **extra: str) -> str:
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "client-state",
        "scope": "tools",
        **extra,
    }
    return f"{issuer}/oauth/authorize?{urlencode(query)}"


async def browse(browser: httpx.AsyncClient, url: str, redirect_uri: str, login: str = "alice") -> str:
    """A person in ``browser`` (which keeps cookies) following ``url``: allowing on the
    consent page, signing in and consenting at oidc-provider, until sent to ``redirect_uri``;
    that address."""
    response = await browser.get(url)
    for _ in range(20):
        location = response.headers.get("location")
        if location is not None:
            target = str(httpx.URL(str(response.url)).join(location))
            if target.startswith(redirect_uri):
                return target
            response = await browser.get(target)
            continue
        page = response.text
        assert response.status_code == 200, f"unexpected page ({response.status_code}): {page[:500]}"
        action = re.search(r'action="([^"]+)"', page)
        assert action, f"unexpected page: {page[:500]}"
        form = dict(re.findall(r'type="hidden" name="([^"]+)" value="([^"]*)"', page))
        if action.group(1) == "/oauth/consent":
            form["decision"] = "allow"
        elif form.get("prompt") == "login":
            form.update(login=login, password="anything")
        response = await browser.post(str(httpx.URL(str(response.url)).join(action.group(1))), data=form)
    raise AssertionError("the sign-in did not end in a redirect to the client")


def query_of(url: str) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}


async def sign_in(issuer: str, redirect_uri: str = "http://127.0.0.1:9/callback") -> tuple[str, dict[str, Any]]:
    """A public client registered, a person signed in, the code exchanged: (client ID, tokens)."""
    client = await register(issuer, redirect_uri)
    verifier, challenge = pkce()
    async with httpx.AsyncClient(timeout=30.0) as browser:
        back = await browse(browser, authorize_url(issuer, client["client_id"], redirect_uri, challenge), redirect_uri)
        code = query_of(back)["code"]
        answer = await browser.post(
            f"{issuer}/oauth/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": redirect_uri,
                "code_verifier": verifier,
                "client_id": client["client_id"],
            },
        )
    assert answer.status_code == 200, answer.text
    return client["client_id"], dict(answer.json())


async def refresh(issuer: str, client_id: str, refresh_token: str) -> httpx.Response:
    async with httpx.AsyncClient() as http:
        return await http.post(
            f"{issuer}/oauth/token",
            data={"grant_type": "refresh_token", "refresh_token": refresh_token, "client_id": client_id},
        )
