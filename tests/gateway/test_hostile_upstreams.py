"""A hostile upstream is contained: names MCP does not allow (``/``, spaces, a Cyrillic
look-alike, too long once namespaced) are left out and the rest served; 10,000 tools are
served and followed through a list change; a result larger than the gateway's client takes
fails that call cleanly (over stdio the upstream is restarted, over HTTP it goes on). The
other upstreams serve throughout."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.gateway.test_gateway import BASIC, command_of
from tests.gateway.waiting import ListChanges
from tests.support.httpserve import toolwire_http
from toolwire.client import Client
from toolwire.gateway import Gateway, parse_config

SERVERS = Path(__file__).parent / "servers"
HOSTILE = str(SERVERS / "hostile.py")
BIG = str(SERVERS / "big.py")


def hostile_gateway(extra_tools: int = 0) -> Gateway:
    hostile = json.dumps([sys.executable, HOSTILE, str(extra_tools)])
    return Gateway(
        parse_config(
            f'[gateway]\nstart = "eager"\n[upstreams.bad]\ncommand = {hostile}\n'
            f"[upstreams.good]\ncommand = {command_of(BASIC)}\n"
        )
    )


async def test_names_mcp_does_not_allow_are_left_out_and_the_rest_served(caplog: pytest.LogCaptureFixture) -> None:
    async with Client(hostile_gateway().server) as client:
        names = {tool.name for tool in await client.list_tools()}
        assert {name for name in names if name.startswith("bad.")} == {
            "bad.delete_fiIe",  # a look-alike, but only ever of bad's own names: the namespace says whose
            "bad.ok",
            "bad.huge",
            "bad.changed",
        }
        assert "good.echo" in names
        assert (await client.call_tool("bad.ok")).text == "ok"
    for refused in ("'a/b'", "'has space'", "'d\u0435lete_file'", f"'bad.{'x' * 128}'"):
        assert f"invalid tool name {refused}" in caplog.text


async def test_ten_thousand_tools_are_served_and_followed_through_a_list_change() -> None:
    changes = ListChanges()
    async with Client(hostile_gateway(10_000).server, on_tools_changed=changes.changed) as client:
        names = {tool.name for tool in await client.list_tools()}
        assert len(names) == 10_004 + len([name for name in names if name.startswith("good.")])
        assert {"bad.tool_00001", "bad.tool_10000"} <= names
        assert (await client.call_tool("bad.changed")).text == "changed"  # the upstream's list changed
        names = await changes.until(client, lambda names: "bad.added_1" in names)
        assert len([name for name in names if name.startswith("bad.")]) == 10_005
        assert (await client.call_tool("bad.tool_05000")).text == "tool_05000"
        assert (await client.call_tool("good.echo", {"text": "fine"})).text == "fine"


async def test_a_huge_result_over_stdio_fails_that_call_and_the_upstream_comes_back() -> None:
    changes = ListChanges()
    gateway = hostile_gateway()
    async with Client(gateway.server, on_tools_changed=changes.changed) as client:
        failed = await client.call_tool("bad.huge", {"bytes": 5_000_000})
        assert failed.is_error
        assert failed.text.startswith("the server 'bad' stopped during the call of 'huge': the server sent a message")
        assert "more than 4194304 bytes" in failed.text
        assert (await client.call_tool("good.echo", {"text": "fine"})).text == "fine"
        await changes.until(client, lambda names: "bad.ok" in names and gateway.runners["bad"].restarts == 1)
        assert (await client.call_tool("bad.huge", {"bytes": 10})).text == "y" * 10


async def test_a_huge_result_over_http_is_an_error_naming_the_limit_and_the_upstream_goes_on() -> None:
    from toolwire.client import ServerError

    with toolwire_http(BIG) as (url, _):
        gateway = Gateway(parse_config(f'[upstreams.big]\nurl = {json.dumps(url)}\nstart = "eager"\n'))
        async with Client(gateway.server) as client:
            with pytest.raises(ServerError, match="larger than max_message_bytes \\(4194304 bytes\\)"):
                await client.call_tool("big.huge", {"size": 5_000_000})
            assert gateway.runners["big"].state == "up"
            assert (await client.call_tool("big.huge", {"size": 3})).text == "yyy"
