"""Upstreams that die, hang or never start: the call in flight fails cleanly naming the
upstream, the other upstreams go on, the dead one's tools disappear with a list change and
come back when it is restarted."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys

import pytest

from tests.gateway.test_gateway import BASIC, command_of
from tests.gateway.test_relaying import RELAY
from tests.gateway.waiting import ListChanges
from toolwire.client import Client, ServerError
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
        down = await client.call_tool("relay.pid")  # from a list older than the change: a tool error
        assert down.is_error and down.text.startswith("the server 'relay' is down (stopped: the server process")
        assert down.text.endswith("the gateway is restarting it; call 'relay.pid' again in a moment")
        assert (await client.call_tool("basic.echo", {"text": "still here"})).text == "still here"
        with pytest.raises(ServerError, match=r"Unknown tool: basic\.nothing"):  # an upstream that is up: unknown
            await client.call_tool("basic.nothing")
        await changes.until(client, lambda names: "relay.block" in names)  # restarted
        assert int((await client.call_tool("relay.pid")).text) != pid
        assert gateway.runners["relay"].state == "up" and gateway.runners["relay"].restarts == 1


async def test_a_call_past_the_upstreams_timeout_is_a_tool_error_and_a_slow_start_is_not_one() -> None:
    # the upstream starts slower than a call may take, and than the era probe waits (5 s): the
    # timeout is the calls' alone, not the handshake's
    slow_start = f"import runpy, sys, time; time.sleep(5.5); sys.argv = ['toolwire', 'run', {RELAY!r}]; "
    slow_start += "runpy.run_module('toolwire', run_name='__main__')"
    command = json.dumps([sys.executable, "-c", slow_start])
    gateway = Gateway(parse_config(f'[upstreams.relay]\ncommand = {command}\ntimeout = 0.5\nstart = "eager"\n'))
    async with Client(gateway.server) as client:
        assert gateway.runners["relay"].state == "up"
        late = await client.call_tool("relay.block")
        assert late.is_error and late.text == "the server 'relay' did not answer the call of 'block' within 0.5 s"
        assert gateway.runners["relay"].state == "up"  # a late call does not stop its upstream


async def test_an_upstream_that_cannot_start_leaves_the_others_serving() -> None:
    missing = json.dumps(["no-such-program-anywhere"])
    gateway = gateway_of(broken=f"command = {missing}")
    async with Client(gateway.server) as client:
        names = {tool.name for tool in await client.list_tools()}
        assert "basic.echo" in names and "relay.count" in names
        assert not any(name.startswith("broken.") for name in names)
        runner = gateway.runners["broken"]
        assert runner.state in ("starting", "down") and "no-such-program-anywhere" in str(runner.error)
