"""Signing in through toolwire's authorization server in a real browser (Debian's Chromium,
driven by Playwright): the consent page, oidc-provider's login and consent, and the redirect
back to the MCP client, for toolwire's own OAuth client and the official Python SDK's."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.auth.server.signing import deployment, provider
from tests.support.chromium import chromium
from tests.support.httpserve import InProcess
from toolwire.client import Client


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    with provider() as url:
        yield url


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    """A fresh Chromium (its own cookies: one person's browser)."""
    async with chromium() as launched:
        yield await launched.new_context()


class Callback:
    """The client's loopback redirect address, a real HTTP server: it answers a page and
    hands over the address the browser was sent to."""

    def __init__(self) -> None:
        self.arrived: asyncio.Queue[str] = asyncio.Queue()
        self.url = ""

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        query = scope["query_string"].decode()
        if scope["path"] == "/callback":  # not the page's icon
            self.arrived.put_nowait(f"{self.url}?{query}")
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await send({"type": "http.response.body", "body": b"back at the application"})


@pytest.fixture
async def callback() -> AsyncIterator[Callback]:
    served = Callback()
    async with InProcess(served, lifespan="off") as url:
        served.url = url.removesuffix("/mcp") + "/callback"
        yield served


class Person:
    """Someone at ``browser`` who allows what they are asked and signs in as ``login``, sent
    back to ``callback``; :attr:`consents` holds the consent pages' text and :attr:`headers`
    those of the first consent page."""

    def __init__(self, browser: Any, callback: Callback, login: str = "alice") -> None:
        self.browser = browser
        self.callback = callback
        self.login = login
        self.consents: list[str] = []
        self.headers: dict[str, str] = {}

    async def authorize(self, url: str) -> str:
        """Follow ``url`` to the redirect back to the client; that address."""
        page = await self.browser.new_page()
        response = await page.goto(url)
        for _ in range(10):
            if page.url.startswith(self.callback.url):
                break
            title = await page.title()
            if title == "Allow access?":
                if not self.headers:
                    self.headers = await response.all_headers()
                self.consents.append(await page.inner_text("body"))
                button = page.locator('button[value="allow"]')
            elif await page.locator('input[name="login"]').count():
                await page.fill('input[name="login"]', self.login)
                await page.fill('input[name="password"]', "anything")
                button = page.locator('button[type="submit"]')
            else:
                button = page.locator('button[type="submit"]')
                assert await button.count(), f"unexpected page {title!r}: {(await page.content())[:400]}"
            async with page.expect_navigation():
                await button.first.click()
        await page.close()
        return await self.callback.arrived.get()


async def test_toolwires_client_signs_in_in_chromium_and_consent_is_remembered(
    issuer: str, tmp_path: Path, browser: Any, callback: Callback
) -> None:
    from toolwire.auth import OAuth

    person = Person(browser, callback)
    redirect = callback.url
    async with deployment(issuer, tmp_path / "auth.sqlite3") as served:
        auth = OAuth(client_name="Notes App", redirect_uri=redirect, authorize=person.authorize, scopes=["tools"])
        async with Client(served.url, auth=auth) as client:
            answer = (await client.call_tool("whoami", {})).content[0].text
        assert answer.startswith("alice via ") and answer.endswith("with tools")
        [consent] = person.consents
        assert "Allow Notes App to use" in consent and redirect in consent and "tools" in consent
        assert "frame-ancestors 'none'" in person.headers["content-security-policy"]
        assert person.headers["x-frame-options"] == "DENY"
        again = OAuth(client_name="Notes App", redirect_uri=redirect, authorize=person.authorize, scopes=["tools"])
        async with Client(served.url, auth=again) as client:
            await client.call_tool("whoami", {})
        assert len(person.consents) == 2  # a new registration is a new client: asked again
        same_client = OAuth(
            client_name="Notes App",
            redirect_uri=redirect,
            authorize=person.authorize,
            scopes=["tools"],
            store=auth.store,
        )
        same_client.store.delete(next(key for key in auth.store.names() if key.startswith("tokens ")))
        async with Client(served.url, auth=same_client) as client:
            await client.call_tool("whoami", {})
        assert len(person.consents) == 2  # the same person and client: not asked again


async def test_the_official_python_sdk_client_signs_in_in_chromium(
    issuer: str, tmp_path: Path, browser: Any, callback: Callback
) -> None:
    import httpx2
    from mcp import Client as SdkClient
    from mcp.client.auth import OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    class Memory:
        def __init__(self) -> None:
            self.tokens: Any = None
            self.client: Any = None

        async def get_tokens(self) -> Any:
            return self.tokens

        async def set_tokens(self, tokens: Any) -> None:
            self.tokens = tokens

        async def get_client_info(self) -> Any:
            return self.client

        async def set_client_info(self, client_info: Any) -> None:
            self.client = client_info

    person = Person(browser, callback)
    redirect = callback.url
    arrived: list[str] = []

    async def redirect_handler(url: str) -> None:
        arrived.append(await person.authorize(url))

    async def callback_handler() -> AuthorizationCodeResult:
        query = dict(re.findall(r"[?&]([^=&]+)=([^&]*)", arrived[-1]))
        from urllib.parse import unquote

        return AuthorizationCodeResult(
            code=unquote(query["code"]), state=unquote(query["state"]), iss=unquote(query.get("iss", ""))
        )

    async with deployment(issuer, tmp_path / "auth.sqlite3") as served:
        metadata = OAuthClientMetadata(
            client_name="SDK App",
            redirect_uris=[redirect],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
            scope="tools",
        )
        storage = Memory()
        oauth = OAuthClientProvider(served.url, metadata, storage, redirect_handler, callback_handler)
        async with httpx2.AsyncClient(auth=oauth, timeout=30.0) as http:
            transport = streamable_http_client(served.url, http_client=http)
            async with SdkClient(transport, read_timeout_seconds=30) as client:  # type: ignore[arg-type]
                result = await client.call_tool("whoami", {})
        assert result.content[0].text.startswith("alice via ")  # type: ignore[union-attr]
        assert "Allow SDK App to use" in person.consents[0]
        assert storage.tokens is not None and storage.tokens.refresh_token


async def test_the_official_typescript_sdk_client_signs_in_in_chromium(
    issuer: str, tmp_path: Path, browser: Any, callback: Callback
) -> None:
    import json

    from tests.support.helpers import node_binary
    from tests.support.oidcserve import NODE_PEERS

    person = Person(browser, callback)
    async with deployment(issuer, tmp_path / "auth.sqlite3") as served:
        process = await asyncio.create_subprocess_exec(
            str(node_binary()),
            str(NODE_PEERS / "sdk_oauth_client.mjs"),
            served.url,
            callback.url,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            cwd=NODE_PEERS,
        )
        assert process.stdin is not None and process.stdout is not None
        try:
            asked = json.loads(await process.stdout.readline())
            process.stdin.write((await person.authorize(asked["authorize"])).encode() + b"\n")
            await process.stdin.drain()
            said = json.loads(await process.stdout.readline())
        finally:
            if process.returncode is None:
                process.kill()
            await process.wait()
    assert said["whoami"].startswith("alice via ") and said["refresh"] is True
    assert "Allow TypeScript SDK App to use" in person.consents[0]
