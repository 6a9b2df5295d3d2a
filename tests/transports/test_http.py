"""Streamable HTTP on the wire: raw requests over real sockets on 127.0.0.1, their statuses,
headers and bodies checked against the transport's specification in both eras.

The servers are real processes (``python -m toolwire run FILE --http PORT``), one per kind,
shared by the module: ``tests/servers/library.py`` (resources, subscriptions, list changes,
an eliciting resource) and ``tests/servers/streaming.py`` (progress, pauses, polling,
elicitation, cancellation markers, an ``x-mcp-header`` parameter), the latter also with
``--stateless``, and the library with ``--allow-host``. Tests that look at the server's
state serve a fresh app in this process with uvicorn.
"""

from __future__ import annotations

import asyncio
import base64
import re
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.support.httpserve import (
    BASE,
    LEGACY,
    LIBRARY,
    MODERN,
    STREAMING,
    Event,
    InProcess,
    fresh_server,
    initialize,
    legacy_call,
    meta,
    modern_call,
    modern_headers,
    open_session,
    parse_sse,
    read_sse,
    refusal,
    sse_messages,
    toolwire_http,
)

SSE_ACCEPT = {"Accept": "text/event-stream"}


@pytest.fixture(scope="module")
def library() -> Iterator[str]:
    with toolwire_http(LIBRARY) as (url, _):
        yield url


@pytest.fixture(scope="module")
def streaming() -> Iterator[str]:
    with toolwire_http(STREAMING) as (url, _):
        yield url


@pytest.fixture(scope="module")
def stateless() -> Iterator[str]:
    with toolwire_http(STREAMING, "--stateless") as (url, _):
        yield url


@pytest.fixture(scope="module")
def allowing() -> Iterator[str]:
    with toolwire_http(LIBRARY, "--allow-host", "mcp.example") as (url, _):
        yield url


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


def text_of(answer: dict[str, Any]) -> str:
    """The text of a tools/call answer's only content block."""
    [block] = answer["result"]["content"]
    return block["text"]  # type: ignore[no-any-return]


async def next_event(events: AsyncIterator[Event], timeout: float = 5.0) -> Event:
    return await asyncio.wait_for(anext(events), timeout)


async def next_message(events: AsyncIterator[Event], timeout: float = 5.0) -> Any:
    """The next event that carries a message (priming events skipped)."""
    while True:
        event = await next_event(events, timeout)
        if event.data:
            return event.message


async def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def started(marker: Path) -> Callable[[], bool]:
    """Whether the ``slow`` call given ``marker`` has begun (it touches ``marker.started``)."""
    return Path(f"{marker}.started").exists


class Listener:
    """A GET stream read in the background: its status and the messages it carried."""

    def __init__(self, http: httpx.AsyncClient, url: str, headers: dict[str, str]) -> None:
        self.http = http
        self.url = url
        self.headers = {**headers, **SSE_ACCEPT}
        self.status: int | None = None
        self.body = b""
        self.events: list[Event] = []
        self.messages: list[Any] = []
        self.opened = asyncio.Event()
        self.ended = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        try:
            async with self.http.stream("GET", self.url, headers=self.headers) as reply:
                self.status = reply.status_code
                self.opened.set()
                if reply.status_code != 200:
                    self.body = await reply.aread()
                    return
                async for event in read_sse(reply):
                    self.events.append(event)
                    if event.data:
                        self.messages.append(event.message)
        finally:
            self.opened.set()
            self.ended.set()

    def methods(self) -> list[str]:
        return [message.get("method") for message in self.messages]

    async def __aenter__(self) -> Listener:
        self._task = asyncio.create_task(self._run())
        await asyncio.wait_for(self.opened.wait(), 5)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


# == 2025-03-26 … 2025-11-25: sessions ========================================================


async def test_initialize_mints_a_visible_ascii_session_id(streaming: str, http: httpx.AsyncClient) -> None:
    seen = set()
    for version in ("2025-03-26", "2025-06-18", "2025-11-25"):
        # A 2025-03-26 client sends no MCP-Protocol-Version header (the header came in 2025-06-18).
        headers = BASE if version == "2025-03-26" else {**BASE, "MCP-Protocol-Version": version}
        reply = await http.post(streaming, json=initialize(version), headers=headers)
        assert reply.status_code == 200 and reply.headers["content-type"] == "application/json"
        assert reply.json()["result"]["protocolVersion"] == version
        session = reply.headers["mcp-session-id"]
        assert re.fullmatch(r"[\x21-\x7e]{16,}", session), session
        seen.add(session)
        initialized = await http.post(
            streaming,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers={**headers, "Mcp-Session-Id": session},
        )
        assert (initialized.status_code, initialized.content) == (202, b"")
        assert "mcp-session-id" not in initialized.headers
    assert len(seen) == 3


async def test_refused_initialize_mints_no_session(streaming: str, http: httpx.AsyncClient) -> None:
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": "not an object"}
    reply = await http.post(streaming, json=body, headers={**BASE, "MCP-Protocol-Version": LEGACY})
    assert reply.json()["error"]["code"] == -32602
    assert "mcp-session-id" not in reply.headers


async def test_plain_call_is_answered_with_one_json_object(streaming: str, http: httpx.AsyncClient) -> None:
    headers = await open_session(http, streaming)
    reply = await http.post(streaming, json=legacy_call("echo", {"text": "héllo ✓"}, id=5), headers=headers)
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/json"
    assert reply.json() == {"jsonrpc": "2.0", "id": 5, "result": {"content": [{"type": "text", "text": "héllo ✓"}]}}


async def test_call_that_reports_progress_streams_it_before_the_answer(streaming: str, http: httpx.AsyncClient) -> None:
    headers = await open_session(http, streaming)
    reply = await http.post(
        streaming, json=legacy_call("countdown", {"n": 2}, id=6, progressToken="p"), headers=headers
    )
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(reply.text)
    ids = [event.id for event in events if event.id is not None]
    assert len(ids) == len(set(ids))  # event ids, where given, are unique
    progress, more, answer = (event.message for event in events if event.data)
    assert progress == {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "p", "progress": 1, "total": 2, "message": "1 left"},
    }
    assert more["params"]["progress"] == 2
    assert answer == {"jsonrpc": "2.0", "id": 6, "result": {"content": [{"type": "text", "text": "liftoff"}]}}


async def test_stream_that_stays_open_starts_with_a_priming_event(streaming: str, http: httpx.AsyncClient) -> None:
    """2025-11-25: an event with an id and empty data comes first, so that the client has an
    id to resume from before any message was sent."""
    headers = await open_session(http, streaming)
    body = legacy_call("steps", {"n": 2, "delay": 0.1}, id=7, progressToken="p")
    async with http.stream("POST", streaming, json=body, headers=headers) as reply:
        assert reply.headers["content-type"].startswith("text/event-stream")
        events = read_sse(reply)
        priming = await next_event(events)
        assert priming.id and priming.data == ""
        rest = [event async for event in events]
    assert all(event.id for event in rest) and len({priming.id, *(event.id for event in rest)}) == 1 + 3
    assert rest[-1].message["result"]["content"][0]["text"] == "2 steps"


