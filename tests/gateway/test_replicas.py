"""Two ``toolwire gateway --http`` replicas behind a real ``haproxy`` (the shipped
examples/deploy/gateway/haproxy.cfg: round robin, nothing sticky) sharing a real
``redis-server`` through ``[gateway] redis``: a legacy session opened on one goes on on the
other, also once the first is killed; 2026-07-28 calls go to either."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.gateway.test_gateway import command_of
from tests.support.clirun import environment
from tests.support.httpserve import ROOT, SERVERS, free_port, wait_for_port
from tests.support.redisserve import redis_server
from toolwire.client import Client
from toolwire.gateway import load_config

JOBS = str(SERVERS / "jobs.py")
DEPLOY = ROOT / "examples" / "deploy" / "gateway"


def gateway_replica(config: Path, port: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "toolwire", "gateway", str(config), "--http", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment())
    wait_for_port(port, process)
    return process


@contextlib.contextmanager
def haproxy(ports: list[int]) -> Iterator[str]:
    """``haproxy`` with the shipped configuration over the replicas on ``ports``; yields its URL."""
    binary = shutil.which("haproxy") or "/usr/sbin/haproxy"
    assert Path(binary).exists(), "these tests need haproxy (scripts/setup.sh installs it when run as root)"
    port = free_port()
    addresses = {f"GATEWAY_{index}": f"127.0.0.1:{replica}" for index, replica in enumerate(ports)}
    env = {**os.environ, "MCP_BIND": f"127.0.0.1:{port}", **addresses}
    process = subprocess.Popen(
        [binary, "-f", str(DEPLOY / "haproxy.cfg"), "-db"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def replicas(tmp_path: Path) -> Iterator[tuple[str, list[subprocess.Popen[bytes]]]]:
    with redis_server() as redis, contextlib.ExitStack() as stack:
        config = tmp_path / "gateway.toml"
        config.write_text(
            f'[gateway]\nredis = "{redis}"\n[upstreams.jobs]\ncommand = {command_of(JOBS)}\nstart = "eager"\n'
        )
        ports = [free_port() for _ in range(2)]
        processes = [gateway_replica(config, port) for port in ports]
        for process in processes:
            stack.callback(process.wait, 10)
            stack.callback(process.kill)
        yield stack.enter_context(haproxy(ports)), processes


async def test_a_legacy_session_goes_on_on_the_other_replica_and_after_one_dies(
    replicas: tuple[str, list[subprocess.Popen[bytes]]],
) -> None:
    url, processes = replicas
    async with Client(url, protocol="2025-11-25") as client:
        # round robin: the session's requests alternate between the two gateways, each with its own upstream
        answered = {(await client.call_tool("jobs.whoami")).text for _ in range(4)}
        assert len(answered) == 2
        processes[0].send_signal(signal.SIGKILL)
        processes[0].wait(10)
        after = {(await client.call_tool("jobs.whoami")).text for _ in range(3)}
        assert len(after) == 1 and after <= answered  # the survivor took the whole session
        assert (await client.call_tool("jobs.quick", {"x": 21})).text == "42"


async def test_modern_calls_go_to_either_replica(replicas: tuple[str, list[subprocess.Popen[bytes]]]) -> None:
    async with Client(replicas[0], protocol="2026-07-28") as client:
        assert len({(await client.call_tool("jobs.whoami")).text for _ in range(4)}) == 2


def test_the_compose_file_runs_the_shipped_configuration() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    config = load_config(DEPLOY / "gateway.toml")
    assert config.redis == "redis://redis:6379/0" and "redis" in services
    [upstream] = config.upstreams
    assert upstream.command is not None and upstream.cwd is not None
    assert (upstream.cwd / upstream.command[-1]).resolve() == ROOT / "examples" / "report_server.py"
    for name in ("gateway1", "gateway2"):
        command = services[name]["command"]
        assert command[:3] == ["toolwire", "gateway", "examples/deploy/gateway/gateway.toml"]
        assert (ROOT / command[2]).exists() and "--http" in command
    assert services["haproxy"]["environment"]["GATEWAY_1"] == "gateway2:8000"
    assert (ROOT / services["gateway1"]["build"]["dockerfile"]).exists()
