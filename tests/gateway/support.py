"""What the gateway's policy tests share: the policy server (tests/servers/gateway_policy.py)
over stdio, or over HTTP on 127.0.0.1 behind JWT auth from a real token issuer."""

from __future__ import annotations

import contextlib
import os
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.httpserve import InProcess, fresh_server
from tests.support.tokenissuer import TokenIssuer
from toolwire.auth import ProtectedResource
from toolwire.client import Client

SERVER = str(Path(__file__).resolve().parents[1] / "servers" / "gateway_policy.py")

#: Three users: alice is refused delete_repo, bob is asked about it, carol may call it.
TEAM = """
[policy.default]
allow = ["files/*"]

[policy.groups.maintainers]
allow = ["github/*"]
ask = ["github/delete_*"]

[policy.groups.admins]
allow = ["*/*"]

[policy.users."alice@example.com"]
deny = ["github/delete_repo"]

[[policy.constraints]]
tool = "files/read_file"
argument = "path"
under = "/srv/shared"
"""


def write_config(folder: Path, text: str) -> Path:
    path = folder / "gateway.toml"
    path.write_text(text)
    return path


def stdio_client(config: Path, **options: object) -> Client:
    """A client of the policy server run over stdio (an anonymous caller)."""
    environment = {**os.environ, "TOOLWIRE_TEST_GATEWAY": str(config)}
    command = [sys.executable, "-m", "toolwire", "run", SERVER]
    return Client(command, env=environment, **options)  # type: ignore[arg-type]


class Served:
    """The policy server over HTTP with JWT auth: ``url``; :meth:`client` for a user."""

    def __init__(self, issuer: TokenIssuer, url: str) -> None:
        self.issuer = issuer
        self.url = url

    def client(self, subject: str, *, groups: tuple[str, ...] = (), **options: object) -> Client:
        token = self.issuer.token(self.url, subject=subject, email=f"{subject}@example.com", groups=list(groups))
        return Client(self.url, headers={"Authorization": f"Bearer {token}"}, **options)  # type: ignore[arg-type]


@contextlib.asynccontextmanager
async def served_over_http(config: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Served]:
    monkeypatch.setenv("TOOLWIRE_TEST_GATEWAY", str(config))
    async with TokenIssuer() as issuer:
        listener = socket.socket()  # the resource URI is known before the app exists
        listener.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        auth = ProtectedResource.for_issuer(issuer.url, url)
        async with InProcess(fresh_server(SERVER).http_app(auth=auth), listener=listener):
            yield Served(issuer, url)
