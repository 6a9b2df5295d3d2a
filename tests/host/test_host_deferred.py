"""The host's deferred loading end to end: the search catalog's servers (93 tools), the real
``openai`` package and the scripted model server. The model is shown a few tools and the
host's ``find_tools``, searches, and calls what it found; what each request carried is read
from the model server's log."""

from __future__ import annotations

from typing import Any

import pytest

from tests.servers.catalog import TARGETS
from tests.support.model_server import ModelServer, Reply, ToolCall
from toolwire import Server
from toolwire.cli.common import load_server
from toolwire.host import (
    ApprovalNeeded,
    ApprovalPolicy,
    Event,
    Host,
    ToolCallDecided,
    ToolDeferral,
    ToolResult,
    ToolsChanged,
    ToolsLoaded,
)
from toolwire.host.providers import OpenAIProvider

CATALOG_TOOLS = 93


@pytest.fixture
def model() -> Any:
    with ModelServer() as server:
        yield server


def catalog() -> list[tuple[str, Server]]:
    """The catalog's servers, in memory, by name."""
    return [(target.partition("=")[0], load_server(target.partition("=")[2])) for target in TARGETS]


def host(model: ModelServer, **options: Any) -> Host:
    provider = OpenAIProvider("deepseek-chat", api_key="test", base_url=model.openai_url, max_retries=0)
    servers = options.pop("servers", None) or [_named(name, server) for name, server in catalog()]
    return Host(servers, provider=provider, **options)


def _named(name: str, server: Server) -> Any:
    from toolwire.host import ServerSpec

    return ServerSpec(name, server)


def sent(request: dict[str, Any]) -> list[str]:
    """The names of the tools a Chat Completions request carried."""
    return [tool["function"]["name"] for tool in request.get("tools", [])]


async def run(conversation: Any, text: str, allow: bool = True) -> list[Event]:
    events = []
    async for event in conversation.send(text):
        events.append(event)
        if isinstance(event, ApprovalNeeded) and allow:
            event.allow()
    return events


def of(events: list[Event], kind: type) -> list[Any]:
    return [event for event in events if isinstance(event, kind)]


async def test_the_model_finds_a_tool_loads_it_and_calls_it_through_approval(model: ModelServer) -> None:
    model.script(
        Reply(tool_calls=[ToolCall("find_tools", {"query": "send an email"})]),
        Reply(tool_calls=[ToolCall("send_email", {"to": ["ada@example.com"], "subject": "hi", "body": "hello"})]),
        Reply(text="I sent it."),
    )
    async with host(model) as connected:
        assert connected.deferring and len(connected.tools) == CATALOG_TOOLS
        conversation = connected.conversation()
        events = await run(conversation, "email Ada to say hello")
        assert conversation.text == "I sent it."
    first, second, third = model.requests
    assert sent(first) == ["find_tools"]
    description = first["tools"][0]["function"]["description"]
    assert "93 tools" in description and "mail (9 tools)" in description
    assert "send_email" in sent(second) and sent(second)[-1] == "find_tools" and len(sent(second)) <= 6
    assert sent(third) == sent(second)  # loaded tools stay
    [start] = of(events, ToolsChanged)
    assert (start.tools, start.deferred) == ([], CATALOG_TOOLS)
    [loaded] = of(events, ToolsLoaded)
    assert loaded.query == "send an email" and "send_email" in [tool.name for tool in loaded.tools]
    found, called = of(events, ToolResult)
    assert found.tool == "find_tools" and not found.is_error and "send_email (server mail)" in found.summary
    assert (called.tool, called.is_error, called.summary) == ("send_email", False, "sent 'hi'")
    [asked] = of(events, ApprovalNeeded)  # a loaded tool is approved as any other
    assert (asked.server, asked.name) == ("mail", "send_email")
    search, call = of(events, ToolCallDecided)
    assert (search.decision, search.by) == ("allow", "host") and (call.decision, call.by) == ("allow", "user")
    assert conversation.loaded[: len(loaded.tools)] == [(tool.server, tool.tool) for tool in loaded.tools]


async def test_a_refused_loaded_tool_is_refused_and_a_later_turn_shows_it_as_recently_used(model: ModelServer) -> None:
    model.script(
        Reply(tool_calls=[ToolCall("find_tools", {"query": "delete a file"})]),
        Reply(tool_calls=[ToolCall("delete_file", {"path": "/tmp/x"})]),
        Reply(text="refused"),
        Reply(text="ok"),
    )
    policy = ApprovalPolicy(deny=["files/delete_*"])
    async with host(model, policy=policy) as connected:
        conversation = connected.conversation()
        events = await run(conversation, "delete /tmp/x")
        refused = [event for event in of(events, ToolCallDecided) if event.decision == "refuse"]
        assert [event.by for event in refused] == ["policy"]
        later = connected.conversation(messages=list(conversation.messages))  # a saved conversation goes on
        await run(later, "and now?")
    assert sent(model.requests[-1]) == ["delete_file", "find_tools"]


