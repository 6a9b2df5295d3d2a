"""A real OpenID provider for the tests: oidc-provider (npm, installed by scripts/setup.sh in
tests/interop/node) on a free port of 127.0.0.1, run by ``tests/interop/node/oidc_provider.mjs``."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx

from tests.support.helpers import node_binary
from tests.support.httpserve import free_port

NODE_PEERS = Path(__file__).resolve().parents[1] / "interop" / "node"


@contextlib.contextmanager
def oidc_provider(*resources: str) -> Iterator[str]:
    """Run oidc-provider, issuing JWT access tokens for ``resources``; yields its issuer URL."""
    port = free_port()
    script = NODE_PEERS / "oidc_provider.mjs"
    assert (NODE_PEERS / "node_modules" / "oidc-provider").is_dir(), "run scripts/setup.sh: oidc-provider is missing"
    process = subprocess.Popen(
        [str(node_binary()), str(script), str(port), *resources],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=NODE_PEERS,
        env={**os.environ, "NODE_ENV": "test"},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.strip() == b"ready", f"oidc-provider did not start (exit code {process.poll()})"
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(10)
        if process.stdout is not None:
            process.stdout.close()


def client_credentials(issuer: str, resource: str, scope: str) -> str:
    """An access token for the "service" client, for ``resource`` with ``scope``."""
    answer = httpx.post(
        f"{issuer}/token",
        data={"grant_type": "client_credentials", "scope": scope, "resource": resource},
        auth=("service", "service-secret"),
    )
    answer.raise_for_status()
    return str(answer.json()["access_token"])


async def scripted_login(url: str, redirect_uri: str, login: str = "alice") -> str:
    """What a person does in the browser, scripted: follow ``url`` through oidc-provider's
    login and consent pages (any login name, any password) until it redirects to
    ``redirect_uri``; that URL (with ``code``, ``state`` and ``iss``)."""
    import re

    async with httpx.AsyncClient(follow_redirects=False, timeout=30.0) as browser:
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
            action = re.search(r'action="([^"]+)"', page)
            prompt = re.search(r'name="prompt" value="([^"]+)"', page)
            assert response.status_code == 200 and action and prompt, f"unexpected page: {page[:500]}"
            form = {"prompt": prompt.group(1)}
            if prompt.group(1) == "login":
                form.update(login=login, password="anything")
            response = await browser.post(str(httpx.URL(str(response.url)).join(action.group(1))), data=form)
    raise AssertionError("the login did not end in a redirect to the client")
