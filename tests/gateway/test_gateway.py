"""The gateway serving two upstreams as one: a toolwire server over stdio and another over
Streamable HTTP, each under its namespace, to clients of both eras, in memory and over a real
HTTP endpoint."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest

from tests.support.httpserve import LIBRARY, SERVERS, InProcess, process_http, toolwire_http
from toolwire.client import Client
from toolwire.gateway import Gateway, parse_config

BASIC = str(SERVERS / "basic.py")
ERAS = ["2025-11-25", "2026-07-28"]


def command_of(path: str) -> str:
    """The TOML list that runs the server file ``path`` over stdio."""
    return json.dumps([sys.executable, "-m", "toolwire", "run", path])


@pytest.fixture(scope="module")
def library_url() -> Iterator[str]:
    with toolwire_http(LIBRARY) as (url, _):
        yield url


def two_upstreams(library_url: str, policy: str = "", **gateway: str) -> Gateway:
    """``basic`` over stdio and the library over HTTP (namespace ``library``), both started at
    once; ``gateway``: the ``[gateway]`` table's settings, ``policy``: tables to add."""
    settings = "".join(f"{key} = {json.dumps(value)}\n" for key, value in gateway.items())
    return Gateway(
        parse_config(
            f"[gateway]\n{settings}"
            f'[upstreams.basic]\ncommand = {command_of(BASIC)}\nstart = "eager"\n'
            f'[upstreams.books]\nurl = {json.dumps(library_url)}\nnamespace = "library"\nstart = "eager"\n'
            f"{policy}"
        )
    )


@pytest.mark.parametrize("era", ERAS)
async def test_the_tools_of_two_upstreams_are_served_under_their_namespaces(library_url: str, era: str) -> None:
    gateway = two_upstreams(library_url, name="team")
    async with Client(gateway.server, protocol=era) as client:
        assert client.server_info["name"] == "team"
        names = {tool.name for tool in await client.list_tools()}
        assert {"basic.echo", "basic.countdown", "library.linked", "library.embedded"} <= names
        assert all(name.startswith(("basic.", "library.")) for name in names)
        assert (await client.call_tool("basic.echo", {"text": "through"})).text == "through"
        readme = await client.read_resource("library://library/readme")
        assert readme[0].text == "# The library\nAsk for books by id."
        assert (await client.read_resource("library://library/books/1"))[0].text
        prompts = {prompt.name for prompt in await client.list_prompts()}
        assert "library.recommend" in prompts


async def test_the_separator_is_configurable(library_url: str) -> None:
    gateway = two_upstreams(library_url, separator="__")
    async with Client(gateway.server) as client:
        assert (await client.call_tool("basic__echo", {"text": "x"})).text == "x"


@pytest.mark.parametrize("era", ERAS)
async def test_the_gateway_serves_streamable_http_to_both_eras(library_url: str, era: str) -> None:
    gateway = two_upstreams(library_url)
    async with InProcess(gateway.server.http_app()) as url, Client(url, protocol=era) as client:
        assert client.version == era
        assert (await client.call_tool("basic.echo", {"text": "over http"})).text == "over http"
        assert "library.linked" in {tool.name for tool in await client.list_tools()}


@pytest.mark.parametrize("era", ERAS)
async def test_upstreams_of_each_era_reach_callers_of_each_era(library_url: str, era: str) -> None:
    from tests.server.test_proxy import EVERYTHING
    from tests.support.helpers import node_binary

    everything = json.dumps([str(node_binary()), str(EVERYTHING), "stdio"])
    gateway = Gateway(
        parse_config(
            f'[gateway]\nstart = "eager"\n[upstreams.everything]\ncommand = {everything}\n'
            f"[upstreams.library]\nurl = {json.dumps(library_url)}\n"
        )
    )
    async with Client(gateway.server, protocol=era) as client:
        assert gateway.runners["everything"].version == "2025-11-25"  # the reference server's newest
        assert gateway.runners["library"].version == "2026-07-28"
        assert (await client.call_tool("everything.echo", {"message": "hi"})).text == "Echo: hi"
        assert "5" in (await client.call_tool("everything.get-sum", {"a": 2, "b": 3})).text
        assert (await client.read_resource("library://library/readme"))[0].text.startswith("# The library")


async def test_server_discover_and_the_server_card_describe_the_gateway(library_url: str) -> None:
    from toolwire.client.cards import fetch_card

    gateway = two_upstreams(library_url, name="com.example/team")
    async with InProcess(gateway.server.http_app()) as url:
        async with Client(url, protocol="2026-07-28") as client:
            discovered = await client.request("server/discover")
            assert discovered["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "com.example/team"
            assert "2026-07-28" in discovered["supportedVersions"]
            assert {"tools", "resources", "prompts"} <= set(discovered["capabilities"])
        card = await fetch_card(url)
        assert card.name == "com.example/team"
        assert card.description == "A gateway to 2 MCP servers, each under its namespace: basic, library"
        assert [remote.url for remote in card.remotes] == [url]


@pytest.mark.parametrize("transport", ["auto", "sse"])
async def test_an_old_http_sse_upstream_found_by_fallback_or_forced(transport: str) -> None:
    from tests.client.test_http_sse_fallback import SERVER

    with process_http(sys.executable, str(SERVER), path="/sse") as url:
        config = f'[upstreams.old]\nurl = {json.dumps(url)}\ntransport = "{transport}"\nstart = "eager"\n'
        gateway = Gateway(parse_config(config))
        async with Client(gateway.server, protocol="2026-07-28") as client:
            assert gateway.runners["old"].state == "up"
            assert (await client.call_tool("old.add", {"a": 2, "b": 40})).structured == {"result": 42}


async def test_an_upstream_forced_to_streamable_http_does_not_fall_back() -> None:
    from tests.client.test_http_sse_fallback import SERVER

    with process_http(sys.executable, str(SERVER), path="/sse") as url:
        config = f'[upstreams.old]\nurl = {json.dumps(url)}\ntransport = "http"\nstart = "eager"\n'
        gateway = Gateway(parse_config(config))
        async with Client(gateway.server):
            assert gateway.runners["old"].state == "down" and "405" in str(gateway.runners["old"].error)
