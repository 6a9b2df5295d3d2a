"""Authorization end to end against a real, independent authorization server: oidc-provider
(a certified OpenID provider, from npm) issuing JWT access tokens, and a protected toolwire
server in a process of its own (``toolwire run --http --issuer``) that finds the provider's
keys through its OpenID discovery document."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.httpserve import BASE, free_port, toolwire_http
from tests.support.oidcserve import client_credentials, oidc_provider
from toolwire.client import Client, ServerError

VAULT = str(Path(__file__).resolve().parents[1] / "servers" / "vault.py")
ERAS = ["2025-11-25", "2026-07-28"]


@pytest.fixture(scope="module")
def deployment() -> Iterator[tuple[str, str]]:
    """(the provider's issuer URL, the protected server's URL)."""
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    with oidc_provider(resource, "http://127.0.0.1:1/other") as issuer:
        command = [VAULT, "--issuer", issuer, "--audience", resource, "--scope", "tools"]
        with toolwire_http(*command, port=port) as (url, _process):
            assert url == resource
            yield issuer, url


async def token(issuer: str, resource: str, scope: str) -> str:
    return await asyncio.to_thread(client_credentials, issuer, resource, scope)


@pytest.mark.parametrize("era", ERAS)
async def test_a_token_from_the_provider_opens_the_server_and_its_scopes_decide(
    deployment: tuple[str, str], era: str
) -> None:
    issuer, url = deployment
    narrow = await token(issuer, url, "tools")
    async with Client(url, protocol=era, headers={"Authorization": f"Bearer {narrow}"}) as client:
        assert [tool.name for tool in await client.list_tools()] == ["whoami"]
        assert (await client.call_tool("whoami", {})).content[0].text == "service via service with tools"
        with pytest.raises(ServerError, match="the tool 'reset' needs the scope admin"):
            await client.call_tool("reset", {})
    wide = await token(issuer, url, "tools admin")
    async with Client(url, protocol=era, headers={"Authorization": f"Bearer {wide}"}) as client:
        assert (await client.call_tool("reset", {})).content[0].text == "reset done"


async def test_the_metadata_names_the_provider_and_401_points_to_it(deployment: tuple[str, str]) -> None:
    issuer, url = deployment
    async with httpx.AsyncClient() as http:
        refused = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=BASE)
        assert refused.status_code == 401
        metadata_url = refused.headers["www-authenticate"].split('resource_metadata="')[1].split('"')[0]
        metadata: Any = (await http.get(metadata_url)).json()
        assert metadata["resource"] == url and metadata["authorization_servers"] == [issuer]
        discovery = (await http.get(f"{issuer}/.well-known/openid-configuration")).json()
        assert discovery["issuer"] == issuer


async def test_a_provider_token_for_another_resource_is_refused(deployment: tuple[str, str]) -> None:
    issuer, url = deployment
    elsewhere = await token(issuer, "http://127.0.0.1:1/other", "tools")
    async with httpx.AsyncClient() as http:
        refused = await http.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={**BASE, "Authorization": f"Bearer {elsewhere}"},
        )
    assert refused.status_code == 401
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]
    assert "the token is not for this server" in refused.headers["www-authenticate"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_official_sdk_client_with_a_provider_token(deployment: tuple[str, str], mode: str) -> None:
    import httpx2
    from mcp import Client as SdkClient
    from mcp.client.streamable_http import streamable_http_client

    issuer, url = deployment
    wide = await token(issuer, url, "tools admin")
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {wide}"}) as http:
        transport = streamable_http_client(url, http_client=http)
        async with SdkClient(transport, mode=mode, read_timeout_seconds=10) as client:  # type: ignore[arg-type]
            result = await client.call_tool("reset", {})
            assert result.content[0].text == "reset done"  # type: ignore[union-attr]


@pytest.mark.parametrize("era", ERAS)
async def test_the_client_gets_its_own_tokens_with_client_credentials_and_steps_up(
    deployment: tuple[str, str], era: str
) -> None:
    from toolwire.auth import OAuth

    _issuer, url = deployment
    auth = OAuth(client_id="service", client_secret="service-secret", grant="client_credentials")
    async with Client(url, protocol=era, auth=auth) as client:
        assert (await client.call_tool("whoami", {})).content[0].text == "service via service with tools"
        assert (await client.call_tool("reset", {})).content[0].text == "reset done"  # after a step-up to admin
        assert (await client.call_tool("whoami", {})).content[0].text == "service via service with admin tools"


@pytest.mark.parametrize("era", ERAS)
async def test_a_person_logs_in_with_code_and_pkce_and_the_client_steps_up(
    deployment: tuple[str, str], era: str
) -> None:
    from tests.support.oidcserve import scripted_login
    from toolwire.auth import OAuth

    _issuer, url = deployment
    redirect = "http://127.0.0.1/callback"
    logins: list[str] = []

    async def authorize(address: str) -> str:
        logins.append(address)
        return await scripted_login(address, redirect)

    auth = OAuth(client_id="app", redirect_uri=redirect, authorize=authorize, scopes=["openid", "tools"])
    async with Client(url, protocol=era, auth=auth) as client:
        assert (await client.call_tool("whoami", {})).content[0].text.startswith("alice via app with")
        assert (await client.call_tool("reset", {})).content[0].text == "reset done"
    assert len(logins) == 2  # the first login, and the step-up to admin
    assert "code_challenge_method=S256" in logins[0] and "resource=" in logins[0]


async def test_a_client_registers_itself_and_refreshes_its_token_without_a_new_login(
    deployment: tuple[str, str],
) -> None:
    from tests.support.oidcserve import scripted_login
    from toolwire.auth import MemoryTokenStore, OAuth

    _issuer, url = deployment
    redirect = "http://127.0.0.1:8765/callback"
    logins: list[str] = []

    async def authorize(address: str) -> str:
        logins.append(address)
        return await scripted_login(address, redirect)

    store = MemoryTokenStore()
    auth = OAuth(redirect_uri=redirect, authorize=authorize, scopes=["openid", "tools"], store=store)
    async with Client(url, auth=auth) as client:
        assert (await client.call_tool("whoami", {})).content[0].text.startswith("alice via ")
        [key] = [key for key in store.names() if key.startswith("tokens ")]
        first = store.load(key)
        assert first is not None and first["refresh_token"]  # the client may refresh
        old_token = first["access_token"]
        first["expires_at"] = 0  # as if it had expired (the record the client holds, too)
        assert (await client.call_tool("whoami", {})).content[0].text.startswith("alice via ")
        second = store.load(key)
        assert second is not None and second["access_token"] != old_token
    assert len(logins) == 1
    assert any(key.startswith("client ") for key in store.names())  # registered dynamically, and kept


def test_the_terminal_logs_in_once_in_the_browser_then_remembers(deployment: tuple[str, str], tmp_path: Path) -> None:
    from tests.support.clirun import toolwire

    _issuer, url = deployment
    opened = tmp_path / "opened.txt"
    opened.touch()
    browser = tmp_path / "browser"  # $BROWSER names one program, which gets the URL
    script = Path(__file__).resolve().parents[1] / "support" / "scripted_browser.py"
    browser.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$1"\n')
    browser.chmod(0o755)
    environment = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "BROWSER": str(browser), "BROWSER_LOG": str(opened)}
    listed = toolwire("tools", url, **environment)
    assert listed.returncode == 0, listed.stderr
    assert "whoami" in listed.stdout and "authorize in your browser" in listed.stderr
    called = toolwire("call", url, "whoami", **environment)
    assert called.returncode == 0 and called.stdout.startswith("alice via"), called.stderr
    assert len(opened.read_text().splitlines()) == 1  # the browser opened once
    store = tmp_path / "config" / "toolwire" / "oauth.json"
    assert store.stat().st_mode & 0o777 == 0o600
    status = toolwire("auth", "status", url, **environment)
    assert (
        status.returncode == 0
        and f"{url} — " in status.stdout
        and "issued by http" in status.stdout
        and "refreshable" in status.stdout
    )
    record = json.loads(store.read_text())[f"tokens {url}"]
    assert record["access_token"] not in status.stdout + listed.stdout + listed.stderr + called.stderr
    assert toolwire("auth", "logout", url, **environment).stdout == f"forgot the tokens of {url}\n"
    assert "no tokens stored" in toolwire("auth", "status", **environment).stdout
