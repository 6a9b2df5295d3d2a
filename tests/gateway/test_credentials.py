"""An upstream's credentials are the gateway's own: static headers, a bearer token from the
environment, OAuth client credentials from a real authorization server (oidc-provider), by
discovery or at a configured token endpoint. The caller's token never reaches an upstream."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.httpserve import InProcess, free_port, toolwire_http
from tests.support.oidcserve import oidc_provider
from toolwire import Server
from toolwire.client import Client
from toolwire.gateway import Gateway, parse_config

VAULT = str(Path(__file__).resolve().parents[1] / "servers" / "vault.py")


class Doorkeeper:
    """An ASGI application in front of an upstream's: refuses requests without the expected
    ``X-Api-Key`` and ``Authorization``, and keeps every ``Authorization`` it was sent."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.authorizations: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {key.decode().lower(): value.decode() for key, value in scope["headers"]}
            self.authorizations.append(headers.get("authorization", ""))
            if headers.get("x-api-key") != "key-1" or headers.get("authorization") != "Bearer upstream-token":
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b""})
                return
        await self.app(scope, receive, send)


def notes_server() -> Server:
    server = Server("notes")

    @server.tool
    def note() -> str:
        return "a note"

    return server


async def test_static_headers_and_a_bearer_from_the_environment_and_never_the_callers_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NOTES_TOKEN", "upstream-token")
    upstream = Doorkeeper(notes_server().http_app())
    async with InProcess(upstream, runner="uvicorn") as upstream_url:
        config = (
            f'[upstreams.notes]\nurl = {json.dumps(upstream_url)}\nstart = "eager"\n'
            'headers = { "X-Api-Key" = "key-1" }\nbearer_env = "NOTES_TOKEN"\n'
        )
        gateway = Gateway(parse_config(config))
        async with InProcess(gateway.server.http_app()) as url:
            caller = {"Authorization": "Bearer caller-secret"}
            async with Client(url, headers=caller) as client:
                assert (await client.call_tool("notes.note")).text == "a note"
    assert upstream.authorizations and set(upstream.authorizations) == {"Bearer upstream-token"}


async def test_a_missing_environment_variable_is_named() -> None:
    config = parse_config('[upstreams.notes]\nurl = "http://127.0.0.1:1/mcp"\nbearer_env = "TOOLWIRE_TEST_UNSET"\n')
    gateway = Gateway(config)
    async with Client(gateway.server) as client:
        await client.list_tools()  # starts the lazy upstream, which cannot start
        await gateway.runners["notes"].started()
    error = gateway.runners["notes"].error
    assert error == (
        "upstream 'notes': the environment variable TOOLWIRE_TEST_UNSET (bearer_env) is not set: set it before starting"
    )


@pytest.fixture(scope="module")
def vault() -> Iterator[tuple[str, str]]:
    """(oidc-provider's issuer URL, the URL of a server that takes its tokens)."""
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    with oidc_provider(resource) as issuer:
        command = [VAULT, "--issuer", issuer, "--audience", resource, "--scope", "tools"]
        with toolwire_http(*command, port=port) as (url, _process):
            yield issuer, url


@pytest.mark.parametrize("endpoint", ["discovered", "configured"])
async def test_oauth_client_credentials(vault: tuple[str, str], endpoint: str, monkeypatch: pytest.MonkeyPatch) -> None:
    issuer, url = vault
    monkeypatch.setenv("VAULT_SECRET", "service-secret")
    token_url = ""
    if endpoint == "configured":
        async with httpx.AsyncClient() as http:
            found = (await http.get(f"{issuer}/.well-known/openid-configuration")).json()["token_endpoint"]
        token_url = f", token_url = {json.dumps(found)}"
    config = (
        f'[upstreams.vault]\nurl = {json.dumps(url)}\nstart = "eager"\n'
        f'oauth = {{ client_id = "service", client_secret_env = "VAULT_SECRET", scopes = ["tools"]{token_url} }}\n'
    )
    async with Client(Gateway(parse_config(config)).server) as client:
        assert (await client.call_tool("vault.whoami")).text == "service via service with tools"
