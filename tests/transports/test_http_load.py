"""Bounded load on the Streamable HTTP app, and what it leaves behind.

Thousands of sessions are opened and ended (by DELETE, and by idling out) by calling the ASGI
application directly, the way uvicorn does; afterwards the app holds no session, the event
loop runs no more tasks than before, and memory is back near where it was. Concurrent clients
and clients that vanish mid-stream go through real sockets to the app served by uvicorn in
this process. The session cap refuses with 503 and leaves the other sessions alone.
"""

from __future__ import annotations

import asyncio
import gc
import time
import tracemalloc
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from tests.support.httpserve import (
    BASE,
    LEGACY,
    STREAMING,
    InProcess,
    fresh_server,
    initialize,
    legacy_call,
    meta,
    modern_call,
    modern_headers,
    open_session,
    read_sse,
    refusal,
    sse_messages,
)


class Reply:
    """What the app sent for one request."""

    def __init__(self) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body = b""

    def json(self) -> Any:
        return orjson.loads(self.body)


async def asgi(app: Any, method: str, headers: dict[str, str], body: bytes = b"") -> Reply:
    """One request to ``app``, as uvicorn would make it (the client leaves once answered)."""
    reply = Reply()
    pending = [{"type": "http.request", "body": body, "more_body": False}]
    answered = asyncio.Event()

    async def receive() -> dict[str, Any]:
        if pending:
            return pending.pop()
        await answered.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            reply.status = message["status"]
            reply.headers = {name.decode(): value.decode() for name, value in message.get("headers", [])}
        else:
            reply.body += message.get("body", b"")
            if not message.get("more_body"):
                answered.set()

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8000"), *((k.lower().encode(), v.encode()) for k, v in headers.items())],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    await app(scope, receive, send)
    answered.set()
    return reply


INITIALIZE = orjson.dumps(initialize())
INITIALIZED = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
ECHO = orjson.dumps(legacy_call("echo", {"text": "hi"}))
LEGACY_HEADERS = {**BASE, "MCP-Protocol-Version": LEGACY}


async def open_direct(app: Any) -> dict[str, str]:
    opened = await asgi(app, "POST", LEGACY_HEADERS, INITIALIZE)
    assert opened.status == 200, opened.body
    headers = {**LEGACY_HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
    assert (await asgi(app, "POST", headers, INITIALIZED)).status == 202
    return headers


async def churn(app: Any, count: int, end: bool) -> None:
    """Open ``count`` sessions, 50 at a time, each making one call; ``end`` DELETEs them."""

    async def one() -> None:
        headers = await open_direct(app)
        answered = await asgi(app, "POST", headers, ECHO)
        assert answered.json()["result"]["content"][0]["text"] == "hi"
        if end:
            assert (await asgi(app, "DELETE", headers)).status == 200

    for _ in range(0, count, 50):
        await asyncio.gather(*(one() for _ in range(50)))


async def settle(app: Any, tasks: int, timeout: float = 5.0) -> None:
    """Wait until the app holds no session and the loop runs at most ``tasks`` tasks."""
    deadline = time.monotonic() + timeout
    while len(app.sessions) or len(asyncio.all_tasks()) > tasks:
        left = f"{len(app.sessions)} sessions and {len(asyncio.all_tasks())} tasks left (at rest: {tasks} tasks)"
        assert time.monotonic() < deadline, left
        await asyncio.sleep(0.02)


def traced() -> int:
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


@pytest.fixture
def tracing() -> Any:
    tracemalloc.start()
    yield
    tracemalloc.stop()


async def test_thousands_of_sessions_ended_or_expired_leave_nothing_behind(tracing: None) -> None:
    """2,000 sessions ended with DELETE and 2,000 left to expire, after a first round that
    sizes the app's tables (dicts keep their size): nothing more is left than before."""
    app = fresh_server(STREAMING).http_app(session_idle_timeout=0.4)
    await churn(app, 100, end=True)
    await churn(app, 2000, end=False)
    await settle(app, len(asyncio.all_tasks()) + 1, timeout=10)  # the reaper stays
    idle_tasks = len(asyncio.all_tasks())
    idle_memory = traced()

    await churn(app, 2000, end=True)
    assert len(app.sessions) == 0
    await churn(app, 2000, end=False)
    assert len(app.sessions) > 0  # the first ones may already have expired
    await settle(app, idle_tasks, timeout=10)  # every one of them expired

    grown = traced() - idle_memory
    assert grown < 64 * 1024, f"{grown} bytes more after 4,000 sessions"
    assert len(app.store) == 0  # type: ignore[arg-type]
    await app.close()


@pytest.fixture
async def served() -> AsyncIterator[tuple[Any, str]]:
    app = fresh_server(STREAMING).http_app(session_idle_timeout=60)
    async with InProcess(app) as url:
        async with httpx.AsyncClient(timeout=10) as http:  # the first session starts the reaper
            assert (await http.delete(url, headers=await open_session(http, url))).status_code == 200
        yield app, url
        await app.close()


async def baseline() -> int:
    await asyncio.sleep(0.05)
    return len(asyncio.all_tasks())


async def test_fifty_concurrent_clients_all_get_their_own_answers(served: tuple[Any, str]) -> None:
    """Half of them in 2025-11-25 sessions, half in 2026-07-28; each sends its calls at once:
    a JSON answer, a structured one, and a stream of progress."""
    app, url = served
    idle = await baseline()
    limits = httpx.Limits(max_connections=50, max_keepalive_connections=50)
    async with httpx.AsyncClient(timeout=20, limits=limits) as http:

        async def client(n: int) -> None:
            modern = n % 2 == 1
            if modern:
                session: dict[str, str] = {}

                def post(name: str, arguments: dict[str, Any], **extra: Any) -> Any:
                    return http.post(
                        url,
                        json=modern_call(name, arguments, id=f"{name}-{n}", **extra),
                        headers=modern_headers("tools/call", name),
                    )
            else:
                session = await open_session(http, url)

                def post(name: str, arguments: dict[str, Any], **extra: Any) -> Any:
                    return http.post(url, json=legacy_call(name, arguments, id=f"{name}-{n}", **extra), headers=session)

            echoed, added, counted = await asyncio.gather(
                post("echo", {"text": f"client {n}"}),
                post("add", {"a": n, "b": 1000}),
                post("countdown", {"n": 3}, progressToken=f"p{n}"),
            )
            assert echoed.json()["result"]["content"][0]["text"] == f"client {n}"
            assert added.json()["result"]["content"][0]["text"] == str(n + 1000)
            assert counted.headers["content-type"].startswith("text/event-stream"), counted.text
            messages = sse_messages(counted)
            assert [m["params"]["progressToken"] for m in messages[:3]] == [f"p{n}"] * 3
            assert messages[-1]["id"] == f"countdown-{n}" and messages[-1]["result"]["content"][0]["text"] == "liftoff"
            if session:
                assert (await http.delete(url, headers=session)).status_code == 200

        started = time.monotonic()
        await asyncio.gather(*(client(n) for n in range(50)))
        assert time.monotonic() - started < 15
    await settle(app, idle)


async def test_a_client_that_vanishes_mid_stream_leaves_nothing_behind(served: tuple[Any, str]) -> None:
    app, url = served
    idle = await baseline()
    async with httpx.AsyncClient(timeout=10) as http:
        # 2026-07-28: closing the stream cancels the call.
        body = modern_call("steps", {"n": 50, "delay": 0.05}, progressToken="m")
        async with http.stream("POST", url, json=body, headers=modern_headers("tools/call", "steps")) as reply:
            events = read_sse(reply)
            while not (await anext(events)).data:
                pass
        # 2026-07-28: a subscription whose stream was closed is gone.
        listen = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "subscriptions/listen",
            "params": {"_meta": meta(), "notifications": {"toolsListChanged": True}},
        }
        async with http.stream("POST", url, json=listen, headers=modern_headers("subscriptions/listen")) as reply:
            events = read_sse(reply)
            while not (await anext(events)).data:
                pass
        # 2025-11-25: the call runs on (its stream stays resumable) until the session ends.
        headers = await open_session(http, url)
        body = legacy_call("steps", {"n": 4, "delay": 0.05}, progressToken="l")
        async with http.stream("POST", url, json=body, headers=headers) as reply:
            events = read_sse(reply)
            while not (await anext(events)).data:
                pass
        async with http.stream("GET", url, headers={**headers, "Accept": "text/event-stream"}) as reply:
            assert reply.status_code == 200
            await anext(read_sse(reply))
        await asyncio.sleep(0.4)
        assert (await http.delete(url, headers=headers)).status_code == 200
    await settle(app, idle)
    assert len(app.store) == 0


