"""Upstreams that die, hang or never start: the call in flight fails cleanly naming the
upstream, the other upstreams go on, the dead one's tools disappear with a list change and
come back when it is restarted."""

from __future__ import annotations

import asyncio
import json
import os
import signal

from tests.gateway.test_gateway import BASIC, command_of
from tests.gateway.test_relaying import RELAY
from tests.gateway.waiting import ListChanges
from toolwire.client import Client
from toolwire.gateway import Gateway, parse_config


def gateway_of(relay: str = "", **more: str) -> Gateway:
    extra = "".join(f"[upstreams.{name}]\n{table}\n" for name, table in more.items())
    return Gateway(
        parse_config(
            f'[gateway]\nstart = "eager"\n'
            f"[upstreams.relay]\ncommand = {command_of(RELAY)}\n{relay}\n"
            f"[upstreams.basic]\ncommand = {command_of(BASIC)}\n{extra}"
        )
    )


async def test_an_upstream_killed_mid_call_fails_that_call_and_comes_back() -> None:
    changes = ListChanges()
    gateway = gateway_of()
    async with Client(gateway.server, on_tools_changed=changes.changed) as client:
        pid = int((await client.call_tool("relay.pid")).text)
        started = asyncio.Event()
        call = asyncio.ensure_future(client.call_tool("relay.block", progress=lambda *_: started.set()))
        await started.wait()
        os.kill(pid, signal.SIGKILL)
        failed = await call
        assert failed.is_error
        assert failed.text.startswith("the server 'relay' stopped during the call of 'block': the server process")
        await changes.until(client, lambda names: "relay.block" not in names)
        assert (await client.call_tool("basic.echo", {"text": "still here"})).text == "still here"
        await changes.until(client, lambda names: "relay.block" in names)  # restarted
        assert int((await client.call_tool("relay.pid")).text) != pid
        assert gateway.runners["relay"].state == "up" and gateway.runners["relay"].restarts == 1


async def test_a_call_past_the_upstreams_timeout_is_a_tool_error() -> None:
    async with Client(gateway_of("timeout = 0.2").server) as client:
        late = await client.call_tool("relay.block")
        assert late.is_error and late.text == "the server 'relay' did not answer the call of 'block' within 0.2 s"
        assert (await client.call_tool("basic.echo", {"text": "on"})).text == "on"
        assert (await client.call_tool("relay.count", {"to": 1})).text == "counted to 1"


async def test_an_upstream_that_cannot_start_leaves_the_others_serving() -> None:
    missing = json.dumps(["no-such-program-anywhere"])
    gateway = gateway_of(broken=f"command = {missing}")
    async with Client(gateway.server) as client:
        names = {tool.name for tool in await client.list_tools()}
        assert "basic.echo" in names and "relay.count" in names
        assert not any(name.startswith("broken.") for name in names)
        runner = gateway.runners["broken"]
        assert runner.state in ("starting", "down") and "no-such-program-anywhere" in str(runner.error)
