"""``toolwire gateway gateway.toml`` as a real process: over stdio (a real pipe), over
Streamable HTTP, and a configuration mistake as one line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from tests.gateway.test_gateway import BASIC, command_of
from tests.gateway.waiting import ListChanges
from tests.support.clirun import environment, failed, toolwire
from tests.support.httpserve import LIBRARY, free_port, wait_for_port
from toolwire.client import Client


def write_config(folder: Path) -> Path:
    path = folder / "gateway.toml"
    path.write_text(
        f"[upstreams.basic]\ncommand = {command_of(BASIC)}\n[upstreams.library]\ncommand = {command_of(LIBRARY)}\n"
    )
    return path


def wanted(names: set[str]) -> bool:
    return {"basic.echo", "library.linked"} <= names


async def test_the_gateway_over_stdio_starts_its_lazy_upstreams_at_the_first_list(tmp_path: Path) -> None:
    changes = ListChanges()
    gateway = [sys.executable, "-m", "toolwire", "gateway", str(write_config(tmp_path))]
    async with Client(gateway, on_tools_changed=changes.changed) as client:
        assert client.server_info["name"] == "toolwire-gateway"
        await changes.until(client, wanted)
        assert (await client.call_tool("basic.echo", {"text": "piped"})).text == "piped"


async def test_the_gateway_over_http(tmp_path: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "toolwire", "gateway", str(write_config(tmp_path)), "--http", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment())
    try:
        wait_for_port(port, process)
        changes = ListChanges()
        async with Client(f"http://127.0.0.1:{port}/mcp", on_tools_changed=changes.changed) as client:
            await changes.until(client, wanted)
            assert (await client.call_tool("basic.echo", {"text": "over http"})).text == "over http"
    finally:
        process.terminate()
        process.wait(10)


def test_a_mistake_in_the_configuration_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text('[upstreams.github]\ncomand = ["x"]\n')
    said = "toolwire: gateway.toml: [upstreams.github] 'comand' is not a known key (did you mean 'command'?)"
    assert failed(toolwire("gateway", str(config)), 2) == f"{said} (see toolwire gateway -h)"
    both = toolwire("gateway", str(config), "--stdio", "--http", "8000")
    assert failed(both, 2).startswith("toolwire: --stdio and --http: choose one")


async def test_a_lazy_gateway_declares_resources_and_prompts_before_its_upstreams_start(tmp_path: Path) -> None:
    gateway = [sys.executable, "-m", "toolwire", "gateway", str(write_config(tmp_path))]
    async with Client(gateway) as client:
        assert {"tools", "resources", "prompts"} <= set(client.capabilities)


async def test_a_command_runs_in_the_configuration_files_folder(tmp_path: Path) -> None:
    shutil.copy(BASIC, tmp_path / "echo_server.py")
    config = tmp_path / "gateway.toml"
    local = json.dumps([sys.executable, "-m", "toolwire", "run", "echo_server.py"])
    config.write_text(f'[upstreams.local]\ncommand = {local}\nstart = "eager"\n')
    gateway = [sys.executable, "-m", "toolwire", "gateway", str(config)]  # started elsewhere: the tests' folder
    async with Client(gateway) as client:
        assert (await client.call_tool("local.echo", {"text": "found"})).text == "found"
