"""Callers of the gateway over HTTP checked as ``[auth]`` says, against a real authorization
server (oidc-provider): no token, 401 naming where to get one; a token for the gateway, the
upstreams' tools; a token for another resource, refused."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import httpx

from tests.gateway.test_gateway import BASIC, command_of
from tests.support.clirun import environment
from tests.support.httpserve import BASE, free_port, wait_for_port
from tests.support.oidcserve import client_credentials, oidc_provider
from toolwire.client import Client


async def test_only_callers_with_a_token_for_the_gateway_get_through(tmp_path: Path) -> None:
    port = free_port()
    gateway_url = f"http://127.0.0.1:{port}/mcp"
    with oidc_provider(gateway_url, "http://127.0.0.1:1/other") as issuer:
        config = tmp_path / "gateway.toml"
        config.write_text(
            f'[auth]\nissuer = {json.dumps(issuer)}\n[upstreams.basic]\ncommand = {command_of(BASIC)}\nstart = "eager"\n'
        )
        command = [sys.executable, "-m", "toolwire", "gateway", str(config), "--http", str(port)]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment())
        try:
            wait_for_port(port, process)
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            async with httpx.AsyncClient() as http:
                refused = await http.post(gateway_url, json=ping, headers=BASE)
                assert refused.status_code == 401
                assert "resource_metadata=" in refused.headers["www-authenticate"]
                elsewhere = await asyncio.to_thread(client_credentials, issuer, "http://127.0.0.1:1/other", "tools")
                wrong = await http.post(
                    gateway_url, json=ping, headers={**BASE, "Authorization": f"Bearer {elsewhere}"}
                )
                assert wrong.status_code == 401
            token = await asyncio.to_thread(client_credentials, issuer, gateway_url, "tools")
            async with Client(gateway_url, headers={"Authorization": f"Bearer {token}"}) as client:
                assert (await client.call_tool("basic.echo", {"text": "let in"})).text == "let in"
        finally:
            process.terminate()
            process.wait(10)
