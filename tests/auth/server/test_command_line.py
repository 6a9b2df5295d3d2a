"""``toolwire run FILE --http PORT --oauth-upstream ISSUER --oauth-client-id ID``: a server
process that is its own authorization server, signing people in at oidc-provider with the
secret from the environment; and what does not fit is refused before anything is served."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.auth.server.signing import VAULT, provider, register_at_provider, sign_in
from tests.support.httpserve import ROOT, free_port, wait_for_port
from toolwire.client import Client


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    with provider() as url:
        yield url


async def test_the_command_line_serves_a_server_people_sign_in_to(issuer: str, tmp_path: Path) -> None:
    port = free_port()
    public = f"http://127.0.0.1:{port}"
    client_id, secret = register_at_provider(issuer, f"{public}/oauth/callback")
    command = [
        sys.executable,
        "-m",
        "toolwire",
        "run",
        VAULT,
        "--http",
        str(port),
        "--public-url",
        f"{public}/mcp",
        "--oauth-upstream",
        issuer,
        f"--oauth-client-id={client_id}",  # the provider's IDs may begin with "-"
        "--oauth-state",
        str(tmp_path / "auth.sqlite3"),
    ]
    environment = {**os.environ, "TOOLWIRE_OAUTH_CLIENT_SECRET": secret}
    assert secret not in " ".join(command)
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environment, cwd=ROOT)
    try:
        wait_for_port(port, process)
        _client, tokens = await sign_in(public)
        async with Client(f"{public}/mcp", headers={"Authorization": f"Bearer {tokens['access_token']}"}) as client:
            answer = (await client.call_tool("whoami", {})).content[0].text
        assert answer.startswith("alice via ")
    finally:
        process.kill()
        _out, errors = process.communicate(timeout=10)
    assert secret.encode() not in errors


def test_oauth_options_that_do_not_fit_are_usage_errors() -> None:
    from tests.support.clirun import toolwire

    upstream = ["--oauth-upstream", "https://login.example.com"]
    for options, environment, said in (
        (["--http", "8", *upstream], {}, "--oauth-upstream needs --oauth-client-id"),
        (upstream, {}, "--oauth-upstream goes with --http"),
        (["--http", "8", *upstream, "--oauth-client-id", "x", "--issuer", "https://a"], {}, "do not go together"),
        (["--http", "8", "--public-url", "https://x/mcp"], {}, "go with --oauth-upstream"),
        (["--http", "8", *upstream, "--oauth-client-id", "x"], {}, "set TOOLWIRE_OAUTH_CLIENT_SECRET"),
        (
            ["--http", "8", "--oauth-upstream", "nosuch", "--oauth-client-id", "x"],
            {"TOOLWIRE_OAUTH_CLIENT_SECRET": "s"},
            "unknown identity provider 'nosuch'",
        ),
    ):
        done = toolwire("run", VAULT, *options, **environment)
        assert done.returncode == 2 and said in done.stderr, done.stderr
