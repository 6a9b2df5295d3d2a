"""The shipped deployment (examples/deploy) run as written, in real containers: Compose builds
the replica image from examples/deploy/Dockerfile and starts Redis, three replicas of
examples/seed_server.py and haproxy, as docs/scaling.md tells users to. Clients of both eras,
toolwire's and the official SDK's, use it through haproxy's published port, and a legacy
session outlives two of the replicas killed with SIGKILL. tests/support/containers.py provides the
engine (and, where no image registry is reachable, stand-ins for the three base images)."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import subprocess
import time
from collections.abc import Iterator

import pytest

from tests.support import containers
from tests.support.httpserve import ROOT, free_port
from toolwire.client import Client

DEPLOY = ROOT / "examples" / "deploy"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"


@dataclasses.dataclass
class Deployment:
    url: str
    environment: dict[str, str]
    compose: list[str]  # Compose, for this project and file

    def __call__(self, *arguments: str) -> str:
        return containers.run(self.environment, *self.compose, *arguments)


async def _serving(url: str) -> bool:
    try:
        async with Client(url, protocol=LEGACY) as client:
            return float((await client.call_tool("calculate_sum", {"a": 1, "b": 1})).text) == 2
    except Exception:
        return False


@pytest.fixture(scope="module")
def deployment() -> Iterator[Deployment]:
    with containers.engine() as environment:
        containers.stand_in_images(environment)
        port = free_port()
        environment = {**environment, "MCP_PORT": str(port)}
        compose = [*containers.compose(environment), "-p", f"toolwire-test-{os.getpid()}"]
        compose += ["-f", str(DEPLOY / "compose.yaml")]
        deployment = Deployment(f"http://127.0.0.1:{port}/mcp", environment, compose)
        try:
            containers.run(environment, *compose, "up", "-d", "--build", timeout=900)
            deadline = time.monotonic() + 60
            while not all(asyncio.run(_serving(deployment.url)) for _ in range(3)):  # each replica once
                assert time.monotonic() < deadline, "the deployment did not serve within 60 s:\n" + deployment("logs")
                time.sleep(0.5)
            yield deployment
        finally:
            subprocess.run([*compose, "down", "-v", "--remove-orphans"], env=environment, capture_output=True)


def test_the_replica_image_holds_toolwire_runs_unprivileged_and_leaves_the_checkout_out(
    deployment: Deployment,
) -> None:
    image = "toolwire-replica"
    script = "import os, toolwire, redis, re2; print(os.getuid(), sorted(os.listdir('/app')))"
    uid, listing = containers.run(deployment.environment, "docker", "run", "--rm", image, "python", "-c", script).split(
        " ", 1
    )
    assert uid != "0"
    assert "'examples'" in listing and "'src'" in listing
    for left_out in (".venv", ".git", "tests", "benchmarks"):  # .dockerignore
        assert f"'{left_out}'" not in listing


@pytest.mark.parametrize("protocol", [MODERN, LEGACY])
async def test_both_eras_call_tools_through_haproxy(deployment: Deployment, protocol: str) -> None:
    async with Client(deployment.url, protocol=protocol) as client:  # requests on every replica
        assert len(await client.list_tools()) == 11
        for a in range(6):
            answer = await client.call_tool("calculator", {"operation": "multiply", "a": a, "b": 3})
            assert float(answer.text) == a * 3
        stats = await client.call_tool("text_analyzer", {"text": "one two three"})
        assert stats.structured is not None and stats.structured["words"] == 3


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_official_sdk_client_calls_through_haproxy(deployment: Deployment, mode: str) -> None:
    from mcp import Client as SdkClient

    async with SdkClient(deployment.url, mode=mode, read_timeout_seconds=10) as client:  # type: ignore[arg-type]
        assert client.protocol_version == (LEGACY if mode == "legacy" else MODERN)
        for a in range(6):
            answer = await client.call_tool("calculate_sum", {"a": a, "b": 0.5})
            assert float(answer.content[0].text) == a + 0.5  # type: ignore[union-attr]


async def test_a_legacy_session_outlives_two_replicas_killed(deployment: Deployment) -> None:
    async def add(client: Client, a: int, b: int) -> None:
        assert float((await client.call_tool("calculate_sum", {"a": a, "b": b})).text) == a + b

    async with Client(deployment.url, protocol=LEGACY) as client:
        for a in range(3):  # the session is known on every replica
            await add(client, a, 1)
        deployment("kill", "-s", "SIGKILL", "replica1", "replica2")
        try:
            for a in range(6):  # haproxy sends what a dead replica refuses to the one left
                await add(client, a, 2)
        finally:
            deployment("start", "replica1", "replica2")
        deadline = time.monotonic() + 60
        while not all([await _serving(deployment.url) for _ in range(3)]):
            assert time.monotonic() < deadline, "the replicas did not serve again within 60 s"
            await asyncio.sleep(0.5)
        for a in range(6):  # the replicas started again know the session from Redis
            await add(client, a, 3)