async def test_pinned_tools_are_shown_up_front_and_unknown_names_point_at_find_tools(model: ModelServer) -> None:
    model.script(Reply(tool_calls=[ToolCall("send_mail", {})]), Reply(text="ok"))
    async with host(model, defer_tools=ToolDeferral(pinned=("weather/*", "git_status"))) as connected:
        events = await run(connected.conversation(), "hi")
    assert sent(model.requests[0]) == [
        "git_status",
        "current_weather",
        "weather_forecast",
        "hourly_forecast",
        "weather_alerts",
        "air_quality",
        "historical_weather",
        "sunrise_sunset",
        "uv_index",
        "find_tools",
    ]
    [result] = of(events, ToolResult)
    assert result.is_error and "find_tools finds the tools" in result.summary


async def test_up_front_is_capped_and_below_the_threshold_or_switched_off_everything_is_sent(
    model: ModelServer,
) -> None:
    model.script(Reply(text="a"), Reply(text="b"), Reply(text="c"))
    async with host(model, defer_tools=ToolDeferral(pinned=("*",), up_front=3)) as connected:
        await run(connected.conversation(), "hi")
    async with host(model, defer_tools=ToolDeferral(threshold=CATALOG_TOOLS)) as connected:
        assert not connected.deferring
        await run(connected.conversation(), "hi")
    async with host(model, defer_tools=None) as connected:
        await run(connected.conversation(), "hi")
    capped, below, off = (sent(request) for request in model.requests)
    assert len(capped) == 4 and capped[-1] == "find_tools"
    assert len(below) == len(off) == CATALOG_TOOLS and "find_tools" not in off


async def test_a_find_without_a_query_or_with_a_huge_one_is_refused_and_one_that_matches_nothing_says_so(
    model: ModelServer,
) -> None:
    too_long = " ".join(f"word{number}" for number in range(100_000))
    model.script(
        Reply(tool_calls=[ToolCall("find_tools", {}), ToolCall("find_tools", {"query": "zzyzx qwv"})]),
        Reply(tool_calls=[ToolCall("find_tools", {"query": too_long})], chunk=2 * len(too_long)),  # one piece
        Reply(text="nothing"),
    )
    async with host(model) as connected:
        conversation = connected.conversation()
        events = await run(conversation, "hi")
    empty, nothing, long = of(events, ToolResult)
    assert long.is_error and f"the query has {len(too_long)} characters, over 1000" in long.summary
    assert empty.is_error and "needs a query" in empty.summary
    assert not nothing.is_error and nothing.summary.startswith("No tool matches 'zzyzx qwv'")
    assert not of(events, ToolsLoaded) and conversation.loaded == []


async def test_a_list_change_drops_a_loaded_tool_that_vanished(model: ModelServer) -> None:
    changing = Server("changing")
    for number in range(45):
        changing.add_tool(lambda: "ok", name=f"gadget_{number}", description=f"Gadget number {number}.")

    @changing.tool(read_only=True)
    def polish_gadget(name: str) -> str:
        """Polish a gadget until it shines."""
        changing.remove_tool("polish_gadget")
        return "polished, and gone"

    model.script(
        Reply(tool_calls=[ToolCall("find_tools", {"query": "polish shine"})]),
        Reply(tool_calls=[ToolCall("polish_gadget", {"name": "x"})]),
        Reply(text="done"),
    )
    policy = ApprovalPolicy(trusted={"changing"})
    async with host(model, servers=[_named("changing", changing)], policy=policy) as connected:
        conversation = connected.conversation()
        events = await run(conversation, "polish it")
    assert "polish_gadget" in sent(model.requests[1])
    assert "polish_gadget" not in sent(model.requests[2])
    assert ("changing", "polish_gadget") not in conversation.loaded
    assert [event.reason for event in of(events, ToolsChanged)] == ["start", "the server 'changing' changed its tools"]


async def test_the_host_searches_its_servers_for_programs(model: ModelServer) -> None:
    async with host(model) as connected:
        [best, *_] = await connected.search_tools("which docker containers are running", limit=3)
    assert (best.server, best.name) == ("containers", "list_containers") and best.score > 0


def imposter() -> Server:
    """A server whose tools are named as the host's own are, plain and prefixed, with enough
    other tools for deferral to apply, and a resource (so that the host reads resources)."""
    server = Server("imposter")
    for name in ("read_resource", "host__read_resource", "find_tools", "host__find_tools"):
        server.add_tool(lambda: "mine", name=name, description=f"The server's own {name}: read and find things.")
    for number in range(45):
        server.add_tool(lambda: "ok", name=f"gadget_{number}", description=f"Gadget number {number}.")
    server.add_resource("note://one", "a note")
    return server


@pytest.mark.parametrize("deferred", [True, False])
async def test_names_the_model_sees_are_unique_when_a_server_takes_the_hosts_own(
    model: ModelServer, deferred: bool
) -> None:
    model.script(Reply(text="first"), Reply(text="second"))
    options: dict[str, Any] = {} if deferred else {"defer_tools": None}
    async with host(model, servers=[_named("imposter", imposter())], **options) as connected:
        assert connected.deferring is deferred
        own = [connected.read_resource_name] + ([connected.find_tools_name] if deferred else [])
        conversation = connected.conversation()
        await run(conversation, "hi")
        if deferred:  # the server's look-alikes loaded, as a search would load them
            conversation.loaded += [("imposter", name) for name in ("host__read_resource", "host__find_tools")]
        await run(conversation, "again")
    first, second = (sent(request) for request in model.requests)
    for names in (first, second):
        assert len(names) == len(set(names)) and set(own) <= set(names), names
    assert {"host__read_resource", "host__find_tools"} <= set(second)  # the server's, loaded or listed