async def test_request_without_a_session_is_400(streaming: str, http: httpx.AsyncClient) -> None:
    for method in ("tools/list", "ping"):
        body = {"jsonrpc": "2.0", "id": 1, "method": method}
        error = refusal(await http.post(streaming, json=body, headers={**BASE, "MCP-Protocol-Version": LEGACY}), 400)
        assert "Mcp-Session-Id" in error["message"] and "initialize" in error["message"]
    refusal(await http.get(streaming, headers={**SSE_ACCEPT, "MCP-Protocol-Version": LEGACY}), 400)


async def test_unknown_session_is_404(streaming: str, http: httpx.AsyncClient) -> None:
    headers = {**BASE, "MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": "no-such-session"}
    error = refusal(await http.post(streaming, json=legacy_call("echo", {"text": "x"}, id=9), headers=headers), 404)
    assert "initialize" in error["message"]
    refusal(await http.get(streaming, headers={**headers, **SSE_ACCEPT}), 404)
    refusal(await http.delete(streaming, headers=headers), 404)


@pytest.mark.parametrize("version", [LEGACY, "2025-03-26"])
async def test_delete_ends_the_session_its_streams_and_its_calls(
    streaming: str, http: httpx.AsyncClient, tmp_path: Path, version: str
) -> None:
    """The call in flight runs in its POST's own task (Python 3.11): the session's end
    cancels it without waiting for that task, whose stream ends with the session."""
    headers = await open_session(http, streaming, version)
    marker = tmp_path / "cancelled"
    call = asyncio.create_task(
        http.post(streaming, json=legacy_call("slow", {"seconds": 30, "marker": str(marker)}), headers=headers)
    )
    async with Listener(http, streaming, headers) as listener:
        assert listener.status == 200
        assert await wait_until(started(marker))
        ended = await http.delete(streaming, headers=headers)
        assert ended.status_code == 200
        await asyncio.wait_for(listener.ended.wait(), 5)  # the GET stream ends with the session
    assert await wait_until(marker.exists), "the call in flight went on after its session ended"
    # Its POST ends too, and not with a bare 500.
    done, _ = await asyncio.wait({call}, timeout=3)
    assert done, "the POST of a call of the ended session is still open"
    ended = call.result()
    assert ended.status_code != 500, ended.text
    if ended.status_code >= 400:
        refusal(ended, ended.status_code)
    refusal(await http.post(streaming, json=legacy_call("echo", {"text": "x"}), headers=headers), 404)
    refusal(await http.get(streaming, headers={**headers, **SSE_ACCEPT}), 404)
    refusal(await http.delete(streaming, headers=headers), 404)


async def test_get_stream_carries_list_changes_and_subscribed_resource_updates(
    library: str, http: httpx.AsyncClient
) -> None:
    """Messages that belong to no request go to the session's GET stream, and only to the
    sessions they concern: every session hears that the prompt list changed, only the one
    that subscribed hears that the resource was updated."""
    watcher = await open_session(http, library)
    other = await open_session(http, library)
    subscribed = await http.post(
        library,
        json={"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": "library://readme"}},
        headers=watcher,
    )
    assert subscribed.json() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    async with Listener(http, library, watcher) as mine, Listener(http, library, other) as theirs:
        assert (mine.status, theirs.status) == (200, 200)
        changed = await http.post(
            library, json=legacy_call("change", {"uri": "library://readme"}, id=3), headers=watcher
        )
        # The tool's own answer is plain JSON: the notifications are not on its stream.
        assert changed.headers["content-type"] == "application/json" and text_of(changed.json()) == "changed"
        assert await wait_until(lambda: len(mine.messages) == 2), mine.messages
        assert await wait_until(lambda: len(theirs.messages) == 1), theirs.messages
        await asyncio.sleep(0.1)
    assert sorted(mine.messages, key=lambda m: m["method"]) == [
        {"jsonrpc": "2.0", "method": "notifications/prompts/list_changed", "params": {}},
        {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "library://readme"}},
    ]
    assert theirs.messages == [{"jsonrpc": "2.0", "method": "notifications/prompts/list_changed", "params": {}}]
    # No event of a GET stream is a response.
    assert all("id" not in message for message in mine.messages + theirs.messages)


async def test_second_get_stream_on_a_session_is_409(streaming: str, http: httpx.AsyncClient) -> None:
    headers = await open_session(http, streaming)
    async with Listener(http, streaming, headers) as first:
        assert first.status == 200
        error = refusal(await http.get(streaming, headers={**headers, **SSE_ACCEPT}), 409)
        assert "GET stream" in error["message"]
        await http.post(streaming, json=legacy_call("toggle"), headers=headers)
        assert await wait_until(lambda: "notifications/tools/list_changed" in first.methods())


async def test_get_stream_resumes_with_what_was_sent_while_it_was_away(streaming: str, http: httpx.AsyncClient) -> None:
    headers = await open_session(http, streaming)
    async with http.stream("GET", streaming, headers={**headers, **SSE_ACCEPT}) as reply:
        priming = await next_event(read_sse(reply))
    assert priming.id and priming.data == ""
    await http.post(streaming, json=legacy_call("toggle"), headers=headers)
    async with http.stream("GET", streaming, headers={**headers, **SSE_ACCEPT, "Last-Event-ID": priming.id}) as resumed:
        assert resumed.status_code == 200
        missed = await next_message(read_sse(resumed))
    assert missed == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}}


async def test_get_stream_whose_connection_dropped_can_be_opened_again(streaming: str, http: httpx.AsyncClient) -> None:
    """The client closed its GET stream (or lost it); a new GET opens a new one, which then
    carries the session's messages (the specification lets either side close it at any time)."""
    headers = await open_session(http, streaming)
    async with http.stream("GET", streaming, headers={**headers, **SSE_ACCEPT}) as reply:
        assert reply.status_code == 200
        await next_event(read_sse(reply))
    deadline = time.monotonic() + 20
    while True:  # 409 until the server has seen the first one's connection go
        async with Listener(http, streaming, headers) as again:
            if again.status == 409 and time.monotonic() < deadline:
                continue
            assert again.status == 200, again.body
            await http.post(streaming, json=legacy_call("toggle"), headers=headers)
            assert await wait_until(lambda: "notifications/tools/list_changed" in again.methods())
            break


