"""Tags on tools, resources and prompts, and lists filtered by tag for everyone: kept on the
server (no definition carries them), in both eras, hidden items unknown to calls and reads."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.helpers import LEGACY, MODERN, open_peer
from toolwire import Server, Tool


def tagged_server(**options: Any) -> Server:
    server = Server("tagged", **options)

    @server.tool(tags={"public", "weather"})
    def forecast(city: str) -> str:
        return f"sun in {city}"

    @server.tool(tags={"admin"})
    def drop_table(name: str) -> str:
        return f"dropped {name}"

    @server.tool
    def ping() -> str:
        return "pong"

    @server.resource("data://report", tags={"admin"})
    def report() -> str:
        return "numbers"

    @server.resource("data://weather/{city}", tags={"public"})
    def weather(city: str) -> str:
        return city

    @server.prompt(tags={"admin"})
    def audit() -> str:
        return "Audit everything."

    return server


async def listed(server: Server, version: str) -> dict[str, list[str]]:
    peer = await open_peer(server, version)
    try:
        tools = (await peer.request("tools/list"))["result"]["tools"]
        resources = (await peer.request("resources/list"))["result"]["resources"]
        templates = (await peer.request("resources/templates/list"))["result"]["resourceTemplates"]
        prompts = (await peer.request("prompts/list"))["result"]["prompts"]
    finally:
        await peer.connection.close()
    return {
        "tools": [tool["name"] for tool in tools],
        "resources": [r["uri"] for r in resources] + [t["uriTemplate"] for t in templates],
        "prompts": [prompt["name"] for prompt in prompts],
    }


@pytest.mark.parametrize("version", [LEGACY[0], LEGACY[-1], MODERN])
async def test_tags_stay_on_the_server_and_lists_are_whole_without_filters(version: str) -> None:
    peer = await open_peer(tagged_server(), version)
    try:
        tools = (await peer.request("tools/list"))["result"]["tools"]
    finally:
        await peer.connection.close()
    assert [tool["name"] for tool in tools] == ["forecast", "drop_table", "ping"]
    assert all("tags" not in tool and "_meta" not in tool for tool in tools)


@pytest.mark.parametrize("version", [LEGACY[-1], MODERN])
async def test_exclude_tags_hides_what_carries_them_from_lists_calls_reads_and_prompts(version: str) -> None:
    server = tagged_server(exclude_tags={"admin"})
    assert await listed(server, version) == {
        "tools": ["forecast", "ping"],
        "resources": ["data://weather/{city}"],
        "prompts": [],
    }
    peer = await open_peer(server, version)
    try:
        called = await peer.call("drop_table", {"name": "users"})
        read = await peer.request("resources/read", {"uri": "data://report"})
        prompt = await peer.request("prompts/get", {"name": "audit"})
        allowed = await peer.call("ping")
    finally:
        await peer.connection.close()
    unknown = called.get("error", {}).get("message") or called["result"]["content"][0]["text"]
    assert "Unknown tool" in unknown
    assert "error" in read and "error" in prompt
    assert allowed["result"]["content"][0]["text"] == "pong"


async def test_include_tags_lists_only_what_carries_one_of_them() -> None:
    server = tagged_server(include_tags={"public"})
    assert await listed(server, LEGACY[-1]) == {
        "tools": ["forecast"],
        "resources": ["data://weather/{city}"],
        "prompts": [],
    }


async def test_changing_the_servers_rules_while_serving_tells_every_session() -> None:
    server = tagged_server()
    peer = await open_peer(server, LEGACY[-1])
    try:
        server.visibility.everyone.disable(tags={"weather"}, kind="tools")
        tools = (await peer.request("tools/list"))["result"]["tools"]
        server.visibility.everyone.reset()
        again = (await peer.request("tools/list"))["result"]["tools"]
    finally:
        await peer.connection.close()
    assert [tool["name"] for tool in tools] == ["drop_table", "ping"]
    assert [tool["name"] for tool in again] == ["forecast", "drop_table", "ping"]
    changed = [n for n in peer.notifications if n["method"] == "notifications/tools/list_changed"]
    assert len(changed) == 2


def test_tags_are_checked_and_kept_on_derived_objects() -> None:
    with pytest.raises(ValueError, match="not the string 'admin'"):
        Tool.from_function(lambda: None, name="x", tags="admin")
    with pytest.raises(ValueError, match="non-empty string"):
        Tool.from_function(lambda: None, name="x", tags={""})
    tool = Tool.from_function(lambda: None, name="x", tags=["a", "b"])
    assert tool.tags == frozenset({"a", "b"})
    with pytest.raises(ValueError, match="kind must be one of"):
        Server().visibility.everyone.disable("x", kind="tool")
    with pytest.raises(ValueError, match="at least one"):
        Server().visibility.everyone.disable()
