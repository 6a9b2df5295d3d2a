"""Interoperability over Streamable HTTP with the official MCP Python SDK (mcp 2.3.0), both ways.

1. The SDK's ``Client`` (its ``streamable_http_client`` transport, chosen for a URL) against
   toolwire's server (``tests/interop/toolwire_server.py`` under ``toolwire run --http``),
   stateful and ``--stateless``, in both eras: ``mode="legacy"`` sends ``initialize``
   (2025-11-25), ``mode="auto"`` probes ``server/discover`` and stays on 2026-07-28.
2. toolwire's :class:`Client` against the SDK's own HTTP server: ``sdk_server.py``'s
   ``MCPServer`` served by its ``streamable_http_app`` under uvicorn
   (``tests/interop/sdk_http_server.py``), as 2026-07-28 and as 2025-11-25 / 2025-03-26.

Where the SDK answers other than the specification says, the test pins what it does and
says so.
"""

from __future__ import annotations

import asyncio
import base64
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from mcp import Client as SdkClient
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.support.httpserve import MODERN, ROOT, STREAMING, process_http, toolwire_http
from toolwire.client import Client, RequestTimeout, ServerError, TextContent

INTEROP = ROOT / "tests" / "interop"
TOOLWIRE_SERVER = str(INTEROP / "toolwire_server.py")
SDK_HTTP_SERVER = str(INTEROP / "sdk_http_server.py")
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)

#: How the SDK client opens, and the version it ends up speaking with toolwire.
MODES = {"legacy": "2025-11-25", "auto": MODERN}


@pytest.fixture(scope="module")
def stateful() -> Iterator[str]:
    with toolwire_http(TOOLWIRE_SERVER) as (url, _):
        yield url


@pytest.fixture(scope="module")
def stateless() -> Iterator[str]:
    with toolwire_http(TOOLWIRE_SERVER, "--stateless") as (url, _):
        yield url


@pytest.fixture(scope="module")
def sdk_server() -> Iterator[str]:
    with process_http(sys.executable, SDK_HTTP_SERVER) as url:
        yield url


@pytest.fixture(params=["stateful", "stateless"])
def toolwire_url(request: pytest.FixtureRequest) -> str:
    return request.getfixturevalue(request.param)  # type: ignore[no-any-return]


@pytest.fixture(params=list(MODES))
def mode(request: pytest.FixtureRequest) -> str:
    return request.param  # type: ignore[no-any-return]


def sdk_client(url: str, mode: str, **options: Any) -> SdkClient:
    return SdkClient(url, mode=mode, read_timeout_seconds=10, **options)  # type: ignore[arg-type]


async def all_pages(fetch: Any, key: str) -> tuple[list[Any], int]:
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