async def test_missing_protocol_version_header_means_the_negotiated_version_else_2025_03_26(
    streaming: str, stateless: str, http: httpx.AsyncClient
) -> None:
    batch = [legacy_call("echo", {"text": "one"}, id=1), legacy_call("add", {"a": 1, "b": 2}, id=2)]
    # A session knows its version from the handshake: requests without the header are served
    # in it (2025-11-25: no batches).
    headers = await open_session(http, streaming, "2025-11-25")
    del headers["MCP-Protocol-Version"]
    reply = await http.post(streaming, json=legacy_call("echo", {"text": "no header"}), headers=headers)
    assert text_of(reply.json()) == "no header"
    refusal(await http.post(streaming, json=batch, headers=headers), 400, -32600)
    # Without a session, a request without the header is a 2025-03-26 one: batches are allowed.
    reply = await http.post(stateless, json=batch, headers=BASE)
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/json"
    assert sorted(answer["id"] for answer in reply.json()) == [1, 2]
    refusal(await http.post(stateless, json=batch, headers={**BASE, "MCP-Protocol-Version": "2025-11-25"}), 400)


async def test_unsupported_protocol_version_header_is_400(streaming: str, http: httpx.AsyncClient) -> None:
    headers = await open_session(http, streaming)
    error = refusal(
        await http.post(
            streaming,
            json=legacy_call("echo", {"text": "x"}),
            headers={**headers, "MCP-Protocol-Version": "1999-01-01"},
        ),
        400,
    )
    assert "1999-01-01" in error["message"]
    refusal(await http.post(streaming, json=initialize(), headers={**BASE, "MCP-Protocol-Version": "1999-01-01"}), 400)
    reply = await http.post(streaming, json=legacy_call("echo", {"text": "still here"}), headers=headers)
    assert text_of(reply.json()) == "still here"


async def test_2025_03_26_batch_is_answered_with_one_json_array(streaming: str, http: httpx.AsyncClient) -> None:
    headers = await open_session(http, streaming, "2025-03-26")
    batch = [legacy_call("echo", {"text": "one"}, id=1), legacy_call("add", {"a": 20, "b": 22}, id=2)]
    reply = await http.post(streaming, json=batch, headers=headers)
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/json"
    answers = {answer["id"]: answer for answer in reply.json()}
    assert text_of(answers[1]) == "one" and text_of(answers[2]) == "42"
    # A batch of notifications only is accepted with 202 and no body.
    notices = [{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "x", "progress": 1}}]
    accepted = await http.post(streaming, json=notices, headers=headers)
    assert (accepted.status_code, accepted.content) == (202, b"")


async def test_batches_are_refused_after_2025_03_26(streaming: str, http: httpx.AsyncClient) -> None:
    headers = await open_session(http, streaming, "2025-06-18")
    batch = [legacy_call("echo", {"text": "one"}, id=1), legacy_call("echo", {"text": "two"}, id=2)]
    error = refusal(await http.post(streaming, json=batch, headers=headers), 400, -32600)
    assert "batch" in error["message"]


@pytest.mark.parametrize("kind", ["tool", "resource"])
async def test_server_request_is_answered_by_a_post_and_the_result_follows_on_the_call_stream(
    kind: str, request: pytest.FixtureRequest, http: httpx.AsyncClient
) -> None:
    """The server asks (elicitation/create) on the stream of the request it serves; the client
    POSTs its answer (202, no body) and the request's result then arrives on that stream."""
    if kind == "tool":
        url = request.getfixturevalue("streaming")
        body, answer, expected = legacy_call("ask", id=7), {"name": "Ada"}, "Hello, Ada!"
    else:
        url = request.getfixturevalue("library")
        body = {"jsonrpc": "2.0", "id": 7, "method": "resources/read", "params": {"uri": "library://secret"}}
        answer, expected = {"password": "open sesame"}, "the treasure"
    headers = await open_session(http, url, capabilities={"elicitation": {"form": {}}})
    async with Listener(http, url, headers) as listener, http.stream("POST", url, json=body, headers=headers) as reply:
        assert reply.headers["content-type"].startswith("text/event-stream")
        events = read_sse(reply)
        question = await next_message(events)
        assert question["method"] == "elicitation/create" and "id" in question
        posted = await http.post(
            url,
            json={"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": answer}},
            headers=headers,
        )
        assert (posted.status_code, posted.content) == (202, b"")
        result = await next_message(events)
        assert result["id"] == 7
        if kind == "tool":
            assert text_of(result) == expected
        else:
            assert result["result"]["contents"][0]["text"] == expected
        assert listener.messages == []  # the question went on the request's stream, not the GET stream


