"""The gateway serving two upstreams as one: a toolwire server over stdio and another over
Streamable HTTP, each under its namespace, to clients of both eras, in memory and over a real
HTTP endpoint."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest

from tests.support.httpserve import LIBRARY, SERVERS, InProcess, toolwire_http
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


def two_upstreams(library_url: str, **gateway: str) -> Gateway:
    settings = "".join(f"{key} = {json.dumps(value)}\n" for key, value in gateway.items())
    return Gateway(
        parse_config(
            f"[gateway]\n{settings}"
            f'[upstreams.basic]\ncommand = {command_of(BASIC)}\nstart = "eager"\n'
            f'[upstreams.books]\nurl = {json.dumps(library_url)}\nnamespace = "library"\nstart = "eager"\n'
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
