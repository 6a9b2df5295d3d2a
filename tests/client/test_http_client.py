"""toolwire's :class:`Client` over Streamable HTTP against toolwire's own server, in each era:
``protocol=None`` (the probe finds 2026-07-28), ``"2025-11-25"`` and ``"2025-03-26"``.

The servers are real processes shared by the module (``toolwire run FILE --http PORT``);
the tests of session expiry serve an app in this process, where they can end or age its
sessions. The command line is run against a URL too.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.clirun import failed, toolwire_all
from tests.support.httpserve import LIBRARY, MODERN, STREAMING, InProcess, free_port, fresh_server, toolwire_http
from toolwire.client import Client, ConnectionClosed, RequestTimeout

PROTOCOLS = [None, "2025-11-25", "2025-03-26"]
SAMPLED = {
    "role": "assistant",
    "content": {"type": "text", "text": "short"},
    "model": "fake-1",
    "stopReason": "endTurn",
}


@pytest.fixture(scope="module")
def streaming() -> Iterator[str]:
    with toolwire_http(STREAMING) as (url, _):
        yield url


@pytest.fixture(scope="module")
def library() -> Iterator[str]:
    with toolwire_http(LIBRARY) as (url, _):
        yield url


class Heard:
    """What reached the client's callbacks."""

    def __init__(self) -> None:
        self.elicited: list[dict[str, Any]] = []
        self.sampled: list[dict[str, Any]] = []
        self.logs: list[dict[str, Any]] = []
        self.tools_changed = 0
        self.prompts_changed = 0
        self.updated: list[str] = []

    async def elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        self.elicited.append(params)
        return {"action": "accept", "content": {"name": "Ada"}}

    async def sample(self, params: dict[str, Any]) -> dict[str, Any]:
        self.sampled.append(params)
        return SAMPLED

    def tools(self) -> None:
        self.tools_changed += 1

    def prompts(self) -> None:
        self.prompts_changed += 1


def connect(url: str, protocol: str | None, heard: Heard | None = None, **options: Any) -> Client:
    heard = heard or Heard()
    return Client(
        url,
        protocol=protocol,
        timeout=10,
        elicitation=heard.elicit,
        sampling=heard.sample,
        on_log=heard.logs.append,
        log_level="info",
        on_tools_changed=heard.tools,
        on_prompts_changed=heard.prompts,
        on_resource_updated=heard.updated.append,
        **options,
    )


@pytest.fixture(params=PROTOCOLS, ids=lambda protocol: protocol or "modern")
def protocol(request: pytest.FixtureRequest) -> str | None:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture
async def heard() -> Heard:
    return Heard()


@pytest.fixture
async def client(streaming: str, protocol: str | None, heard: Heard) -> AsyncIterator[Client]:
    async with connect(streaming, protocol, heard) as connected:
        yield connected