async def test_a_session_cannot_answer_another_sessions_question(streaming: str, http: httpx.AsyncClient) -> None:
    asked = await open_session(http, streaming, capabilities={"elicitation": {"form": {}}})
    intruder = await open_session(http, streaming, capabilities={"elicitation": {"form": {}}})
    async with http.stream("POST", streaming, json=legacy_call("ask", id=4), headers=asked) as reply:
        events = read_sse(reply)
        question = await next_message(events)
        forged = {
            "jsonrpc": "2.0",
            "id": question["id"],
            "result": {"action": "accept", "content": {"name": "Mallory"}},
        }
        await http.post(streaming, json=forged, headers=intruder)
        genuine = {"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"name": "Ada"}}}
        assert (await http.post(streaming, json=genuine, headers=asked)).status_code == 202
        assert text_of(await next_message(events)) == "Hello, Ada!"


@pytest.mark.parametrize("moment", ["while_the_call_runs", "after_the_call_ended"])
async def test_stream_resumes_after_a_disconnect_with_last_event_id(
    moment: str, streaming: str, http: httpx.AsyncClient, tmp_path: Path
) -> None:
    headers = await open_session(http, streaming)
    over = tmp_path / "over"
    body = legacy_call("steps", {"n": 3, "delay": 0.15, "marker": str(over)}, id=8, progressToken="s")
    async with http.stream("POST", streaming, json=body, headers=headers) as reply:
        events = read_sse(reply)
        priming = await next_event(events)
        assert priming.id and priming.data == ""
        first = await next_event(events)
        assert first.id and first.message["params"]["progress"] == 1
    # The connection is gone; the stream is not.
    if moment == "after_the_call_ended":
        assert await wait_until(over.exists, timeout=30)
    resumed = await http.get(streaming, headers={**headers, **SSE_ACCEPT, "Last-Event-ID": first.id})
    assert resumed.status_code == 200
    rest = parse_sse(resumed.text)
    assert [event.message.get("params", {}).get("progress") for event in rest[:2]] == [2, 3]
    assert rest[-1].message == {"jsonrpc": "2.0", "id": 8, "result": {"content": [{"type": "text", "text": "3 steps"}]}}
    ids = [event.id for event in rest]
    assert len(rest) == 3 and all(ids) and len(set(ids)) == 3 and not {priming.id, first.id} & set(ids)


async def test_a_stream_resumed_before_its_old_connection_is_seen_gone_goes_on_on_the_new_one(
    streaming: str, http: httpx.AsyncClient
) -> None:
    """Under load the GET that resumes a stream can reach the server before it notices that the
    POST's connection dropped: noticing it then leaves the GET attached."""
    headers = await open_session(http, streaming, capabilities={"elicitation": {"form": {}}})
    post = http.stream("POST", streaming, json=legacy_call("ask", id=11), headers=headers)
    reply = await post.__aenter__()
    events = read_sse(reply)
    assert (await next_event(events)).data == ""  # priming
    question = await next_event(events)  # the tool waits for its answer: the call runs on
    assert question.id and question.message["method"] == "elicitation/create"
    resuming = {**headers, **SSE_ACCEPT, "Last-Event-ID": question.id}
    async with http.stream("GET", streaming, headers=resuming) as resumed:
        assert resumed.status_code == 200  # the stream is the GET's now; the POST's connection is still open
        await post.__aexit__(None, None, None)  # now it drops
        ping = await http.post(streaming, json={"jsonrpc": "2.0", "id": 12, "method": "ping"}, headers=headers)
        assert ping.status_code == 200  # a round trip: the server has seen the POST's connection go
        answer = {
            "jsonrpc": "2.0",
            "id": question.message["id"],
            "result": {"action": "accept", "content": {"name": "Ada"}},
        }
        assert (await http.post(streaming, json=answer, headers=headers)).status_code == 202
        result = await next_message(read_sse(resumed), timeout=30)
    assert result == {"jsonrpc": "2.0", "id": 11, "result": {"content": [{"type": "text", "text": "Hello, Ada!"}]}}


async def test_close_stream_ends_the_connection_with_a_retry_and_the_rest_comes_on_resume(
    streaming: str, http: httpx.AsyncClient
) -> None:
    """The tool reports a step and calls ``ctx.close_stream()``: the response ends early with a
    ``retry`` field; a GET with the last event id gets what was not yet sent, each once."""
    headers = await open_session(http, streaming)
    started = time.monotonic()
    reply = await http.post(streaming, json=legacy_call("polled", id=9, progressToken="q"), headers=headers)
    assert time.monotonic() - started < 0.25  # the tool still runs: the response did not wait for it
    events = parse_sse(reply.text)
    assert events[0].id and events[0].data == ""
    assert events[-1].retry is not None and events[-1].retry > 0  # how long to wait before reconnecting
    last = [event.id for event in events if event.id][-1]
    resumed = await http.get(streaming, headers={**headers, **SSE_ACCEPT, "Last-Event-ID": last})
    messages = [event.message for event in events if event.data] + sse_messages(resumed)
    assert [m["params"]["message"] for m in messages[:-1]] == ["before", "after"]
    assert messages[-1] == {"jsonrpc": "2.0", "id": 9, "result": {"content": [{"type": "text", "text": "polled"}]}}


async def test_resuming_never_replays_another_sessions_stream(streaming: str, http: httpx.AsyncClient) -> None:
    mine = await open_session(http, streaming)
    theirs = await open_session(http, streaming)
    body = legacy_call("steps", {"n": 2, "delay": 0.05}, progressToken="t")
    async with http.stream("POST", streaming, json=body, headers=mine) as reply:
        first_id = (await next_event(read_sse(reply))).id
    assert first_id is not None
    async with http.stream("GET", streaming, headers={**theirs, **SSE_ACCEPT, "Last-Event-ID": first_id}) as resumed:
        if resumed.status_code == 200:
            with pytest.raises(TimeoutError):
                await next_message(read_sse(resumed), timeout=0.3)
        else:
            await resumed.aread()
            refusal(resumed, resumed.status_code)
            assert 400 <= resumed.status_code < 500


async def test_disconnecting_does_not_cancel_a_legacy_call_but_notifications_cancelled_does(
    streaming: str, http: httpx.AsyncClient, tmp_path: Path
) -> None:
    headers = await open_session(http, streaming)
    kept, cancelled = tmp_path / "kept", tmp_path / "cancelled"
    dropped = asyncio.create_task(
        http.post(streaming, json=legacy_call("slow", {"seconds": 0.5, "marker": str(kept)}, id=10), headers=headers)
    )
    assert await wait_until(started(kept))
    dropped.cancel()
    await asyncio.gather(dropped, return_exceptions=True)
    running = asyncio.create_task(
        http.post(
            streaming, json=legacy_call("slow", {"seconds": 30, "marker": str(cancelled)}, id=11), headers=headers
        )
    )
    assert await wait_until(started(cancelled))
    notice = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 11, "reason": "changed my mind"},
    }
    accepted = await http.post(streaming, json=notice, headers=headers)
    assert (accepted.status_code, accepted.content) == (202, b"")
    assert await wait_until(cancelled.exists), "notifications/cancelled did not stop the call"
    # The cancelled call gets no answer, but its POST ends rather than hang until the session does.
    done, _ = await asyncio.wait({running}, timeout=2)
    assert done, "the POST of the cancelled call is still open"
    ended = running.result()
    assert ended.status_code < 500, (ended.status_code, ended.text)
    assert "result" not in ended.text
    await asyncio.sleep(0.3)
    assert not kept.exists(), "a dropped connection cancelled the call"


async def test_idle_session_expires_and_is_then_404() -> None:
    app = fresh_server(STREAMING).http_app(session_idle_timeout=0.3)
    async with InProcess(app) as url, httpx.AsyncClient(timeout=10) as http:
        idle = await open_session(http, url)
        busy = await open_session(http, url)
        for _ in range(8):
            await asyncio.sleep(0.1)
            assert (
                await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=busy)
            ).status_code == 200
        refusal(await http.post(url, json=legacy_call("echo", {"text": "x"}), headers=idle), 404)
        assert len(app.sessions) == 1


# == stateless legacy mode (--stateless) ======================================================


