"""The shipped deployment (examples/deploy) run as written, in real containers: Compose builds
the replica image from examples/deploy/Dockerfile and starts Redis, three replicas of
examples/report_server.py in queue mode, two workers and haproxy, as docs/scaling.md and
docs/workers.md tell users to. Clients of both eras, toolwire's and the official SDK's, use it
through haproxy's published port: plain calls are answered by the replicas, task calls run on
the workers; a legacy session outlives two of the replicas killed with SIGKILL.
tests/support/containers.py provides the engine (and, where no image registry is reachable,
stand-ins for the three base images)."""

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

    def hosts(self, *services: str) -> set[str]:
        """The host names of the containers of ``services`` (Docker names each by its id's first 12 digits)."""
        return {container[:12] for service in services for container in self("ps", "-q", service).split()}


REPLICAS = ("replica1", "replica2", "replica3")


async def _serving(url: str) -> bool:
    try:
        async with Client(url, protocol=LEGACY) as client:
            return bool((await client.call_tool("host")).text)
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
    script = "import os, toolwire, redis, docket, re2; print(os.getuid(), sorted(os.listdir('/app')))"
    uid, listing = containers.run(deployment.environment, "docker", "run", "--rm", image, "python", "-c", script).split(
        " ", 1
    )
    assert uid != "0"
    assert "'examples'" in listing and "'src'" in listing
    for left_out in (".venv", ".git", "tests", "benchmarks"):  # .dockerignore
        assert f"'{left_out}'" not in listing


@pytest.mark.parametrize("protocol", [MODERN, LEGACY])
async def test_both_eras_call_tools_through_haproxy(deployment: Deployment, protocol: str) -> None:
    replicas = deployment.hosts(*REPLICAS)
    async with Client(deployment.url, protocol=protocol) as client:  # requests on every replica
        assert {tool.name for tool in await client.list_tools()} == {"host", "build_report"}
        answered = {(await client.call_tool("host")).text for _ in range(6)}
        assert len(answered) > 1 and answered <= replicas, (answered, replicas)


@pytest.mark.parametrize("protocol", [MODERN, LEGACY])
async def test_a_task_started_through_haproxy_runs_on_a_worker(deployment: Deployment, protocol: str) -> None:
    workers, replicas = deployment.hosts("worker"), deployment.hosts(*REPLICAS)
    assert len(workers) == 2 and not workers & replicas  # compose.yaml's deploy.replicas, apart from the replicas
    async with Client(deployment.url, protocol=protocol) as client:
        handle = await client.start_task("build_report", {"month": "2026-11", "sections": 2})
        assert handle.id is not None
        report = (await client.task(handle.id).result()).text  # polled through any replica
    assert report.startswith("Report for 2026-11: 2 sections, built on ")
    assert report.rsplit(" ", 1)[1] in workers, (report, workers)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_official_sdk_client_calls_through_haproxy(deployment: Deployment, mode: str) -> None:
    from mcp import Client as SdkClient

    replicas = deployment.hosts(*REPLICAS)
    async with SdkClient(deployment.url, mode=mode, read_timeout_seconds=10) as client:  # type: ignore[arg-type]
        assert client.protocol_version == (LEGACY if mode == "legacy" else MODERN)
        for _ in range(6):
            answer = await client.call_tool("host", {})
            assert answer.content[0].text in replicas  # type: ignore[union-attr]


async def test_a_legacy_session_outlives_two_replicas_killed(deployment: Deployment) -> None:
    async def call(client: Client) -> None:
        assert (await client.call_tool("host")).text

    async with Client(deployment.url, protocol=LEGACY) as client:
        for _ in range(3):  # the session is known on every replica
            await call(client)
        deployment("kill", "-s", "SIGKILL", "replica1", "replica2")
        try:
            for _ in range(6):  # haproxy sends what a dead replica refuses to the one left
                await call(client)
        finally:
            deployment("start", "replica1", "replica2")
        deadline = time.monotonic() + 60
        while not all([await _serving(deployment.url) for _ in range(3)]):
            assert time.monotonic() < deadline, "the replicas did not serve again within 60 s"
            await asyncio.sleep(0.5)
        for _ in range(6):  # the replicas started again know the session from Redis
            await call(client)
