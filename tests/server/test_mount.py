"""Composition: a server mounted in another under a prefix, in both eras, kept in step with
the mounted server, with its lifespan and its task tools."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import pytest

from toolwire import Context, Server
from toolwire.client import Client

ERAS = ["2025-11-25", "2026-07-28"]


def weather() -> Server:
    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, str]]:
        yield {"station": "Zurich-Fluntern"}

    server = Server("weather", lifespan=lifespan)

    @server.tool(read_only=True)
    def forecast(city: str, ctx: Context) -> str:
        """Tomorrow's weather."""
        return f"sunny in {city} (station {ctx.lifespan['station']})"

    @server.tool(task=True)
    async def report(city: str) -> str:
        return f"report for {city}"

    @server.resource("data://today")
    def today() -> str:
        return "12 degrees"

    @server.resource("data://{city}/history")
    def history(city: str) -> str:
        return f"history of {city}"

    @server.prompt
    def brief(city: str) -> str:
        return f"Brief me on {city}"

    return server


def main_server() -> tuple[Server, Server]:
    child = weather()
    parent = Server("main", lifespan=lambda: contextlib.nullcontext({"main": True}))

    @parent.tool
    def hello() -> str:
        return "hi"

    parent.mount(child, "weather")
    return parent, child


@pytest.mark.parametrize("era", ERAS)
async def test_a_mounted_servers_items_are_served_under_its_prefix(era: str) -> None:
    parent, _ = main_server()
    async with Client(parent, protocol=era) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert set(tools) == {"hello", "weather_forecast", "weather_report"}
        assert tools["weather_forecast"].hint("readOnlyHint")
        # the mounted tool sees its own server's lifespan
        assert (await client.call_tool("weather_forecast", {"city": "Bern"})).text == (
            "sunny in Bern (station Zurich-Fluntern)"
        )
        assert (await client.call_tool("weather_report", {"city": "Basel"}, task=True)).text == "report for Basel"
        assert [resource.uri for resource in await client.list_resources()] == ["data://weather/today"]
        assert (await client.read_resource("data://weather/today"))[0].text == "12 degrees"
        templates = await client.list_resource_templates()
        assert [template.uri_template for template in templates] == ["data://weather/{city}/history"]
        assert (await client.read_resource("data://weather/Geneva/history"))[0].text == "history of Geneva"
        prompt = await client.get_prompt("weather_brief", {"city": "Chur"})
        assert prompt.messages[0].content.text == "Brief me on Chur"  # type: ignore[union-attr]


async def test_the_parent_follows_the_mounted_servers_changes() -> None:
    parent, child = main_server()
    changed: list[str] = []
    async with Client(parent, protocol="2025-11-25", on_tools_changed=lambda: changed.append("tools")) as client:

        @child.tool
        def alerts() -> str:
            return "none"

        assert "weather_alerts" in {tool.name for tool in await client.list_tools()}
        assert (await client.call_tool("weather_alerts")).text == "none"
        child.disable_tool("forecast")
        assert "weather_forecast" not in {tool.name for tool in await client.list_tools()}
        assert changed  # the parent's clients were told
        parent.unmount("weather")
        assert {tool.name for tool in await client.list_tools()} == {"hello"}


def test_a_taken_name_or_prefix_is_refused_and_nothing_is_half_mounted() -> None:
    parent, _ = main_server()
    with pytest.raises(ValueError, match="mounted at 'weather' already"):
        parent.mount(weather(), "weather")
    other = Server("other")

    @other.tool
    def weather_forecast() -> str:
        return "mine"

    with pytest.raises(ValueError, match="already registered"):
        other.mount(weather(), "weather")
    assert [tool.name for tool in other.registry.all()] == ["weather_forecast"]
    with pytest.raises(ValueError, match="invalid mount prefix"):
        parent.mount(weather(), "no spaces")
    with pytest.raises(ValueError, match="into itself"):
        parent.mount(parent, "self")


async def test_the_mounted_servers_lifespan_runs_with_the_parents() -> None:
    parent, child = main_server()
    with pytest.raises(RuntimeError):
        child.lifespan_state  # noqa: B018
    async with Client(parent) as client:
        assert child.lifespan_state == {"station": "Zurich-Fluntern"}
        assert parent.lifespan_state == {"main": True}
        await client.list_tools()
    with pytest.raises(RuntimeError):
        child.lifespan_state  # noqa: B018


async def test_the_separator_between_prefix_and_name_is_chosen_at_mount() -> None:
    parent = Server("main")
    parent.mount(weather(), "weather", separator=".")
    async with Client(parent) as client:
        assert {tool.name for tool in await client.list_tools()} == {"weather.forecast", "weather.report"}
        assert (await client.call_tool("weather.forecast", {"city": "Bern"})).text.startswith("sunny in Bern")
        assert [prompt.name for prompt in await client.list_prompts()] == ["weather.brief"]
        assert "data://weather/today" in {resource.uri for resource in await client.list_resources()}


def test_a_tool_name_too_long_once_prefixed_is_refused_or_left_out() -> None:
    child = Server("child")
    child.add_tool(lambda: "long", name="x" * 128)
    child.add_tool(lambda: "short", name="short")
    with pytest.raises(ValueError, match="invalid tool name 'weather_x"):
        Server("strict").mount(child, "weather")
    lenient = Server("lenient")
    lenient.mount(child, "weather", strict=False)
    assert [tool.name for tool in lenient.registry.all()] == ["weather_short"]


def test_a_batch_of_changes_tells_the_parent_and_its_listeners_once() -> None:
    parent, child = main_server()
    told: list[str] = []
    parent.registry.on_change(lambda: told.append("parent"))
    with child.registry.batched():
        for number in range(100):
            child.add_tool(lambda: "x", name=f"extra_{number}")
    assert told == ["parent"]
    assert len([tool for tool in parent.registry.all() if tool.name.startswith("weather_extra_")]) == 100