async def test_stateless_mode_mints_no_session_and_serves_each_post_alone(
    stateless: str, http: httpx.AsyncClient
) -> None:
    headers = {**BASE, "MCP-Protocol-Version": LEGACY}
    opened = await http.post(stateless, json=initialize(capabilities={"elicitation": {"form": {}}}), headers=headers)
    assert opened.status_code == 200 and "mcp-session-id" not in opened.headers
    initialized = await http.post(
        stateless, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    assert initialized.status_code == 202
    plain = await http.post(stateless, json=legacy_call("echo", {"text": "alone"}), headers=headers)
    assert text_of(plain.json()) == "alone" and "mcp-session-id" not in plain.headers
    stray = await http.post(
        stateless, json=legacy_call("echo", {"text": "ignored"}), headers={**headers, "Mcp-Session-Id": "made-up"}
    )
    assert text_of(stray.json()) == "ignored"
    streamed = await http.post(
        stateless, json=legacy_call("countdown", {"n": 2}, id=4, progressToken=1), headers=headers
    )
    messages = sse_messages(streamed)
    assert [m.get("method") for m in messages] == ["notifications/progress"] * 2 + [None]
    assert text_of(messages[-1]) == "liftoff"
    # Nothing is remembered from the handshake: this POST has no way to ask the client.
    asked = (await http.post(stateless, json=legacy_call("ask"), headers=headers)).json()
    assert asked["result"]["isError"] is True and "elicitation" in text_of(asked)


async def test_stateless_mode_refuses_get_and_delete_with_405_allowing_only_post(
    stateless: str, http: httpx.AsyncClient
) -> None:
    headers = {**BASE, "MCP-Protocol-Version": LEGACY, "Mcp-Session-Id": "whatever"}
    for reply in (
        await http.get(stateless, headers={**headers, **SSE_ACCEPT}),
        await http.delete(stateless, headers=headers),
    ):
        refusal(reply, 405)
        assert reply.headers["allow"] == "POST"


async def test_stateless_initialize_promises_no_notifications_it_cannot_send(
    stateless: str, http: httpx.AsyncClient
) -> None:
    """Without sessions there is no GET stream, so list changes and resource updates can never
    reach a legacy client: the capabilities must not promise them."""
    opened = await http.post(stateless, json=initialize(), headers={**BASE, "MCP-Protocol-Version": LEGACY})
    capabilities = opened.json()["result"]["capabilities"]
    assert not capabilities["tools"].get("listChanged"), capabilities
    assert not capabilities["resources"].get("listChanged"), capabilities
    assert not capabilities["resources"].get("subscribe"), capabilities


# == 2026-07-28 =================================================================================


async def test_modern_requests_never_carry_a_session_id(streaming: str, http: httpx.AsyncClient) -> None:
    for extra in ({}, {"Mcp-Session-Id": "from-an-old-client"}):
        reply = await http.post(
            streaming, json=modern_call("echo", {"text": "hi"}), headers=modern_headers("tools/call", "echo", **extra)
        )
        assert reply.status_code == 200 and "mcp-session-id" not in reply.headers
        assert reply.json()["result"]["content"] == [{"type": "text", "text": "hi"}]
        assert reply.json()["result"]["resultType"] == "complete"


async def test_modern_answers_are_json_or_a_stream_of_progress_then_the_answer(
    streaming: str, http: httpx.AsyncClient
) -> None:
    plain = await http.post(
        streaming, json=modern_call("add", {"a": 1, "b": 2}), headers=modern_headers("tools/call", "add")
    )
    assert plain.headers["content-type"] == "application/json" and plain.json()["result"]["structuredContent"] == 3
    streamed = await http.post(
        streaming,
        json=modern_call("countdown", {"n": 3}, id="c", progressToken="p"),
        headers=modern_headers("tools/call", "countdown"),
    )
    assert streamed.status_code == 200 and streamed.headers["x-accel-buffering"] == "no"
    messages = sse_messages(streamed)
    assert [m.get("method") for m in messages] == ["notifications/progress"] * 3 + [None]
    assert [m["params"]["progress"] for m in messages[:3]] == [1, 2, 3]
    assert messages[-1]["id"] == "c" and messages[-1]["result"]["content"][0]["text"] == "liftoff"


async def test_modern_get_and_delete_are_405(streaming: str, http: httpx.AsyncClient) -> None:
    headers = {"MCP-Protocol-Version": MODERN}
    for reply in (
        await http.get(streaming, headers={**headers, **SSE_ACCEPT}),
        await http.delete(streaming, headers=headers),
    ):
        refusal(reply, 405)
        assert "POST" in reply.headers["allow"]


async def test_modern_protocol_version_header_is_required_and_must_match_meta(
    streaming: str, http: httpx.AsyncClient
) -> None:
    headers = modern_headers("tools/call", "echo")
    del headers["MCP-Protocol-Version"]
    error = refusal(
        await http.post(streaming, json=modern_call("echo", {"text": "x"}, id=3), headers=headers), 400, -32020
    )
    assert "MCP-Protocol-Version" in error["message"]
    body = modern_call("echo", {"text": "x"}, id=4)
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2025-11-25"
    reply = await http.post(streaming, json=body, headers=modern_headers("tools/call", "echo"))
    error = refusal(reply, 400, -32020)
    assert "2025-11-25" in error["message"] and reply.json()["id"] == 4
    # A legacy version in the header does not make a request with a 2026-07-28 _meta legacy.
    headers = modern_headers("tools/call", "echo", **{"MCP-Protocol-Version": "2025-11-25"})
    refusal(await http.post(streaming, json=modern_call("echo", {"text": "x"}), headers=headers), 400, -32020)


async def test_modern_unsupported_version_is_400_naming_the_supported_ones(
    streaming: str, http: httpx.AsyncClient
) -> None:
    body = modern_call("echo", {"text": "x"}, id=5)
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "2099-01-01"
    reply = await http.post(
        streaming, json=body, headers=modern_headers("tools/call", "echo", **{"MCP-Protocol-Version": "2099-01-01"})
    )
    error = refusal(reply, 400, -32022)
    assert reply.json()["id"] == 5
    assert error["data"]["requested"] == "2099-01-01" and MODERN in error["data"]["supported"]


async def test_modern_request_without_the_required_meta_is_400_invalid_params(
    streaming: str, http: httpx.AsyncClient
) -> None:
    bare = {"jsonrpc": "2.0", "id": 6, "method": "tools/list"}
    refusal(await http.post(streaming, json=bare, headers=modern_headers("tools/list")), 400, -32602)
    partial = {**bare, "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}}}
    error = refusal(await http.post(streaming, json=partial, headers=modern_headers("tools/list")), 400, -32602)
    assert "clientCapabilities" in error["message"]


async def test_modern_unknown_method_is_404_method_not_found(streaming: str, http: httpx.AsyncClient) -> None:
    body = {"jsonrpc": "2.0", "id": 7, "method": "no/such/method", "params": {"_meta": meta()}}
    reply = await http.post(streaming, json=body, headers=modern_headers("no/such/method"))
    refusal(reply, 404, -32601)
    assert reply.json()["id"] == 7


@pytest.mark.parametrize(
    ("sent", "problem"),
    [(None, "missing"), ("tools/call", "another method"), ("Tools/List", "another case")],
)
async def test_modern_mcp_method_header_must_match_the_body(
    sent: str | None, problem: str, streaming: str, http: httpx.AsyncClient
) -> None:
    headers = modern_headers("tools/list")
    if sent is None:
        del headers["Mcp-Method"]
    else:
        headers["Mcp-Method"] = sent
    body = {"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"_meta": meta()}}
    error = refusal(await http.post(streaming, json=body, headers=headers), 400, -32020)
    assert "Mcp-Method" in error["message"], problem


NAMED = {
    "tools/call": ("echo", {"name": "echo", "arguments": {"text": "x"}}),
    "prompts/get": ("greeting", {"name": "greeting", "arguments": {"name": "Ada"}}),
    "resources/read": ("streaming://note", {"uri": "streaming://note"}),
}


@pytest.mark.parametrize("method", NAMED)
async def test_modern_mcp_name_header_must_match_the_body(method: str, streaming: str, http: httpx.AsyncClient) -> None:
    name, params = NAMED[method]
    body = {"jsonrpc": "2.0", "id": 9, "method": method, "params": {**params, "_meta": meta()}}
    ok = await http.post(streaming, json=body, headers=modern_headers(method, name))
    assert ok.status_code == 200 and "result" in ok.json(), ok.text
    for sent in (None, "something-else", name.upper()):
        error = refusal(await http.post(streaming, json=body, headers=modern_headers(method, sent)), 400, -32020)
        assert "Mcp-Name" in error["message"]


def sentinel(value: str) -> str:
    return f"=?base64?{base64.b64encode(value.encode()).decode()}?="


async def test_modern_base64_mcp_name_is_decoded_before_comparing(streaming: str, http: httpx.AsyncClient) -> None:
    echoed = await http.post(
        streaming, json=modern_call("echo", {"text": "b64"}), headers=modern_headers("tools/call", sentinel("echo"))
    )
    assert echoed.json()["result"]["content"][0]["text"] == "b64"
    uri = "streaming://notes/café"
    body = {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": uri, "_meta": meta()}}
    read = await http.post(streaming, json=body, headers=modern_headers("resources/read", sentinel(uri)))
    assert read.json()["result"]["contents"][0]["text"] == "note café"
    wrong = await http.post(
        streaming, json=modern_call("echo", {"text": "x"}), headers=modern_headers("tools/call", sentinel("add"))
    )
    refusal(wrong, 400, -32020)


@pytest.mark.parametrize(
    ("arguments", "header", "status"),
    [
        ({"region": "eu-west1", "query": "q"}, {"Mcp-Param-Region": "eu-west1"}, 200),
        ({"region": "eu-west1", "query": "q"}, {"mcp-param-region": "eu-west1"}, 200),
        ({"region": "Zürich", "query": "q"}, {"Mcp-Param-Region": sentinel("Zürich")}, 200),
        ({"region": " padded ", "query": "q"}, {"Mcp-Param-Region": sentinel(" padded ")}, 200),
        ({"query": "q"}, {}, 200),
        ({"region": "eu-west1", "query": "q"}, {"Mcp-Param-Region": "us-east1"}, 400),
        ({"region": "eu-west1", "query": "q"}, {}, 400),
        ({"region": "eu-west1", "query": "q"}, {"Mcp-Param-Region": "=?base64?not base64!?="}, 400),
        ({"region": "Zürich", "query": "q"}, {"Mcp-Param-Region": sentinel("Zurich")}, 400),
    ],
)
async def test_modern_x_mcp_header_parameter_must_mirror_the_argument(
    arguments: dict[str, Any], header: dict[str, str], status: int, streaming: str, http: httpx.AsyncClient
) -> None:
    reply = await http.post(
        streaming, json=modern_call("regional", arguments), headers=modern_headers("tools/call", "regional", **header)
    )
    if status == 200:
        assert reply.status_code == 200, reply.text
        assert reply.json()["result"]["content"][0]["text"] == f"{arguments.get('region', 'anywhere')}: q"
    else:
        error = refusal(reply, 400, -32020)
        assert "Mcp-Param-Region" in error["message"]


async def test_modern_subscription_stream_acknowledges_first_then_carries_list_changes(
    streaming: str, http: httpx.AsyncClient
) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": "sub-1",
        "method": "subscriptions/listen",
        "params": {"_meta": meta(), "notifications": {"toolsListChanged": True}},
    }
    async with http.stream("POST", streaming, json=body, headers=modern_headers("subscriptions/listen")) as reply:
        assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/event-stream")
        events = read_sse(reply)
        acknowledged = await next_message(events)
        assert acknowledged == {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": "sub-1"},
                "notifications": {"toolsListChanged": True},
            },
        }
        # Another request's progress stays on its own stream.
        await http.post(
            streaming,
            json=modern_call("countdown", {"n": 1}, progressToken="x"),
            headers=modern_headers("tools/call", "countdown"),
        )
        toggled = await http.post(streaming, json=modern_call("toggle"), headers=modern_headers("tools/call", "toggle"))
        assert toggled.headers["content-type"] == "application/json"
        changed = await next_message(events)
        assert changed == {
            "jsonrpc": "2.0",
            "method": "notifications/tools/list_changed",
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": "sub-1"}},
        }


async def test_modern_closing_the_response_stream_cancels_the_call(
    streaming: str, http: httpx.AsyncClient, tmp_path: Path
) -> None:
    marker = tmp_path / "cancelled"
    call = asyncio.create_task(
        http.post(
            streaming,
            json=modern_call("slow", {"seconds": 30, "marker": str(marker)}),
            headers=modern_headers("tools/call", "slow"),
        )
    )
    assert await wait_until(started(marker))
    call.cancel()  # closes the connection
    await asyncio.gather(call, return_exceptions=True)
    assert await wait_until(marker.exists), "the server went on with a call whose stream was closed"


async def test_modern_notification_is_accepted_with_202(streaming: str, http: httpx.AsyncClient) -> None:
    body = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": "x", "progress": 1, "_meta": meta()},
    }
    reply = await http.post(streaming, json=body, headers=modern_headers("notifications/progress"))
    assert (reply.status_code, reply.content) == (202, b"")


async def test_modern_post_of_a_response_is_400(streaming: str, http: httpx.AsyncClient) -> None:
    """2026-07-28 clients send no JSON-RPC responses (the server sends them no requests)."""
    answer = {"jsonrpc": "2.0", "id": 1, "result": {}}
    headers = {**BASE, "MCP-Protocol-Version": MODERN}
    refusal(await http.post(streaming, json=answer, headers=headers), 400, -32600)


async def test_modern_server_asks_through_an_input_required_result_not_a_request(
    streaming: str, http: httpx.AsyncClient
) -> None:
    body = modern_call("ask", capabilities={"elicitation": {"form": {}}})
    reply = await http.post(streaming, json=body, headers=modern_headers("tools/call", "ask"))
    assert reply.headers["content-type"] == "application/json"
    result = reply.json()["result"]
    assert result["resultType"] == "input_required" and "requestState" in result
    [question] = result["inputRequests"].values()
    assert question["method"] == "elicitation/create" and question["params"]["message"] == "Your name?"


# == both eras: streams and messages ==========================================================


@pytest.mark.parametrize("era", [MODERN, LEGACY])
async def test_large_messages_travel_both_ways(era: str, streaming: str, http: httpx.AsyncClient) -> None:
    text = "é✓" * 600_000  # 3 MB of UTF-8 each way
    if era == MODERN:
        headers, body = modern_headers("tools/call", "echo"), modern_call("echo", {"text": text})
    else:
        headers, body = await open_session(http, streaming), legacy_call("echo", {"text": text})
    reply = await http.post(streaming, json=body, headers=headers)
    assert reply.json()["result"]["content"][0]["text"] == text


async def test_quiet_streams_carry_keep_alive_comments() -> None:
    app = fresh_server(STREAMING).http_app(keep_alive=0.1)
    async with InProcess(app) as url, httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, url)
        listen = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "subscriptions/listen",
            "params": {"_meta": meta(), "notifications": {"toolsListChanged": True}},
        }
        for method, kwargs in (
            ("GET", {"headers": {**headers, **SSE_ACCEPT}}),
            ("POST", {"headers": modern_headers("subscriptions/listen"), "json": listen}),
        ):
            async with http.stream(method, url, **kwargs) as reply:  # type: ignore[arg-type]
                comments = 0
                async with asyncio.timeout(2):
                    async for line in reply.aiter_lines():
                        comments += line.startswith(":")
                        if comments >= 3:
                            break
        await app.close()


