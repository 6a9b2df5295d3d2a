"""The GitHub sign-in example (examples/github_signin_server.py), run as its docstring says:
``toolwire run ... --public-url --oauth-upstream github --oauth-client-id`` with the secret in
the environment, GitHub being the local server that speaks its OAuth endpoints and user API
(tests/servers/github_api.py; its base and API URLs given as the preset's parameters). An
MCP client (toolwire's own, with OAuth) registers, a person signs in through the server's
consent page and GitHub, and the tool sees who it is."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.auth.server.signing import browse
from tests.support.httpserve import ROOT, free_port, github_api, wait_for_port
from toolwire.auth import OAuth
from toolwire.client import Client

EXAMPLE = str(ROOT / "examples" / "github_signin_server.py")
REDIRECT = "http://127.0.0.1:9/callback"


@pytest.fixture(scope="module")
def github() -> Iterator[str]:
    with github_api() as url:
        yield url


async def test_a_person_signs_in_with_github_and_the_tool_knows_them(github: str, tmp_path: Path) -> None:
    port = free_port()
    public = f"http://127.0.0.1:{port}/mcp"
    command = [
        *(sys.executable, "-m", "toolwire", "run", EXAMPLE, "--http", str(port), "--public-url", public),
        *("--oauth-upstream", f"github:base_url={github},api_url={github}/api", "--oauth-client-id", "Ov23-oauth-app"),
        *("--oauth-state", str(tmp_path / "authorization.sqlite3")),
    ]
    environment = {**os.environ, "TOOLWIRE_OAUTH_CLIENT_SECRET": "oauth-secret"}
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment, cwd=ROOT)
    try:
        wait_for_port(port, process)
        async with httpx.AsyncClient(timeout=30.0) as browser:

            async def authorize(url: str) -> str:
                return await browse(browser, url, REDIRECT)

            async with Client(public, auth=OAuth(redirect_uri=REDIRECT, authorize=authorize)) as client:
                answer = (await client.call_tool("whoami", {})).content[0].text
        assert answer == "The Octocat <octocat@github.com>, GitHub user 583231"
    finally:
        process.kill()
        _out, errors = process.communicate(timeout=10)
    assert b"oauth-secret" not in errors