async def wait_until(condition: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


# == 1. The SDK's client against toolwire's HTTP server ==========================================


async def test_sdk_client_connects_and_lists_every_page(toolwire_url: str, mode: str) -> None:
    async with sdk_client(toolwire_url, mode) as client:
        assert client.protocol_version == MODES[mode]
        info = client.server_info
        assert info is not None and (info.name, info.version) == ("toolwire-interop", "4.5.6")
        assert client.instructions == "Tools for interop tests."
        tools, pages = await all_pages(client.list_tools, "tools")
    names = [tool.name for tool in tools]
    assert names[:4] == ["echo", "add", "analyze", "primes"] and pages >= 4  # three to a page


async def test_sdk_client_calls_tools_and_gets_toolwire_errors(toolwire_url: str, mode: str) -> None:
    modern = MODES[mode] == MODERN
    async with sdk_client(toolwire_url, mode) as client:
        await all_pages(client.list_tools, "tools")
        echoed = await client.call_tool("echo", {"text": "héllo ✓"})
        assert [(block.type, block.text) for block in echoed.content] == [("text", "héllo ✓")]  # type: ignore[union-attr]
        added = await client.call_tool("add", {"a": 2, "b": 3})
        assert added.structured_content == (5 if modern else {"result": 5})
        broken = await client.call_tool("broken", {})
        assert broken.is_error and broken.content[0].text == "the external API is down"  # type: ignore[union-attr]
        invalid = await client.call_tool("add", {"a": "x"})
        assert invalid.is_error
        with pytest.raises(MCPError) as caught:
            await client.call_tool("no-such-tool", {})
        assert caught.value.code == -32602 and "no-such-tool" in caught.value.message


async def test_sdk_client_receives_progress(toolwire_url: str, mode: str) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async with sdk_client(toolwire_url, mode) as client:
        await all_pages(client.list_tools, "tools")
        result = await client.call_tool("countdown", {"n": 3}, progress_callback=on_progress)
    assert result.content[0].text == "liftoff"  # type: ignore[union-attr]
    assert progress == [(1, 3, "2 left"), (2, 3, "1 left"), (3, 3, "0 left")]


async def test_sdk_client_reads_toolwire_resources_and_prompts(toolwire_url: str, mode: str) -> None:
    async with sdk_client(toolwire_url, mode) as client:
        resources, pages = await all_pages(client.list_resources, "resources")
        assert [resource.uri for resource in resources] == [
            "interop://readme",
            "interop://logo",
            "interop://config",
            "interop://notes",
        ]
        assert pages == 2
        [text] = (await client.read_resource("interop://readme")).contents
        assert isinstance(text, mcp_types.TextResourceContents) and text.text == "# Interop\nRead books by id."
        [blob] = (await client.read_resource("interop://logo")).contents
        assert isinstance(blob, mcp_types.BlobResourceContents) and base64.b64decode(blob.blob) == PNG
        [book] = (await client.read_resource("interop://books/10")).contents
        assert isinstance(book, mcp_types.TextResourceContents) and book.text == "Beloved"
        with pytest.raises(MCPError) as caught:
            await client.read_resource("interop://nothing")
        assert caught.value.code == (-32602 if MODES[mode] == MODERN else -32002)
        prompts, _ = await all_pages(client.list_prompts, "prompts")
        assert [prompt.name for prompt in prompts] == ["review", "cover"]
        rendered = await client.get_prompt("review", {"code": "x = 1", "language": "rust"})
        assert rendered.messages[0].content.text == "Review this rust code:\nx = 1"  # type: ignore[union-attr]
        languages = await client.complete(mcp_types.PromptReference(name="review"), {"name": "language", "value": "r"})
        assert languages.completion.values == ["rust"]


async def test_sdk_client_answers_elicitation_and_sampling(stateful: str, mode: str) -> None:
    """Legacy sessions: toolwire asks on the call's stream and the SDK POSTs the answer.
    2026-07-28: an InputRequiredResult, retried by the SDK."""
    elicited: list[Any] = []

    async def elicit(context: Any, params: mcp_types.ElicitRequestParams) -> mcp_types.ElicitResult:
        elicited.append(params)
        return mcp_types.ElicitResult(action="accept", content={"count": 2, "name": "Ada"})

    async def sample(context: Any, params: mcp_types.CreateMessageRequestParams) -> mcp_types.CreateMessageResult:
        content = mcp_types.TextContent(type="text", text="short")
        return mcp_types.CreateMessageResult(role="assistant", content=content, model="fake-1", stop_reason="endTurn")

    async with sdk_client(stateful, mode, elicitation_callback=elicit, sampling_callback=sample) as client:
        await all_pages(client.list_tools, "tools")
        booked = await client.call_tool("book", {"flight": "LH1"})
        summary = await client.call_tool("summarize", {"text": "cats"})
    assert booked.content[0].text == "booked 2 for Ada on LH1"  # type: ignore[union-attr]
    assert summary.content[0].text == "summary: short"  # type: ignore[union-attr]
    assert elicited[0].message == "How many seats on LH1?"  # type: ignore[union-attr]


async def test_sdk_client_elicitation_without_sessions_only_in_2026_07_28(stateless: str, mode: str) -> None:
    """Input requests need no session in 2026-07-28; a stateless legacy server has no stream
    to ask on, so the tool says the client cannot answer."""

    async def elicit(context: Any, params: Any) -> mcp_types.ElicitResult:
        return mcp_types.ElicitResult(action="accept", content={"count": 1, "name": "Bo"})

    async with sdk_client(stateless, mode, elicitation_callback=elicit) as client:
        await all_pages(client.list_tools, "tools")
        booked = await client.call_tool("book", {"flight": "LH9"})
    if MODES[mode] == MODERN:
        assert booked.content[0].text == "booked 1 for Bo on LH9"  # type: ignore[union-attr]
    else:
        assert booked.is_error and "does not support elicitation" in booked.content[0].text  # type: ignore[union-attr]


async def test_sdk_client_timeout_cancels_the_toolwire_call(stateful: str, mode: str, tmp_path: Path) -> None:
    """Legacy: the SDK sends notifications/cancelled; 2026-07-28: it closes the stream.

    The SDK client does not end its session on exit here: toolwire keeps the POST of a call
    cancelled with notifications/cancelled open until the session ends, then lets it end with
    a bare 500 (test_http.py pins both), and whether the SDK client's exit then raises
    (ClosedResourceError from its POST task) depends on timing."""
    marker = tmp_path / "cancelled"
    transport = streamable_http_client(stateful, terminate_on_close=False)
    async with SdkClient(transport, mode=mode, read_timeout_seconds=10) as client:  # type: ignore[arg-type]
        await all_pages(client.list_tools, "tools")
        with pytest.raises(MCPError):
            await client.call_tool("slow", {"seconds": 30, "marker": str(marker)}, read_timeout_seconds=0.3)
        with anyio.fail_after(3):
            while not marker.exists():
                await anyio.sleep(0.01)
        assert (await client.call_tool("echo", {"text": "still here"})).content[0].text == "still here"  # type: ignore[union-attr]


async def test_sdk_client_hears_the_tool_list_change(mode: str) -> None:
    """Legacy: on the session's GET stream. 2026-07-28: on a subscriptions/listen stream.
    A server of its own: unlocking changes its tool list for good."""
    received: list[Any] = []

    async def on_message(message: Any) -> None:
        received.append(message)

    with toolwire_http(TOOLWIRE_SERVER) as (url, _):
        async with sdk_client(url, mode, message_handler=on_message) as client:
            assert "secret" not in [tool.name for tool in (await all_pages(client.list_tools, "tools"))[0]]
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
            assert "secret" in [tool.name for tool in (await all_pages(client.list_tools, "tools"))[0]]


async def test_sdk_client_mirrors_an_x_mcp_header_parameter(mode: str) -> None:
    """toolwire checks Mcp-Param-Region against the argument (2026-07-28); the SDK mirrors it."""
    with toolwire_http(STREAMING) as (url, _):
        async with sdk_client(url, mode) as client:
            await all_pages(client.list_tools, "tools")
            for region in ("eu-west1", "Zürich"):
                result = await client.call_tool("regional", {"region": region, "query": "q"})
                assert result.content[0].text == f"{region}: q"  # type: ignore[union-attr]


# == 2. toolwire's Client against the SDK's HTTP server ==========================================

PROTOCOLS = [None, "2025-11-25", "2025-03-26"]
SAMPLED = {
    "role": "assistant",
    "content": {"type": "text", "text": "short"},
    "model": "fake-1",
    "stopReason": "endTurn",
}


@pytest.fixture(params=PROTOCOLS, ids=lambda protocol: protocol or "modern")
def protocol(request: pytest.FixtureRequest) -> str | None:
    return request.param  # type: ignore[no-any-return]


async def test_client_connects_to_the_sdk_http_server(sdk_server: str, protocol: str | None) -> None:
    async with Client(sdk_server, protocol=protocol, timeout=10) as client:
        assert client.version == (protocol or MODERN)
        assert client.server_info == {"name": "sdk-interop", "version": "9.8.7"}
        assert client.instructions == "Tools for interop tests."
        tools = {tool.name for tool in await client.list_tools()}
        assert {"echo", "add", "weather", "countdown", "greet", "summarize", "slow"} <= tools
        if protocol is None:
            assert client.transport.session_id is None  # type: ignore[attr-defined]
        else:
            assert client.transport.session_id  # type: ignore[attr-defined]


async def test_client_calls_sdk_tools_with_progress(sdk_server: str, protocol: str | None) -> None:
    """mcp 2.3.0 sends ``structuredContent`` in 2025-03-26 sessions too, although that version
    has no such field (it came in 2025-06-18); pinned, and toolwire passes it on."""
    progress: list[tuple[Any, ...]] = []
    async with Client(sdk_server, protocol=protocol, timeout=10) as client:
        echoed = await client.call_tool("echo", {"text": "héllo ✓"})
        assert echoed.text == "héllo ✓" and isinstance(echoed.content[0], TextContent)
        weather = await client.call_tool("weather", {"city": "Oslo"})
        assert weather.structured == {"city": "Oslo", "celsius": 21.5}
        counted = await client.call_tool("countdown", {"n": 3}, progress=lambda *args: progress.append(args))
        assert counted.text == "liftoff"
        failed = await client.call_tool("fail")
        assert failed.is_error and failed.text == "Error executing tool fail: the external API is down"
    assert progress == [(1, 3, "2 left"), (2, 3, "1 left"), (3, 3, "0 left")]


async def test_client_answers_the_sdk_servers_elicitation_and_sampling(sdk_server: str, protocol: str | None) -> None:
    """Legacy: the SDK server asks on the call's SSE stream and toolwire POSTs the answer.
    2026-07-28: an InputRequiredResult that toolwire retries with the answers."""
    elicited: list[dict[str, Any]] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        elicited.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    async def sample(params: dict[str, Any]) -> dict[str, Any]:
        return SAMPLED

    async with Client(sdk_server, protocol=protocol, timeout=10, elicitation=elicit, sampling=sample) as client:
        assert (await client.call_tool("greet")).text == "Hello, Ada!"
        assert (await client.call_tool("summarize", {"topic": "cats"})).text == "summary of cats: short"
    assert elicited[0]["message"] == "What is your name?"


async def test_client_reads_the_sdk_servers_resources_and_prompts(sdk_server: str, protocol: str | None) -> None:
    """mcp 2.3.0 answers a missing resource with -32602 and ``data.uri`` in every era (2025-11-25
    wants -32002); pinned."""
    async with Client(sdk_server, protocol=protocol, timeout=10) as client:
        assert [resource.uri for resource in await client.list_resources()] == ["interop://readme", "interop://logo"]
        [readme] = await client.read_resource("interop://readme")
        assert (readme.mime_type, readme.text) == ("text/markdown", "# Interop\nRead books by id.")
        [logo] = await client.read_resource("interop://logo")
        assert logo.bytes() == PNG
        [book] = await client.read_resource("interop://books/2")
        assert book.text == "Emma"
        with pytest.raises(ServerError) as caught:
            await client.read_resource("interop://nothing")
        assert (caught.value.code, caught.value.data) == (-32602, {"uri": "interop://nothing"})
        review = await client.get_prompt("review", {"code": "x = 1"})
        assert review.messages[0].content.text == "Review this python code:\nx = 1"  # type: ignore[union-attr]
        languages = await client.complete("language", "r", prompt="review")
        assert languages.values == ["rust"]


async def test_client_timeout_cancels_the_sdk_servers_call(
    sdk_server: str, protocol: str | None, tmp_path: Path
) -> None:
    """Legacy: toolwire sends notifications/cancelled; 2026-07-28: it closes the call's stream."""
    marker = tmp_path / "cancelled"
    async with Client(sdk_server, protocol=protocol, timeout=10) as client:
        with pytest.raises(RequestTimeout):
            await client.call_tool("slow", {"seconds": 30, "marker": str(marker)}, timeout=0.3)
        assert await wait_until(marker.exists), "the SDK server went on with the call"
        assert (await client.call_tool("echo", {"text": "after"})).text == "after"


async def test_client_hears_the_sdk_servers_changes(sdk_server: str, protocol: str | None) -> None:
    """2026-07-28: list changes and resource updates on toolwire's subscriptions/listen stream.
    Legacy: mcp 2.3.0's MCPServer declares ``tools.listChanged: false`` yet sends
    ``notifications/tools/list_changed`` on the GET stream (pinned), and offers no
    resource subscriptions."""
    changes: list[int] = []
    updated: list[str] = []
    async with Client(
        sdk_server,
        protocol=protocol,
        timeout=10,
        on_tools_changed=lambda: changes.append(1),
        on_resource_updated=updated.append,
    ) as client:
        assert client.capabilities["tools"] == {"listChanged": protocol is None}
        assert (await client.call_tool("unlock")).text == "unlocked"
        assert await wait_until(lambda: changes == [1])
        if protocol is None:
            await client.subscribe_resource("interop://readme")
            await client.call_tool("touch", {"uri": "interop://logo"})
            await client.call_tool("touch", {"uri": "interop://readme"})
            assert await wait_until(lambda: updated == ["interop://readme"])
        else:
            assert client.capabilities["resources"]["subscribe"] is False