async def test_closing_the_app_ends_every_stream_and_subscriptions_get_their_final_response() -> None:
    """On shutdown the server ends what stays open: legacy GET streams (their sessions end) and
    2026-07-28 subscriptions, which get a successful response to subscriptions/listen
    carrying their subscription id (the graceful end the specification asks for)."""
    app = fresh_server(STREAMING).http_app()
    async with InProcess(app) as url, httpx.AsyncClient(timeout=10) as http:
        headers = await open_session(http, url)
        listen = {
            "jsonrpc": "2.0",
            "id": "sub-9",
            "method": "subscriptions/listen",
            "params": {"_meta": meta(), "notifications": {"toolsListChanged": True}},
        }
        async with (
            Listener(http, url, headers) as legacy_stream,
            http.stream("POST", url, json=listen, headers=modern_headers("subscriptions/listen")) as subscription,
        ):
            events = read_sse(subscription)
            assert (await next_message(events))["method"] == "notifications/subscriptions/acknowledged"
            await app.close()
            await asyncio.wait_for(legacy_stream.ended.wait(), 3)
            try:
                final = await next_message(events, timeout=3)
            except (TimeoutError, StopAsyncIteration):
                final = None
            assert final is not None, "the subscription's stream stayed open without its final response"
            assert final["id"] == "sub-9" and "error" not in final
            assert final["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-9"


@pytest.mark.parametrize("era", [MODERN, LEGACY])
async def test_server_process_stops_promptly_on_sigterm_with_streams_open(era: str) -> None:
    """``toolwire run --http`` ends the streams that would stay open (a 2026-07-28 subscription,
    a legacy GET stream) when told to stop, instead of waiting for the clients to leave."""
    with toolwire_http(STREAMING) as (url, process):
        async with httpx.AsyncClient(timeout=10) as http:
            if era == MODERN:
                listen = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "subscriptions/listen",
                    "params": {"_meta": meta(), "notifications": {"toolsListChanged": True}},
                }
                stream = http.stream("POST", url, json=listen, headers=modern_headers("subscriptions/listen"))
            else:
                stream = http.stream("GET", url, headers={**await open_session(http, url), **SSE_ACCEPT})
            async with stream as reply:
                assert reply.status_code == 200
                events = read_sse(reply)  # held: the stream stays open on this side
                await next_event(events)
                process.send_signal(signal.SIGTERM)
                started = time.monotonic()
                while process.poll() is None and time.monotonic() - started < 3:
                    await asyncio.sleep(0.05)
                assert process.poll() is not None, "the server is still waiting for its streams to close"
                await events.aclose()