async def wait_until(condition: Any, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


# -- connecting, tools -------------------------------------------------------------------------


async def test_client_connects_in_the_era_asked_for(client: Client, protocol: str | None) -> None:
    assert client.version == (protocol or MODERN) and client.modern == (protocol is None)
    assert client.server_info["name"] == "streaming" and client.server_info["version"] == "2.0.0"
    session = client.transport.session_id  # type: ignore[attr-defined]
    if protocol is None:
        assert session is None
    else:
        assert isinstance(session, str) and session
    await client.ping()


async def test_client_lists_and_calls_tools(client: Client, protocol: str | None) -> None:
    names = {tool.name for tool in await client.list_tools()}
    assert {"echo", "add", "countdown", "steps", "slow", "ask", "regional"} <= names
    assert (await client.call_tool("echo", {"text": "héllo ✓"})).text == "héllo ✓"
    added = await client.call_tool("add", {"a": 20, "b": 22})
    # Structured content came in 2025-06-18; before 2026-07-28 it is an object, so wrapped.
    structured = {None: 42, "2025-11-25": {"result": 42}, "2025-03-26": None}[protocol]
    assert added.text == "42" and added.structured == structured
    # A parameter mirrored into Mcp-Param-Region (2026-07-28), non-ASCII included.
    assert (await client.call_tool("regional", {"region": "Zürich", "query": "q"})).text == "Zürich: q"
    assert (await client.call_tool("regional", {"query": "q"})).text == "anywhere: q"


async def test_client_progress_reaches_the_callback(client: Client) -> None:
    progress: list[tuple[Any, ...]] = []
    result = await client.call_tool("countdown", {"n": 3}, progress=lambda *args: progress.append(args))
    assert result.text == "liftoff"
    assert progress == [(1, 3, "2 left"), (2, 3, "1 left"), (3, 3, "0 left")]
    paced: list[tuple[Any, ...]] = []
    assert (
        await client.call_tool("steps", {"n": 3, "delay": 0.02}, progress=lambda *a: paced.append(a))
    ).text == "3 steps"
    assert [step[:2] for step in paced] == [(1, 3), (2, 3), (3, 3)]


async def test_client_answers_elicitation_and_sampling(client: Client, protocol: str | None, heard: Heard) -> None:
    asked = await client.call_tool("ask")
    if protocol == "2025-03-26":  # elicitation came in 2025-06-18
        assert asked.is_error and "elicitation" in asked.text and heard.elicited == []
    else:
        assert asked.text == "Hello, Ada!"
        [question] = heard.elicited
        assert question["message"] == "Your name?"
    summary = await client.call_tool("summarize", {"text": "cats"})
    assert summary.text == "summary: short"
    [request] = heard.sampled
    assert request["messages"][0]["content"]["text"] == "Summarize: cats" and request["maxTokens"] == 20


async def test_client_receives_log_messages(client: Client, heard: Heard) -> None:
    assert (await client.call_tool("chatty")).text == "said"
    assert await wait_until(lambda: heard.logs)
    await asyncio.sleep(0.05)
    assert heard.logs == [{"level": "info", "data": "hello over HTTP"}]


async def test_client_follows_a_stream_the_server_let_go(client: Client) -> None:
    """``ctx.close_stream()`` ends the response's connection in 2025-11-25 sessions; the client
    waits the announced delay and resumes with Last-Event-ID (elsewhere nothing changes)."""
    progress: list[tuple[Any, ...]] = []
    result = await client.call_tool("polled", progress=lambda *args: progress.append(args))
    assert result.text == "polled"
    assert progress == [(1, 2, "before"), (2, 2, "after")]


async def test_client_concurrent_calls_keep_their_answers_apart(client: Client) -> None:
    seen: dict[int, list[Any]] = {n: [] for n in range(1, 5)}
    calls = [client.call_tool("countdown", {"n": n}, progress=lambda *a, n=n: seen[n].append(a[0])) for n in seen]
    echoes = [client.call_tool("echo", {"text": f"#{i}"}) for i in range(30)]
    results = await asyncio.gather(*calls, *echoes)
    assert [r.text for r in results[: len(calls)]] == ["liftoff"] * len(calls)
    assert [r.text for r in results[len(calls) :]] == [f"#{i}" for i in range(30)]
    assert seen == {n: list(range(1, n + 1)) for n in seen}


async def test_client_cancelling_a_call_stops_it_on_the_server(client: Client, tmp_path: Path) -> None:
    marker = tmp_path / "cancelled"
    call = asyncio.ensure_future(client.call_tool("slow", {"seconds": 30, "marker": str(marker)}))
    await asyncio.sleep(0.3)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await wait_until(marker.exists), "the server went on with the cancelled call"
    assert (await client.call_tool("echo", {"text": "still here"})).text == "still here"


async def test_client_timeout_raises_and_cancels_on_the_server(client: Client, tmp_path: Path) -> None:
    marker = tmp_path / "timed-out"
    started = time.monotonic()
    with pytest.raises(RequestTimeout, match=r"tool 'slow' did not answer within 0\.3 s"):
        await client.call_tool("slow", {"seconds": 30, "marker": str(marker)}, timeout=0.3)
    assert time.monotonic() - started < 2
    assert await wait_until(marker.exists), "the server went on with the call that timed out"
    assert (await client.call_tool("echo", {"text": "after"})).text == "after"


# -- resources, prompts, completion, subscriptions ---------------------------------------------


async def test_client_reads_resources_templates_and_prompts(library: str, protocol: str | None) -> None:
    async with connect(library, protocol) as client:
        uris = [resource.uri for resource in await client.list_resources()]
        assert uris[:4] == ["library://readme", "library://logo", "library://catalog", "library://shelves"]
        [readme] = await client.read_resource("library://readme")
        assert (readme.mime_type, readme.text) == ("text/markdown", "# The library\nAsk for books by id.")
        [logo] = await client.read_resource("library://logo")
        assert logo.bytes().startswith(b"\x89PNG")
        templates = {template.uri_template for template in await client.list_resource_templates()}
        assert "library://books/{id}" in templates
        [book] = await client.read_resource("library://books/10")
        assert book.text == "Beloved"
        prompts = {prompt.name for prompt in await client.list_prompts()}
        assert {"recommend", "cover", "ask-name"} <= prompts
        rendered = await client.get_prompt("recommend", {"genre": "poetry", "count": 2})
        assert rendered.messages[0].content.text == "Recommend 2 poetry book(s) for adults."  # type: ignore[union-attr]
        genres = await client.complete("genre", "f", prompt="recommend")
        assert genres.values == ["fantasy", "fiction"]
        ids = await client.complete("id", "1", resource_template="library://books/{id}")
        assert ids.values == ["1", "10"]


async def test_client_hears_resource_updates_and_list_changes(library: str, protocol: str | None) -> None:
    heard = Heard()
    async with connect(library, protocol, heard) as client:
        await client.subscribe_resource("library://readme")
        assert (await client.call_tool("change", {"uri": "library://logo"})).text == "changed"
        assert (await client.call_tool("change", {"uri": "library://readme"})).text == "changed"
        assert await wait_until(lambda: heard.updated == ["library://readme"] and heard.prompts_changed == 2), (
            heard.updated,
            heard.prompts_changed,
        )
        await client.unsubscribe_resource("library://readme")
        await client.call_tool("change", {"uri": "library://readme"})
        assert await wait_until(lambda: heard.prompts_changed == 3)
        await asyncio.sleep(0.1)
        assert heard.updated == ["library://readme"]


# -- sessions that end -------------------------------------------------------------------------


def without_get_streams(app: Any) -> Any:
    """``app``, but offering no GET stream (405), as the specification lets a server do."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "GET":
            await send({"type": "http.response.start", "status": 405, "headers": [(b"allow", b"POST, DELETE")]})
            await send({"type": "http.response.body", "body": b""})
            return
        await app(scope, receive, send)

    return wrapped


@pytest.mark.parametrize("protocol", ["2025-11-25", "2025-03-26"])
async def test_client_reopens_a_session_that_expired_and_the_call_succeeds(protocol: str) -> None:
    """The server ends the idle session; the next call meets 404, the client runs the
    handshake again and sends the call once more. (A session whose GET stream is open is
    not idle, so this server offers no GET stream: 405, as the specification allows.)"""
    app = fresh_server(STREAMING).http_app(session_idle_timeout=0.3)
    async with InProcess(without_get_streams(app)) as url, connect(url, protocol) as client:
        first = client.transport.session_id  # type: ignore[attr-defined]
        assert (await client.call_tool("echo", {"text": "before"})).text == "before"
        assert await wait_until(lambda: len(app.sessions) == 0), "the idle session did not expire"
        assert (await client.call_tool("echo", {"text": "after"})).text == "after"
        second = client.transport.session_id  # type: ignore[attr-defined]
        assert second not in (None, first) and list(app.sessions.sessions) == [second]


async def test_client_reopens_a_session_the_server_ended() -> None:
    app = fresh_server(STREAMING).http_app()
    async with InProcess(app) as url, connect(url, "2025-11-25") as client:
        first = client.transport.session_id  # type: ignore[attr-defined]
        await app.sessions.end(first)
        assert (await client.call_tool("echo", {"text": "again"})).text == "again"
        assert client.transport.session_id not in (None, first)  # type: ignore[attr-defined]
        progress: list[Any] = []
        assert (
            await client.call_tool("countdown", {"n": 2}, progress=lambda *a: progress.append(a[0]))
        ).text == "liftoff"
        assert progress == [1, 2]


async def test_client_still_hears_list_changes_after_its_session_was_reopened() -> None:
    """A re-opened session is a whole session: the client listens on its GET stream again."""
    heard = Heard()
    app = fresh_server(STREAMING).http_app()
    async with InProcess(app) as url, connect(url, "2025-11-25", heard) as client:
        await client.call_tool("toggle")
        assert await wait_until(lambda: heard.tools_changed == 1)
        await app.sessions.end(client.transport.session_id)  # type: ignore[attr-defined]
        assert (await client.call_tool("toggle")).text == "removed"
        assert await wait_until(lambda: heard.tools_changed == 2, 3), (
            "no list change reached the client after it re-opened its session"
        )


async def test_client_ends_its_session_when_it_closes() -> None:
    app = fresh_server(STREAMING).http_app()
    async with InProcess(app) as url:
        async with connect(url, "2025-11-25") as client:
            assert len(app.sessions) == 1
            await client.call_tool("echo", {"text": "x"})
        assert len(app.sessions) == 0  # DELETE


def recording(app: Any, seen: list[tuple[str, dict[str, str]]]) -> Any:
    """``app``, noting the method and headers of every request."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            seen.append((scope["method"], {k.decode().lower(): v.decode() for k, v in scope["headers"]}))
        await app(scope, receive, send)

    return wrapped


@pytest.mark.parametrize("protocol", [None, "2025-11-25"], ids=["modern", "2025-11-25"])
async def test_client_sends_the_headers_the_transport_requires(protocol: str | None) -> None:
    seen: list[tuple[str, dict[str, str]]] = []
    app = fresh_server(STREAMING).http_app()
    async with (
        InProcess(recording(app, seen)) as url,
        connect(url, protocol, headers={"Authorization": "Bearer t0ken"}) as client,
    ):
        await client.call_tool("regional", {"region": "eu-west1", "query": "q"})
        await client.read_resource("streaming://note")
        await client.get_prompt("greeting", {"name": "Ada"})
    assert all(headers.get("authorization") == "Bearer t0ken" for _, headers in seen)
    posts = [headers for method, headers in seen if method == "POST"]
    assert all("application/json" in h["accept"] and "text/event-stream" in h["accept"] for h in posts)
    assert all(h["content-type"].startswith("application/json") for h in posts)
    if protocol is None:
        assert {method for method, _ in seen} == {"POST"}
        assert all(
            h["mcp-protocol-version"] == MODERN and "mcp-method" in h and "mcp-session-id" not in h for h in posts
        )
        named = {h["mcp-method"]: h.get("mcp-name") for h in posts if h["mcp-method"] != "tools/list"}
        assert named["tools/call"] == "regional" and named["resources/read"] == "streaming://note"
        assert named["prompts/get"] == "greeting"
        [call] = [h for h in posts if h["mcp-method"] == "tools/call"]
        assert call["mcp-param-region"] == "eu-west1"
        return
    first, *later = seen
    assert first[0] == "POST" and "mcp-session-id" not in first[1]
    session = later[0][1]["mcp-session-id"]
    assert all(h.get("mcp-session-id") == session and h.get("mcp-protocol-version") == protocol for _, h in later)
    gets = [h for method, h in later if method == "GET"]
    assert gets and all("text/event-stream" in h["accept"] for h in gets)
    assert later[-1][0] == "DELETE"  # the session is ended when the client closes


# -- servers that are not there ----------------------------------------------------------------


async def test_client_of_a_server_that_is_down_raises_connection_closed(protocol: str | None) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    started = time.monotonic()
    with pytest.raises(ConnectionClosed, match="cannot reach"):
        async with connect(url, protocol):
            pass
    assert time.monotonic() - started < 3


@pytest.mark.parametrize("tool", ["slow", "steps"])
async def test_client_of_a_server_that_dies_mid_call_raises_connection_closed(protocol: str | None, tool: str) -> None:
    """``slow`` answers nothing until it is done; ``steps`` streams progress first."""
    arguments = {"seconds": 30} if tool == "slow" else {"n": 100, "delay": 0.1}
    with toolwire_http(STREAMING) as (url, process):
        async with connect(url, protocol) as client:
            call = asyncio.ensure_future(client.call_tool(tool, arguments, progress=lambda *a: None))
            await asyncio.sleep(0.4)
            process.kill()
            started = time.monotonic()
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(call, 10)
            assert time.monotonic() - started < 3
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(client.call_tool("echo", {"text": "x"}), 10)


# -- the command line --------------------------------------------------------------------------


def test_command_line_against_a_url(streaming: str, library: str) -> None:
    down = f"http://127.0.0.1:{free_port()}/mcp"
    modern, legacy, old, listed, read, unreachable = toolwire_all(
        ["call", streaming, "echo", "text=hi"],
        ["call", streaming, "echo", "text=héllo", "--protocol", "2025-11-25"],
        ["call", streaming, "countdown", "n=2", "--protocol", "2025-03-26"],
        ["tools", streaming, "--json"],
        ["read", library, "library://books/2"],
        ["call", down, "echo", "text=hi"],
    )
    assert (modern.returncode, modern.stdout) == (0, "hi\n"), modern.stderr
    assert (legacy.returncode, legacy.stdout) == (0, "héllo\n"), legacy.stderr
    assert (old.returncode, old.stdout) == (0, "liftoff\n"), old.stderr
    assert listed.returncode == 0 and '"name": "regional"' in listed.stdout
    assert (read.returncode, read.stdout) == (0, "Emma\n"), read.stderr
    assert failed(unreachable, 1).startswith(f"toolwire: cannot reach {down}")
