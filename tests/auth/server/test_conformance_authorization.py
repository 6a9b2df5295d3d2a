"""The official conformance suite's authorization-server scenarios, run against toolwire's
authorization server: its metadata endpoint, and the authorization code grant, with a person
signing in (scripted) where the suite waits for one."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.auth.server.signing import browse, deployment, provider, register
from tests.conformance.run import SUITE, node_environment, results, verdict
from tests.support.httpserve import free_port


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    with provider() as url:
        yield url


async def test_the_suites_authorization_server_scenarios_pass(issuer: str, tmp_path: Path) -> None:
    port = free_port()
    callback = f"http://127.0.0.1:{port}/callback"
    async with deployment(issuer, tmp_path / "auth.sqlite3") as served:
        client = await register(served.issuer, callback)
        output = tmp_path / "results"
        suite = await asyncio.create_subprocess_exec(
            "node",
            str(SUITE),
            "authorization",
            "--url",
            served.issuer,
            f"--client-id={client['client_id']}",  # an ID may begin with "-"
            "--resource",
            served.url,
            "--port",
            str(port),
            "-o",
            str(output),
            stdout=asyncio.subprocess.PIPE,
            env=node_environment(),
            cwd=SUITE.parents[4],
        )
        assert suite.stdout is not None
        try:
            async for line in suite.stdout:
                if line.startswith(f"{served.issuer}/oauth/authorize".encode()):
                    async with httpx.AsyncClient(timeout=30.0) as browser:
                        back = await browse(browser, line.decode().strip(), callback)
                        await browser.get(back)
        finally:
            await suite.wait()
    found = results(output)
    assert set(found) == {
        "authorization-server-authorization-server-metadata-endpoint",
        "authorization-server-authorization-code-grant",
    }
    for checks in found.values():
        passed, detail = verdict(checks, strict=True)
        assert passed, detail