# == both eras: refusals ========================================================================

ERAS = [MODERN, LEGACY]


async def valid_request(http: httpx.AsyncClient, url: str, era: str) -> tuple[dict[str, str], dict[str, Any]]:
    """Headers and body of a request that would be served, in ``era``."""
    if era == MODERN:
        return modern_headers("tools/call", "echo"), modern_call("echo", {"text": "fine"})
    return await open_session(http, url), legacy_call("echo", {"text": "fine"})


async def still_serving(http: httpx.AsyncClient, url: str, era: str) -> None:
    headers, body = await valid_request(http, url, era)
    reply = await http.post(url, json=body, headers=headers)
    assert reply.status_code == 200 and reply.json()["result"]["content"][0]["text"] == "fine", reply.text


@pytest.mark.parametrize("era", ERAS)
async def test_host_not_allowed_is_403(era: str, streaming: str, http: httpx.AsyncClient) -> None:
    headers, body = await valid_request(http, streaming, era)
    for host in ("evil.example", "localhost.evil.example", "127.0.0.1.nip.io"):
        error = refusal(await http.post(streaming, json=body, headers={**headers, "Host": host}), 403)
        assert host in error["message"] and "Host" in error["message"]
    for host in ("localhost", "127.0.0.1", "localhost:1234"):
        reply = await http.post(streaming, json=body, headers={**headers, "Host": host})
        assert reply.status_code == 200, (host, reply.text)


@pytest.mark.parametrize("era", ERAS)
async def test_allow_host_lets_that_host_through(era: str, allowing: str, http: httpx.AsyncClient) -> None:
    if era == MODERN:
        headers, body = modern_headers("tools/call", "linked"), modern_call("linked")
    else:
        headers, body = await open_session(http, allowing), legacy_call("linked")
    for host in ("mcp.example", "mcp.example:8443"):
        reply = await http.post(allowing, json=body, headers={**headers, "Host": host})
        assert reply.status_code == 200, reply.text
    allowed_origin = await http.post(
        allowing, json=body, headers={**headers, "Host": "mcp.example", "Origin": "https://mcp.example"}
    )
    assert allowed_origin.status_code == 200
    refusal(await http.post(allowing, json=body, headers={**headers, "Host": "evil.example"}), 403)


@pytest.mark.parametrize("era", ERAS)
async def test_foreign_origin_is_403_and_local_or_absent_origins_pass(
    era: str, streaming: str, http: httpx.AsyncClient
) -> None:
    headers, body = await valid_request(http, streaming, era)
    for origin in ("http://evil.example", "null", "http://localhost.evil.example", "file://"):
        error = refusal(await http.post(streaming, json=body, headers={**headers, "Origin": origin}), 403)
        assert "Origin" in error["message"]
    for origin in ("http://localhost:3000", "http://127.0.0.1", "https://localhost"):
        assert (await http.post(streaming, json=body, headers={**headers, "Origin": origin})).status_code == 200
    assert (await http.post(streaming, json=body, headers=headers)).status_code == 200  # no Origin at all


