"""The resources, resource templates and prompts of an upstream a caller may call no tool of
are invisible to them (left out of lists, refused on read and get as unknown items, in
either era); those of an upstream they may call a tool of are served as before."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.gateway.test_gateway import ERAS, two_upstreams
from tests.support.httpserve import LIBRARY, toolwire_http
from toolwire.client import Client, ServerError
from toolwire.gateway import Gateway


@pytest.fixture(scope="module")
def library_url() -> Iterator[str]:
    with toolwire_http(LIBRARY) as (url, _):
        yield url


def gateway_allowing(library_url: str, *allow: str, deny: str = "") -> Gateway:
    policy = f"[policy.default]\nallow = {json.dumps(list(allow))}\ndeny = {json.dumps([deny] if deny else [])}\n"
    return two_upstreams(library_url, policy)


@pytest.mark.parametrize("era", ERAS)
async def test_an_upstream_a_caller_may_call_no_tool_of_is_invisible_to_them(library_url: str, era: str) -> None:
    async with Client(gateway_allowing(library_url, "basic/*").server, protocol=era) as client:
        assert not [item for item in await client.list_resources() if "library" in item.uri]
        assert not [item for item in await client.list_resource_templates() if "library" in item.uri_template]
        assert not [prompt for prompt in await client.list_prompts() if prompt.name.startswith("library.")]
        with pytest.raises(ServerError, match=r"Resource not found: library://library/readme") as unread:
            await client.read_resource("library://library/readme")
        assert unread.value.code == (-32602 if era == "2026-07-28" else -32002)
        with pytest.raises(ServerError, match=r"unknown prompt 'library\.cover'") as unknown:
            await client.get_prompt("library.cover")
        assert unknown.value.code == -32602
        assert (await client.call_tool("basic.echo", {"text": "mine"})).text == "mine"


async def test_one_allowed_tool_shows_the_upstream_and_denying_all_of_it_hides_it(library_url: str) -> None:
    async with Client(gateway_allowing(library_url, "basic/*", "library/linked").server) as client:
        assert (await client.read_resource("library://library/readme"))[0].text.startswith("# The library")
        assert "library.cover" in {prompt.name for prompt in await client.list_prompts()}
    async with Client(gateway_allowing(library_url, "*/*", deny="library/*").server) as client:
        assert "library.cover" not in {prompt.name for prompt in await client.list_prompts()}
        with pytest.raises(ServerError, match="Resource not found"):
            await client.read_resource("library://library/readme")
