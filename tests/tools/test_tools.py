"""Tool behaviour per protocol version: listing, calling, results, errors, progress, changes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

import pytest

from tests.support.helpers import LEGACY, MODERN, open_peer
from toolwire import (
    Context,
    Param,
    Server,
    ToolError,
    ToolResult,
    annotations,
    audio,
    embedded_resource,
    image,
    resource_link,
    text,
)
from toolwire.protocol.errors import ProtocolError
from toolwire.transports.memory import MemoryConnection

ALL = [*LEGACY, MODERN]
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
WAV = b"RIFF\x00\x00\x00\x00WAVEfmt " + b"\x00" * 16


@dataclass
class Forecast:
    temperature: float
    conditions: str


def make_server(**options: Any) -> Server:
    server = Server("tools", **options)

    @server.tool(
        title="Weather",
        read_only=True,
        open_world=False,
        icons=[{"src": "https://example.com/w.png", "mimeType": "image/png"}],
        meta={"com.example/tier": "free"},
    )
    def forecast(city: str) -> Forecast:
        """Forecast for a city."""
        return Forecast(21.5, f"sunny in {city}")

    @server.tool
    def add(a: int, b: Annotated[int, Param(le=100)]) -> int:
        return a + b

    @server.tool
    async def fail() -> str:
        raise RuntimeError("database password is hunter2")

    @server.tool
    async def refuse() -> str:
        raise ToolError("API rate limit exceeded")

    @server.tool(output_schema={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})
    async def liar() -> dict[str, Any]:
        return {"n": "not a number"}

    @server.tool
    async def media() -> list[Any]:
        return [
            text("hello", annotations=annotations(audience=["user"], priority=0.5)),
            image(PNG),
            audio(WAV),
            resource_link("file:///tmp/a.txt", "a.txt", mime_type="text/plain"),
            embedded_resource("mem://note", text="a note", mime_type="text/plain"),
        ]

    @server.tool
    async def whole() -> ToolResult:
        return ToolResult([text("custom")], structured={"k": 1}, meta={"com.example/x": 1})

    @server.tool
    async def steps(n: int, ctx: Context) -> str:
        for i in range(1, n + 1):
            ctx.report_progress(i, n, f"step {i}")
        return "done"

    return server


async def tools_by_name(peer: Any) -> dict[str, Any]:
    return {tool["name"]: tool for tool in (await peer.request("tools/list"))["result"]["tools"]}


@pytest.mark.parametrize("version", ALL)
async def test_tool_definitions_have_only_the_fields_of_the_version(version: str) -> None:
    peer = await open_peer(make_server(), version)
    forecast = (await tools_by_name(peer))["forecast"]
    assert forecast["name"] == "forecast"
    assert forecast["description"] == "Forecast for a city."
    assert forecast["inputSchema"]["required"] == ["city"]
    expected = {"name", "description", "inputSchema"}
    if version >= "2025-03-26":
        expected.add("annotations")
    if version >= "2025-06-18":
        expected |= {"title", "outputSchema", "_meta"}
    if version >= "2025-11-25":
        expected.add("icons")
    assert set(forecast) == expected
    if version == "2025-03-26":
        assert forecast["annotations"] == {"title": "Weather", "readOnlyHint": True, "openWorldHint": False}


@pytest.mark.parametrize("version", ALL)
async def test_structured_output_per_version(version: str) -> None:
    peer = await open_peer(make_server(), version)
    result = (await peer.call("forecast", {"city": "Oslo"}))["result"]
    assert result["content"] == [{"type": "text", "text": '{"temperature":21.5,"conditions":"sunny in Oslo"}'}]
    if version < "2025-06-18":
        assert "structuredContent" not in result
    else:
        assert result["structuredContent"] == {"temperature": 21.5, "conditions": "sunny in Oslo"}
    scalar = (await peer.call("add", {"a": 2, "b": 3}))["result"]
    schema = (await tools_by_name(peer))["add"].get("outputSchema")
    if version < "2025-06-18":
        assert "structuredContent" not in scalar and schema is None
    elif version == MODERN:
        assert scalar["structuredContent"] == 5 and schema == {"type": "integer"}
    else:  # legacy versions allow only objects: wrapped
        assert scalar["structuredContent"] == {"result": 5}
        assert schema == {"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]}


@pytest.mark.parametrize("version", ALL)
async def test_invalid_arguments_are_an_error_result_from_2025_11_25_and_a_protocol_error_before(version: str) -> None:
    peer = await open_peer(make_server(), version)
    answer = await peer.call("add", {"a": 1, "b": 500})
    if version >= "2025-11-25":
        assert answer["result"]["isError"] is True
        assert "maximum of 100 (at 'b')" in answer["result"]["content"][0]["text"]
    else:
        assert answer["error"]["code"] == -32602
        assert "maximum of 100 (at 'b')" in answer["error"]["message"]


@pytest.mark.parametrize("version", ALL)
async def test_unknown_tool_and_malformed_calls_are_protocol_errors(version: str) -> None:
    peer = await open_peer(make_server(), version)
    unknown = await peer.call("nope")
    assert unknown["error"] == {"code": -32602, "message": "Unknown tool: nope"}
    no_name = await peer.request("tools/call", {"arguments": {}})
    assert no_name["error"]["code"] == -32602 and '"name"' in no_name["error"]["message"]
    bad_args = await peer.request("tools/call", {"name": "add", "arguments": [1, 2]})
    assert bad_args["error"]["code"] == -32602 and '"arguments"' in bad_args["error"]["message"]


async def test_lenient_arguments_reach_the_handler_as_the_right_type() -> None:
    peer = await open_peer(make_server(), "2025-11-25")
    result = (await peer.call("add", {"a": "2", "b": "40"}))["result"]
    assert result["structuredContent"] == {"result": 42}


async def test_exceptions_become_readable_error_results_and_can_be_masked() -> None:
    peer = await open_peer(make_server(), "2025-11-25")
    result = (await peer.call("fail"))["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"] == "Tool 'fail' failed: RuntimeError: database password is hunter2"
    refused = (await peer.call("refuse"))["result"]
    assert refused == {"content": [{"type": "text", "text": "API rate limit exceeded"}], "isError": True}
    masked = await open_peer(make_server(mask_errors=True), "2025-11-25")
    result = (await masked.call("fail"))["result"]
    assert "hunter2" not in result["content"][0]["text"] and result["isError"] is True
    # ToolError is meant for the model: never masked
    assert (await masked.call("refuse"))["result"]["content"][0]["text"] == "API rate limit exceeded"


async def test_a_result_that_breaks_the_output_schema_is_an_internal_error() -> None:
    peer = await open_peer(make_server(), MODERN)
    answer = await peer.call("liar")
    assert answer["error"]["code"] == -32603
    assert "liar" in answer["error"]["message"] and "integer" in answer["error"]["message"]


async def test_a_tool_with_an_output_schema_always_sends_structured_content() -> None:
    server = Server("structured")

    @server.tool
    def blocks() -> list:
        return [text("first"), text("second")]

    @server.tool(output_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
    def unstructured() -> ToolResult:
        return ToolResult("no structured content")

    @server.tool(output_schema={"type": "object", "properties": {"n": {"type": "integer"}}})
    def failed() -> ToolResult:
        return ToolResult("it broke", is_error=True)

    @server.raw_tool("raw_value", input_schema={"type": "object"}, output_schema={"type": "object"})
    def raw_value(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"n": 1}

    @server.raw_tool("raw_text", input_schema={"type": "object"}, output_schema={"type": "object"})
    def raw_text(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "no structured content"}]}

    peer = await open_peer(server, MODERN)
    result = (await peer.call("blocks"))["result"]
    assert result["content"] == [{"type": "text", "text": "first"}, {"type": "text", "text": "second"}]
    assert result["structuredContent"] == result["content"]
    for name in ("unstructured", "raw_text"):
        error = (await peer.call(name))["error"]
        assert (
            error["code"] == -32603
            and f"tool '{name}' has an outputSchema but returned no structured" in error["message"]
        )
    assert (await peer.call("failed"))["result"]["isError"] is True  # errors need no structured content
    assert (await peer.call("raw_value"))["result"]["structuredContent"] == {"n": 1}


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", MODERN])
async def test_content_blocks_and_what_older_versions_get(version: str) -> None:
    peer = await open_peer(make_server(), version)
    content = (await peer.call("media"))["result"]["content"]
    kinds = [block["type"] for block in content]
    assert content[0] == {"type": "text", "text": "hello", "annotations": {"audience": ["user"], "priority": 0.5}}
    assert content[1]["mimeType"] == "image/png"
    assert content[4]["resource"] == {"uri": "mem://note", "mimeType": "text/plain", "text": "a note"}
    if version >= "2025-06-18":
        assert kinds == ["text", "image", "audio", "resource_link", "resource"]
        assert content[2]["mimeType"] == "audio/wav"
    elif version == "2025-03-26":
        assert kinds == ["text", "image", "audio", "text", "resource"]
        assert content[3]["text"] == "Resource a.txt: file:///tmp/a.txt"
    else:
        assert kinds == ["text", "image", "text", "text", "resource"]
        assert content[2]["text"].startswith("[audio audio/wav")


async def test_a_whole_tool_result() -> None:
    peer = await open_peer(make_server(), "2025-11-25")
    result = (await peer.call("whole"))["result"]
    assert result == {
        "content": [{"type": "text", "text": "custom"}],
        "structuredContent": {"k": 1},
        "_meta": {"com.example/x": 1},
    }


@pytest.mark.parametrize(("version", "token"), [("2024-11-05", 7), ("2025-11-25", "tok"), (MODERN, 0)])
async def test_progress_echoes_the_token_with_its_type(version: str, token: Any) -> None:
    peer = await open_peer(make_server(), version)
    answer = await peer.call("steps", {"n": 3}, progressToken=token)
    assert answer["result"]["content"][0]["text"] == "done"
    params = [n["params"] for n in peer.notifications if n["method"] == "notifications/progress"]
    assert [p["progressToken"] for p in params] == [token] * 3
    assert type(params[0]["progressToken"]) is type(token)
    assert [p["progress"] for p in params] == [1, 2, 3]
    assert all(p["total"] == 3 for p in params)
    assert ("message" in params[0]) == (version >= "2025-03-26")


async def test_no_progress_without_a_token_and_progress_must_increase() -> None:
    server = Server("p")

    @server.tool
    async def backwards(ctx: Context) -> str:
        ctx.report_progress(5)
        ctx.report_progress(4)
        return "unreachable"

    peer = await open_peer(server, "2025-11-25")
    result = (await peer.call("backwards"))["result"]
    assert peer.notifications == []
    assert result["isError"] and "progress must increase" in result["content"][0]["text"]


async def test_cancellation_stops_the_handler_and_nothing_more_is_sent() -> None:
    server = Server("c")
    events: list[str] = []

    @server.tool
    async def slow(ctx: Context) -> str:
        try:
            ctx.report_progress(1)
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            events.append("cancelled")
            raise
        return "finished"

    @server.tool
    async def quick() -> str:
        return "quick"

    peer = await open_peer(server, "2025-11-25")
    slow_id = await peer.send("tools/call", {"name": "slow", "arguments": {}}, progressToken="s")
    assert (await peer.connection.receive())["method"] == "notifications/progress"
    await peer.connection.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": slow_id}}
    )
    assert (await peer.call("quick"))["result"]["content"][0]["text"] == "quick"
    await asyncio.sleep(0.05)
    assert events == ["cancelled"]
    assert peer.connection.pending() == 0
    assert not peer.connection.session._tasks


async def test_a_sync_tool_does_not_block_other_calls() -> None:
    server = Server("s")

    @server.tool
    def blocking() -> str:
        time.sleep(0.5)
        return "slept"

    @server.tool
    async def fast() -> str:
        return "fast"

    peer = await open_peer(server, "2025-11-25")
    slow_id = await peer.send("tools/call", {"name": "blocking", "arguments": {}})
    started = time.perf_counter()
    assert (await peer.call("fast"))["result"]["content"][0]["text"] == "fast"
    assert time.perf_counter() - started < 0.3
    assert (await peer.answer(slow_id))["result"]["content"][0]["text"] == "slept"


async def test_a_reused_in_flight_id_is_refused_and_the_first_call_goes_on() -> None:
    server = Server("r")
    release = asyncio.Event()

    @server.tool
    async def wait() -> str:
        await release.wait()
        return "released"

    async with MemoryConnection(server) as connection:
        await connection.send(
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
        )
        await connection.receive()
        call = {"jsonrpc": "2.0", "id": "same", "method": "tools/call", "params": {"name": "wait"}}
        await connection.send(call)
        await connection.send(call)
        error = await connection.receive()
        assert error["id"] == "same" and error["error"]["code"] == -32600 and "in flight" in error["error"]["message"]
        release.set()
        assert (await connection.receive())["result"]["content"][0]["text"] == "released"


async def test_batches_are_accepted_in_2025_03_26_only() -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}},
        {"jsonrpc": "2.0", "method": "notifications/whatever"},
        {"jsonrpc": "2.0", "id": 2, "method": "ping"},
        {"jsonrpc": "2.0", "id": 3, "method": "nope"},
    ]
    peer = await open_peer(make_server(), "2025-03-26")
    await peer.connection.send(batch)
    answers = {answer["id"]: answer for answer in await peer.connection.receive()}
    assert answers[1]["result"]["content"][0]["text"] == "3"
    assert answers[2]["result"] == {}
    assert answers[3]["error"]["code"] == -32601
    for version in ("2025-06-18", "2025-11-25"):
        other = await open_peer(make_server(), version)
        await other.connection.send(batch)
        answer = await other.connection.receive()
        assert answer["error"]["code"] == -32600 and "batch" in answer["error"]["message"]


async def test_registry_changes_notify_legacy_clients_and_modern_subscribers() -> None:
    server = make_server()
    legacy = await open_peer(server, "2025-11-25")
    modern = await open_peer(server, MODERN)
    listen_id = await modern.send("subscriptions/listen", {"notifications": {"toolsListChanged": True, "other": True}})
    ack = await modern.connection.receive()
    assert ack == {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": listen_id},
            "notifications": {"toolsListChanged": True},
        },
    }

    @server.tool
    async def newcomer() -> str:
        return "hi"

    assert (await legacy.connection.receive())["method"] == "notifications/tools/list_changed"
    changed = await modern.connection.receive()
    assert changed["method"] == "notifications/tools/list_changed"
    assert changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == listen_id
    assert "newcomer" in await tools_by_name(legacy)

    server.disable_tool("newcomer")
    assert (await legacy.connection.receive())["method"] == "notifications/tools/list_changed"
    assert "newcomer" not in await tools_by_name(legacy)
    assert (await legacy.call("newcomer"))["error"]["code"] == -32602
    server.enable_tool("newcomer")
    await legacy.connection.receive()
    assert (await legacy.call("newcomer"))["result"]["content"][0]["text"] == "hi"

    # cancelling the subscription ends it: no more notifications, no response
    await modern.connection.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": listen_id}}
    )
    while modern.connection.pending():
        await modern.connection.receive()
    server.remove_tool("newcomer")
    await asyncio.sleep(0.01)
    assert modern.connection.pending() == 0


async def test_subscriptions_end_gracefully_when_the_server_closes() -> None:
    peer = await open_peer(make_server(), MODERN)
    listen_id = await peer.send("subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    await peer.connection.receive()
    await peer.connection.close()
    final = await peer.connection.receive()
    assert final["id"] == listen_id and final["result"]["resultType"] == "complete"
    assert final["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == listen_id


async def test_pagination_with_opaque_cursors() -> None:
    server = Server("pages", page_size=2)
    for i in range(5):
        server.add_tool(lambda: "x", name=f"t{i}")
    peer = await open_peer(server, MODERN)
    names: list[str] = []
    cursor = None
    for _ in range(5):
        params = {} if cursor is None else {"cursor": cursor}
        result = (await peer.request("tools/list", params))["result"]
        names += [tool["name"] for tool in result["tools"]]
        assert result["ttlMs"] == 60_000
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert names == ["t0", "t1", "t2", "t3", "t4"]
    for bad in ("garbage", "dG9vbHM6OTk=", 5):
        error = (await peer.request("tools/list", {"cursor": bad}))["error"]
        assert error["code"] == -32602


def test_names_and_duplicates_are_checked_at_registration() -> None:
    server = Server("names")
    server.add_tool(lambda: "x", name="ok.name-1_A")
    with pytest.raises(ValueError, match="already registered"):
        server.add_tool(lambda: "x", name="ok.name-1_A")
    for bad in ("", "has space", "x" * 129, "naïve", "a/b"):
        with pytest.raises(ValueError, match="invalid tool name"):
            server.add_tool(lambda: "x", name=bad)


async def test_raw_schema_tools_are_validated_strictly() -> None:
    server = Server("raw")

    @server.raw_tool(
        "calculate_sum",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
        description="Add two numbers",
    )
    def calculate_sum(arguments: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"type": "text", "text": str(arguments["a"] + arguments["b"])}]

    peer = await open_peer(server, "2025-11-25")
    assert (await peer.call("calculate_sum", {"a": 1, "b": 2.5}))["result"]["content"][0]["text"] == "3.5"
    result = (await peer.call("calculate_sum", {"a": "1", "b": 2}))["result"]
    assert result["isError"] is True and "is not of type" in result["content"][0]["text"]


async def test_raw_list_and_call_handlers() -> None:
    server = Server("low-level")
    schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}

    @server.list_tools_handler
    async def list_tools() -> list[dict[str, Any]]:
        return [{"name": "text_analyzer", "description": "Count characters and words", "inputSchema": schema}]

    @server.call_tool_handler
    async def call_tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        words = len(arguments["text"].split())
        return {
            "content": [{"type": "text", "text": f"chars: {len(arguments['text'])}\nwords: {words}"}],
            "isError": False,
        }

    for version in ("2025-06-18", MODERN):
        peer = await open_peer(server, version)
        listed = (await peer.request("tools/list"))["result"]
        assert [tool["name"] for tool in listed["tools"]] == ["text_analyzer"]
        assert (await peer.call("text_analyzer", {"text": "a b c"}))["result"]["content"][0][
            "text"
        ] == "chars: 5\nwords: 3"
        assert (await peer.call("missing", {}))["error"]["code"] == -32602
    peer = await open_peer(server, "2025-06-18")
    assert (await peer.call("text_analyzer", {}))["error"]["code"] == -32602  # validated against the listed schema


def test_media_from_files_and_undetectable_data(tmp_path: Any) -> None:
    picture = tmp_path / "chart.png"
    picture.write_bytes(PNG)
    assert image(picture)["mimeType"] == "image/png"
    assert image(str(picture))["data"] == image(PNG)["data"]
    sound = tmp_path / "clip.mp3"
    sound.write_bytes(b"\x00" * 8)  # no magic: the file name tells
    assert audio(sound)["mimeType"] == "audio/mpeg"
    with pytest.raises(ValueError, match="mime_type"):
        image(b"not an image")
    assert audio(b"raw", "audio/x-custom")["mimeType"] == "audio/x-custom"


@dataclass
class Point:
    x: int
    y: int


class Box(TypedDict):
    w: int


async def test_unknown_fields_of_dataclass_and_typeddict_arguments_are_refused_before_the_tool() -> None:
    from toolwire.tools.tool import Tool
    from toolwire.tools.validation import ArgumentsInvalid

    def place(point: Point, box: Box) -> str:
        return f"{point} in {box}"

    tool = Tool.from_function(place)
    for arguments, field in (
        ({"point": {"x": 1, "y": 2, "z": 3}, "box": {"w": 1}}, "point"),
        ({"point": {"x": 1, "y": 2}, "box": {"w": 1, "h": 2}}, "box"),
    ):
        with pytest.raises(ArgumentsInvalid, match=rf"Additional properties are not allowed .* \(at '{field}'\)"):
            tool.validate_arguments(arguments)
    valid = tool.validate_arguments({"point": {"x": 1, "y": 2}, "box": {"w": 1}})
    assert (await tool.call(valid))["content"][0]["text"] == "Point(x=1, y=2) in {'w': 1}"


async def test_objects_sent_as_json_text_are_taken_for_referenced_and_optional_types_too() -> None:
    from toolwire.tools.tool import Tool

    def show(point: Point, maybe: Point | None = None) -> str:
        return f"{point} {maybe}"

    tool = Tool.from_function(show)
    valid = tool.validate_arguments({"point": '{"x": 1, "y": 2}', "maybe": '{"x": 3, "y": 4}'})
    assert (await tool.call(valid))["content"][0]["text"] == "Point(x=1, y=2) Point(x=3, y=4)"


def generator_server() -> Server:
    server = Server("gen")

    @server.tool
    async def countdown(n: int) -> AsyncIterator[int]:
        """Counts down from n."""
        for i in range(n, 0, -1):
            yield i

    @server.tool
    def letters(word: str) -> Iterator[str]:
        yield from word

    @server.tool
    def untyped(n: int):
        for i in range(n):
            yield {"i": i}

    @server.tool
    async def sized(n: int, ctx: Context) -> AsyncGenerator[int, None]:
        for i in range(n):
            ctx.report_progress(10 * (i + 1))
            yield i

    @server.tool
    def broken() -> Iterator[int]:
        yield 1
        raise RuntimeError("ran dry")

    return server


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", MODERN])
async def test_generator_tools_answer_with_the_list_of_their_items(version: str) -> None:
    peer = await open_peer(generator_server(), version)
    tools = await tools_by_name(peer)
    items_schema = {"type": "array", "items": {"type": "integer"}}
    if version == MODERN:
        assert tools["countdown"]["outputSchema"] == items_schema
    else:
        assert tools["countdown"]["outputSchema"]["properties"]["result"] == items_schema
    assert tools["countdown"]["inputSchema"]["required"] == ["n"]
    assert tools["countdown"]["description"] == "Counts down from n."
    result = (await peer.call("countdown", {"n": 3}))["result"]
    structured = result["structuredContent"]
    assert (structured if version == MODERN else structured["result"]) == [3, 2, 1]
    result = (await peer.call("letters", {"word": "abc"}))["result"]
    structured = result["structuredContent"]
    assert (structured if version == MODERN else structured["result"]) == ["a", "b", "c"]
    untyped = (await peer.call("untyped", {"n": 2}))["result"]
    assert "outputSchema" not in tools["untyped"]
    assert untyped["content"] == [{"type": "text", "text": '[{"i":0},{"i":1}]'}]
    broken = (await peer.call("broken"))["result"]
    assert broken["isError"] and "ran dry" in broken["content"][0]["text"]


@pytest.mark.parametrize("tool", ["countdown", "letters"])
async def test_generator_tools_report_progress_per_item(tool: str) -> None:
    peer = await open_peer(generator_server(), "2025-11-25")
    await peer.call(tool, {"n": 3} if tool == "countdown" else {"word": "abc"}, progressToken="t")
    await asyncio.sleep(0.05)  # a plain function's notifications come from its thread
    params = [n["params"] for n in peer.notifications if n["method"] == "notifications/progress"]
    assert [(p["progressToken"], p["progress"]) for p in params] == [("t", 1), ("t", 2), ("t", 3)]
    assert all("total" not in p for p in params)


async def test_a_generator_tool_that_takes_a_context_reports_its_own_progress() -> None:
    peer = await open_peer(generator_server(), "2025-11-25")
    result = (await peer.call("sized", {"n": 2}, progressToken="t"))["result"]
    assert result["structuredContent"] == {"result": [0, 1]}
    params = [n["params"] for n in peer.notifications if n["method"] == "notifications/progress"]
    assert [p["progress"] for p in params] == [10, 20]


def test_a_set_return_type_is_an_array_of_unique_items() -> None:
    server = Server("sets")

    @server.tool
    def tags() -> set:
        return {"a"}

    @server.tool
    def numbers() -> frozenset[int]:
        return frozenset({1})

    @server.tool
    def pick(choices: set) -> int:
        return len(choices)

    definitions = {name: server.registry.get(name).definition for name in ("tags", "numbers", "pick")}
    assert definitions["tags"]["outputSchema"] == {"type": "array", "uniqueItems": True}
    assert definitions["numbers"]["outputSchema"] == {
        "type": "array",
        "items": {"type": "integer"},
        "uniqueItems": True,
    }
    assert definitions["pick"]["inputSchema"]["properties"]["choices"] == {"type": "array", "uniqueItems": True}


async def test_an_os_error_is_told_by_its_reason_never_its_server_path() -> None:
    server = Server("files")

    @server.tool
    def settings() -> str:
        """Reads a file the server keeps."""
        with open("/srv/private/deploy/settings.toml") as file:
            return file.read()

    @server.resource("config://settings")
    def settings_resource() -> str:
        raise PermissionError(13, "Permission denied", "/srv/private/deploy/settings.toml")

    for version in (LEGACY[-1], MODERN):
        peer = await open_peer(server, version)
        result = (await peer.call("settings"))["result"]
        assert result["content"][0]["text"] == "Tool 'settings' failed: FileNotFoundError: No such file or directory"
        error = (await peer.request("resources/read", {"uri": "config://settings"}))["error"]
        assert (
            error["message"].endswith("failed: PermissionError: Permission denied") and "/srv" not in error["message"]
        )


def answering_server(**options: Any) -> Server:
    """``async def`` tools that answer every way a tool can, at once or after waiting."""
    server = Server("answers", **options)

    async def waited(wait: bool) -> None:
        if wait:
            await asyncio.sleep(0)

    @server.tool
    async def say(words: str, wait: bool = False) -> str:
        await waited(wait)
        return words

    @server.tool
    async def shaped(wait: bool = False) -> dict[str, int]:
        await waited(wait)
        return {"n": 1}

    @server.tool
    async def blow(wait: bool = False) -> str:
        await waited(wait)
        raise RuntimeError("boom")

    @server.tool
    async def refuse(wait: bool = False) -> str:
        await waited(wait)
        raise ToolError("not today")

    @server.tool
    async def protocol(wait: bool = False) -> str:
        await waited(wait)
        raise ProtocolError(-32602, "Invalid params: no")

    @server.tool
    async def unsendable(wait: bool = False) -> str:
        await waited(wait)
        return "\ud800"  # a lone surrogate: JSON cannot carry it

    return server


async def passing(call: Any, next: Any) -> Any:
    return await next(call)


@pytest.mark.parametrize("version", ALL)
async def test_a_tool_answered_from_its_own_coroutine_answers_as_the_full_path_does(version: str) -> None:
    # Without guards, an async def tool's coroutine is the call's own (calls.answer_call makes
    # its answer); through a guard the call takes the full path (run_tool): the same answers.
    plain = await open_peer(answering_server(), version)
    guarded = await open_peer(answering_server(guards=[passing]), version)
    calls = [("say", {"words": 'a "quoted" é \U0001f600'}), ("say", {"words": 3}), ("shaped", {}), ("blow", {})]
    calls += [("refuse", {}), ("protocol", {}), ("unsendable", {}), ("say", {})]
    calls += [("say", {"words": "hi", "unlisted": 1}), ("say", {"words": True}), ("say", {"words": None})]
    for name, arguments in calls:
        for wait in (False, True):
            answer = await plain.call(name, {**arguments, "wait": wait})
            assert answer == await guarded.call(name, {**arguments, "wait": wait}), (name, wait)
    assert (await plain.call("say", {"words": "hi"}))["result"]["content"] == [{"type": "text", "text": "hi"}]
    assert (await plain.call("unsendable"))["error"]["code"] == -32603