async def chunked(size: int) -> AsyncIterator[bytes]:
    sent = 0
    while sent < size:
        yield b" " * 65536
        sent += 65536


@pytest.mark.parametrize("era", ERAS)
async def test_body_over_the_limit_is_413(era: str, streaming: str, http: httpx.AsyncClient) -> None:
    headers, _ = await valid_request(http, streaming, era)
    big = (
        modern_call("echo", {"text": "x" * (5 * 1024 * 1024)})
        if era == MODERN
        else legacy_call("echo", {"text": "x" * (5 * 1024 * 1024)})
    )
    error = refusal(await http.post(streaming, json=big, headers=headers), 413)
    assert "limit" in error["message"]
    # Without a Content-Length the server stops reading at the limit.
    refusal(await http.post(streaming, content=chunked(5 * 1024 * 1024), headers=headers), 413)
    await still_serving(http, streaming, era)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
async def test_body_that_is_not_json_by_its_content_type_is_415(
    era: str, content_type: str | None, streaming: str, http: httpx.AsyncClient
) -> None:
    headers, body = await valid_request(http, streaming, era)
    del headers["Content-Type"]
    if content_type is not None:
        headers["Content-Type"] = content_type
    error = refusal(await http.post(streaming, content=orjson.dumps(body), headers=headers), 415)
    assert "application/json" in error["message"]
    with_charset = {**headers, "Content-Type": "application/json; charset=utf-8"}
    assert (await http.post(streaming, content=orjson.dumps(body), headers=with_charset)).status_code == 200


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("accept", ["application/json", "text/event-stream", ""])
async def test_accept_without_both_media_types_is_406(
    era: str, accept: str, streaming: str, http: httpx.AsyncClient
) -> None:
    headers, body = await valid_request(http, streaming, era)
    error = refusal(await http.post(streaming, json=body, headers={**headers, "Accept": accept}), 406)
    assert "text/event-stream" in error["message"]
    await still_serving(http, streaming, era)


async def test_get_stream_without_event_stream_in_accept_is_406(streaming: str, http: httpx.AsyncClient) -> None:
    headers = await open_session(http, streaming)
    refusal(await http.get(streaming, headers={**headers, "Accept": "application/json"}), 406)


@pytest.mark.parametrize("era", ERAS)
async def test_malformed_json_is_400_parse_error(era: str, streaming: str, http: httpx.AsyncClient) -> None:
    headers, _ = await valid_request(http, streaming, era)
    for broken in (b'{"jsonrpc": "2.0", "id": 1, "method": ', b"\xff\xfe", b""):
        reply = await http.post(streaming, content=broken, headers=headers)
        refusal(reply, 400, -32700)
        assert reply.json()["id"] is None
    await still_serving(http, streaming, era)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("body", [b'"a string"', b"42", b"null", b"[1, 2]"])
async def test_body_that_is_not_a_json_rpc_object_is_400(
    era: str, body: bytes, streaming: str, http: httpx.AsyncClient
) -> None:
    headers, _ = await valid_request(http, streaming, era)
    reply = await http.post(streaming, content=body, headers=headers)
    refusal(reply, 400, -32600)
    await still_serving(http, streaming, era)


@pytest.mark.parametrize("era", ERAS)
async def test_other_paths_are_404(era: str, streaming: str, http: httpx.AsyncClient) -> None:
    headers, body = await valid_request(http, streaming, era)
    root = streaming.removesuffix("/mcp")
    for path in ("/", "/other", "/mcp/extra", "/MCP"):
        error = refusal(await http.post(root + path, json=body, headers=headers), 404)
        assert "/mcp" in error["message"]
    assert (await http.post(streaming + "/", json=body, headers=headers)).status_code == 200


async def test_other_http_methods_are_405(streaming: str, http: httpx.AsyncClient) -> None:
    for method in ("PUT", "PATCH"):
        reply = await http.request(method, streaming, headers=BASE, content=b"{}")
        refusal(reply, 405)
        assert "POST" in reply.headers["allow"]


async def test_the_server_keeps_serving_during_and_after_every_refusal(streaming: str, http: httpx.AsyncClient) -> None:
    """A streamed call runs while a burst of refused requests of every kind arrives at once;
    it completes, and both eras are served afterwards."""
    session = await open_session(http, streaming)
    call = legacy_call("steps", {"n": 5, "delay": 0.05}, id=20, progressToken="busy")
    modern_headers_ = modern_headers("tools/call", "echo")
    good = modern_call("echo", {"text": "x"})
    bad: list[Callable[[], Awaitable[httpx.Response]]] = [
        lambda: http.post(streaming, json=good, headers={**modern_headers_, "Host": "evil.example"}),
        lambda: http.post(streaming, json=good, headers={**modern_headers_, "Origin": "http://evil.example"}),
        lambda: http.post(streaming, content=chunked(5 * 1024 * 1024), headers=modern_headers_),
        lambda: http.post(streaming, content=b"{", headers=modern_headers_),
        lambda: http.post(streaming, content=b"[]", headers=modern_headers_),
        lambda: http.post(streaming, json=good, headers={**modern_headers_, "Content-Type": "text/plain"}),
        lambda: http.post(streaming, json=good, headers={**modern_headers_, "Accept": "application/json"}),
        lambda: http.post(streaming, json=good, headers={**modern_headers_, "Mcp-Name": "add"}),
        lambda: http.post(streaming, json=good, headers={**modern_headers_, "MCP-Protocol-Version": "1999-01-01"}),
        lambda: http.post(streaming, json=legacy_call("echo"), headers={**BASE, "Mcp-Session-Id": "gone"}),
        lambda: http.post(streaming, json=legacy_call("echo"), headers=BASE),
        lambda: http.get(streaming, headers={"MCP-Protocol-Version": MODERN}),
        lambda: http.post(streaming.removesuffix("/mcp") + "/other", json=good, headers=modern_headers_),
    ]
    async with http.stream("POST", streaming, json=call, headers=session) as reply:
        events = read_sse(reply)
        refused = await asyncio.gather(*(attempt() for attempt in bad))
        for reply_ in refused:
            refusal(reply_, reply_.status_code)
            assert reply_.status_code >= 400
        messages = []
        while not messages or "id" not in messages[-1]:
            messages.append(await next_message(events))
    assert [m["params"]["progress"] for m in messages[:-1]] == [1, 2, 3, 4, 5]
    assert messages[-1]["result"]["content"][0]["text"] == "5 steps"
    for era in ERAS:
        await still_serving(http, streaming, era)