async def test_a_session_whose_client_vanished_from_its_get_stream_still_expires() -> None:
    """The client dropped its GET stream and never came back: the session idles out, and the
    request that served the stream ends with it."""
    app = fresh_server(STREAMING).http_app(session_idle_timeout=0.3)
    async with InProcess(app) as url:
        idle = await baseline()
        async with httpx.AsyncClient(timeout=10) as http:
            headers = await open_session(http, url)
            async with http.stream("GET", url, headers={**headers, "Accept": "text/event-stream"}) as reply:
                assert reply.status_code == 200
                await anext(read_sse(reply))
        await settle(app, idle + 1, timeout=3)  # the reaper stays
        await app.close()


async def test_session_cap_makes_room_from_idle_sessions_and_refuses_when_all_are_busy() -> None:
    app = fresh_server(STREAMING).http_app(max_sessions=5)
    async with InProcess(app) as url, httpx.AsyncClient(timeout=10) as http:
        sessions = [await open_session(http, url) for _ in range(5)]
        streams = [http.stream("GET", url, headers={**headers, "Accept": "text/event-stream"}) for headers in sessions]
        for stream in streams:
            assert (await stream.__aenter__()).status_code == 200  # every session busy with a GET stream
        refused = await http.post(url, json=initialize(), headers=LEGACY_HEADERS)
        error = refusal(refused, 503)
        assert "mcp-session-id" not in refused.headers
        assert "maximum of 5 sessions, all in use" in error["message"] and "try again" in error["message"]
        modern = await http.post(
            url, json=modern_call("echo", {"text": "stateless"}), headers=modern_headers("tools/call", "echo")
        )
        assert modern.status_code == 200  # 2026-07-28 requests open no session
        await streams[2].__aexit__(None, None, None)  # session 2 is idle now: it makes room
        for _ in range(50):
            if not app.sessions.sessions[sessions[2]["Mcp-Session-Id"]].busy:
                break
            await asyncio.sleep(0.02)
        await open_session(http, url)
        assert len(app.sessions) == 5
        for number, headers in enumerate(sessions):
            reply = await http.post(url, json=legacy_call("echo", {"text": "spared"}), headers=headers)
            if number == 2:
                assert reply.status_code == 404
            else:
                assert reply.json()["result"]["content"][0]["text"] == "spared"
        for number, stream in enumerate(streams):
            if number != 2:
                await stream.__aexit__(None, None, None)
        await app.close()
