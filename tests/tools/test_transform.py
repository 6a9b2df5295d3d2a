"""Tools derived from others (``Tool.from_tool``): renamed and described anew, arguments
hidden or given defaults, run by the original's code; and the prefix transform ``mount`` uses."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.helpers import LEGACY, MODERN, open_peer
from toolwire import Context, Server, Tool
from toolwire.server.prefix import prefixed


def search_issues(repo: str, query: str, state: str = "open", limit: int = 10) -> dict[str, Any]:
    """Search the issues of a repository."""
    return {"repo": repo, "query": query, "state": state, "limit": limit}


def server_with_derived() -> Server:
    server = Server("derived")
    original = server.add_tool(search_issues)
    server.add_tool(
        Tool.from_tool(
            original,
            name="search_toolwire_bugs",
            description="Search toolwire's bug reports.",
            hide={"repo": "toolwire/toolwire"},
            defaults={"state": "all"},
            tags={"bugs"},
        )
    )
    return server


@pytest.mark.parametrize("version", [LEGACY[-1], MODERN])
async def test_a_derived_tool_lists_its_own_schema_and_calls_the_original_with_the_hidden_value(
    version: str,
) -> None:
    peer = await open_peer(server_with_derived(), version)
    try:
        tools = {tool["name"]: tool for tool in (await peer.request("tools/list"))["result"]["tools"]}
        answer = await peer.call("search_toolwire_bugs", {"query": "crash", "repo": "someone/else"})
    finally:
        await peer.connection.close()
    derived = tools["search_toolwire_bugs"]
    assert derived["description"] == "Search toolwire's bug reports."
    schema = derived["inputSchema"]
    assert "repo" not in schema["properties"] and schema["required"] == ["query"]
    assert schema["properties"]["state"]["default"] == "all"
    assert tools["search_issues"]["inputSchema"]["required"] == ["repo", "query"]  # the original is untouched
    structured = answer["result"]["structuredContent"]
    assert structured == {"repo": "toolwire/toolwire", "query": "crash", "state": "all", "limit": 10}


async def test_a_derived_tool_validates_what_it_lists_and_keeps_the_originals_context() -> None:
    server = Server("ctx")

    @server.tool
    def greet(name: str, greeting: str, ctx: Context) -> str:
        return f"{greeting}, {name} ({ctx.protocol_version})"

    server.add_tool(Tool.from_tool(server.registry.by_key["greet"], name="hello", hide={"greeting": "Hello"}))
    peer = await open_peer(server, LEGACY[-1])
    try:
        said = await peer.call("hello", {"name": "Ada"})
        missing = await peer.call("hello", {})
    finally:
        await peer.connection.close()
    assert said["result"]["content"][0]["text"] == f"Hello, Ada ({LEGACY[-1]})"
    assert missing["result"]["isError"] and "name" in missing["result"]["content"][0]["text"]


def test_renaming_only_copies_the_tool_and_leaves_the_original_alone() -> None:
    original = Tool.from_function(search_issues)
    renamed = Tool.from_tool(original, name="find_issues", title="Find issues", tags={"a"})
    assert type(renamed) is Tool and renamed.handler is original.handler
    assert renamed.definition["name"] == "find_issues" and renamed.definition["title"] == "Find issues"
    assert original.name == "search_issues" and original.tags == frozenset() and renamed.tags == {"a"}
    versioned = Tool.from_function(search_issues, version="2")
    assert Tool.from_tool(versioned, name="other").version is None


@pytest.mark.parametrize(
    ("options", "error", "words"),
    [
        ({"hide": {"nope": 1}}, ValueError, "no argument 'nope'"),
        ({"hide": {"state": "x"}, "defaults": {"state": "y"}}, ValueError, "both hidden"),
        ({"name": "bad name"}, ValueError, "invalid tool name"),
        ({"colour": "red"}, TypeError, "colour"),
    ],
)
def test_deriving_refuses_what_cannot_be(options: dict[str, Any], error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        Tool.from_tool(Tool.from_function(search_issues), **options)


async def test_the_prefix_transform_serves_items_under_a_prefix() -> None:
    other = Server("weather")

    @other.tool
    def forecast(city: str) -> str:
        return f"sun in {city}"

    @other.resource("data://{city}/today")
    def today(city: str) -> str:
        return city

    server = Server("main")
    server.add_tool(prefixed(other.registry.by_key["forecast"], "weather"))
    server.add_resource_template_object(prefixed(other.resource_templates.by_key["data://{city}/today"], "weather"))
    peer = await open_peer(server, LEGACY[-1])
    try:
        called = await peer.call("weather_forecast", {"city": "Oslo"})
        read = await peer.request("resources/read", {"uri": "data://weather/Oslo/today"})
    finally:
        await peer.connection.close()
    assert called["result"]["content"][0]["text"] == "sun in Oslo"
    assert read["result"]["contents"][0]["text"] == "Oslo"
    with pytest.raises(TypeError, match="cannot prefix"):
        prefixed(object(), "x")
