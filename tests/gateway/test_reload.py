"""gateway.toml reloaded while serving, sessions kept: when the file changes, and on SIGHUP
(``toolwire gateway`` as a real process); upstreams added, removed and changed, the others
untouched; a broken file leaves the gateway serving what it had."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from tests.gateway.test_gateway import BASIC, command_of
from tests.gateway.test_relaying import RELAY
from tests.gateway.waiting import ListChanges
from toolwire.client import Client
from toolwire.gateway import Gateway
from toolwire.gateway.reload import ConfigWatcher


def upstream(name: str, path: str, *more: str) -> str:
    return f'[upstreams.{name}]\ncommand = {command_of(path)}\nstart = "eager"\n' + "".join(
        f"{line}\n" for line in more
    )


async def test_a_changed_file_is_applied_without_dropping_the_session(tmp_path: Path) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text(upstream("basic", BASIC) + upstream("relay", RELAY))
    changes = ListChanges()
    gateway = Gateway.from_file(config)
    async with Client(gateway.server, on_tools_changed=changes.changed) as client:
        pid = int((await client.call_tool("relay.pid")).text)
        basic = gateway.runners["basic"]
        config.write_text(upstream("relay", RELAY, 'env = { CHANGED = "1" }') + upstream("again", BASIC))
        names = await changes.until(
            client, lambda names: "again.echo" in names and "basic.echo" not in names and "relay.pid" in names
        )
        assert not any(name.startswith("basic.") for name in names)
        assert set(gateway.runners) == {"relay", "again"} and basic.state == "stopped"
        assert int((await client.call_tool("relay.pid")).text) != pid  # changed: restarted
        assert (await client.call_tool("again.echo", {"text": "same session"})).text == "same session"
        assert "again" in gateway.card.description


async def test_a_broken_file_is_not_applied_and_the_gateway_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text("[gateway]\nreload = false\n" + upstream("basic", BASIC))
    changes = ListChanges()
    gateway = Gateway.from_file(config)
    async with Client(gateway.server, on_tools_changed=changes.changed) as client:
        watcher = ConfigWatcher(gateway)
        config.write_text('[upstreams.basic]\ncomand = ["x"]\n')
        await watcher.check()
        assert (
            "gateway.toml: [upstreams.basic] 'comand' is not a known key (did you mean 'command'?): not reloaded"
            in caplog.text
        )
        assert (await client.call_tool("basic.echo", {"text": "still"})).text == "still"
        config.write_text(upstream("relay", RELAY))
        await watcher.check()
        await changes.until(client, lambda names: "relay.count" in names and "basic.echo" not in names)


async def test_sighup_reloads_the_file_of_a_running_gateway(tmp_path: Path) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text("[gateway]\nreload = false\n" + upstream("basic", BASIC))
    changes = ListChanges()
    command = [sys.executable, "-m", "toolwire", "gateway", str(config)]
    async with Client(command, on_tools_changed=changes.changed) as client:
        await changes.until(client, lambda names: "basic.echo" in names)
        config.write_text("[gateway]\nreload = false\n" + upstream("basic", BASIC) + upstream("relay", RELAY))
        gateway_pid = client.transport.process.pid  # type: ignore[attr-defined]
        os.kill(gateway_pid, signal.SIGHUP)
        await changes.until(client, lambda names: {"basic.echo", "relay.count"} <= names)
        assert (await client.call_tool("relay.count", {"to": 2})).text == "counted to 2"
