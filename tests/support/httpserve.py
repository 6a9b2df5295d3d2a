"""Serving over Streamable HTTP in the tests, and reading what comes back on the wire.

* :func:`toolwire_http` runs ``python -m toolwire run FILE --http PORT`` as a real process on
  a free port of 127.0.0.1 and yields its endpoint; :func:`process_http` does the same for
  any command that takes the port as its last argument.
* :class:`InProcess` serves an ASGI application with uvicorn on the running event loop, for
  tests that look at the server's state while clients talk to it over real sockets.
* :func:`fresh_server` loads a server file anew (a Server of its own, not shared).
* :func:`read_sse` / :func:`parse_sse` split an SSE body into events; the header and
  ``_meta`` helpers build requests of either era by hand.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import itertools
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import orjson
import uvicorn

from toolwire.transports.http import wire

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "tests" / "servers"
LIBRARY = str(SERVERS / "library.py")
STREAMING = str(SERVERS / "streaming.py")

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
#: What every POST carries.
BASE = {"Accept": ACCEPT, "Content-Type": "application/json"}
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"

_modules = itertools.count()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _said(process: subprocess.Popen[bytes]) -> str:
    """The end of what an exited ``process`` wrote on its stderr, when it was piped."""
    said = process.stderr.read().decode(errors="replace").strip()[-2000:] if process.stderr else ""
    return f", saying: {said}" if said else ""


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        assert process.poll() is None, f"the server exited with code {process.returncode}{_said(process)}"
        assert time.monotonic() < deadline, "the server did not start listening"
        time.sleep(0.02)


@contextlib.contextmanager
def process_http(*command: str, path: str = "/mcp") -> Iterator[str]:
    """Run ``command PORT`` (a free port is appended) until the block ends; yields the URL."""
    port = free_port()
    environment = {**os.environ, "PYTHONWARNINGS": "ignore"}
    process = subprocess.Popen(
        [*command, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment, cwd=ROOT
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        process.kill()
        process.wait(10)


@contextlib.contextmanager
def github_api() -> Iterator[str]:
    """The local server speaking GitHub's OAuth and user API (``tests/servers/github_api.py``)
    until the block ends; yields its base URL."""
    with process_http(sys.executable, str(SERVERS / "github_api.py"), path="") as url:
        yield url


@contextlib.contextmanager
def toolwire_http(target: str, *options: str, port: int | None = None) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``python -m toolwire run TARGET --http PORT OPTIONS...`` (on a free port unless given);
    yields its URL and process."""
    port = port if port is not None else free_port()
    command = [sys.executable, "-m", "toolwire", "run", target, "--http", str(port), *options]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        process.kill()
        process.wait(10)


def fresh_server(path: str) -> Any:
    """The ``server`` a server file defines, loaded anew as a module of its own."""
    spec = importlib.util.spec_from_file_location(f"_http_test_server_{next(_modules)}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


class InProcess:
    """``app`` served on this event loop, on a free port of 127.0.0.1: by toolwire's own HTTP
    server (``run_http``'s default), or uvicorn with ``runner="uvicorn"``.

    ``async with InProcess(app) as url``: the server runs (its lifespan too) until the block
    ends; then it shuts down, waiting at most ``grace`` seconds for open responses.
    """

    def __init__(
        self,
        app: Any,
        grace: float = 2.0,
        listener: socket.socket | None = None,
        lifespan: str = "on",
        runner: str = "toolwire",
    ) -> None:
        self.app = app
        self.grace = grace
        self.lifespan = lifespan
        self.runner = runner
        self._server: uvicorn.Server | None = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._listener = listener

    async def __aenter__(self) -> str:
        if self._listener is None:
            self._listener = socket.socket()
            self._listener.bind(("127.0.0.1", 0))
        listener = self._listener
        port = listener.getsockname()[1]
        if self.runner == "toolwire":
            listener.listen(128)
            serving = wire.serve(self.app, listener, grace=self.grace, lifespan=self.lifespan == "on", stop=self._stop)
            self._task = asyncio.create_task(serving)
            await asyncio.sleep(0)
            return f"http://127.0.0.1:{port}/mcp"
        config = uvicorn.Config(
            self.app, lifespan=self.lifespan, log_level="critical", timeout_graceful_shutdown=self.grace, ws="none"
        )
        self._server = uvicorn.Server(config)
        self._task = asyncio.create_task(self._server.serve(sockets=[listener]))
        deadline = time.monotonic() + 10
        while not self._server.started:
            assert not self._task.done(), "uvicorn stopped before it started"
            assert time.monotonic() < deadline, "uvicorn did not start"
            await asyncio.sleep(0.005)
        return f"http://127.0.0.1:{port}/mcp"

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        if self._server is not None:
            self._server.should_exit = True
        self._stop.set()
        await asyncio.wait_for(self._task, self.grace + 10)
        if self._listener is not None:
            self._listener.close()


# -- requests, by hand -------------------------------------------------------------------------


def meta(capabilities: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """The per-request ``_meta`` of a 2026-07-28 request."""
    return {
        META_VERSION: MODERN,
        META_CAPABILITIES: capabilities or {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-http", "version": "1"},
        **extra,
    }


def modern_headers(method: str, name: str | None = None, **extra: str) -> dict[str, str]:
    """The headers of a 2026-07-28 POST: version, ``Mcp-Method`` and (if given) ``Mcp-Name``."""
    headers = {**BASE, "MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    headers.update(extra)
    return headers


def modern_call(name: str, arguments: dict[str, Any] | None = None, id: Any = 1, **meta_extra: Any) -> dict[str, Any]:
    """A 2026-07-28 ``tools/call`` body."""
    params = {"name": name, "arguments": arguments or {}, "_meta": meta(**meta_extra)}
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


def legacy_call(name: str, arguments: dict[str, Any] | None = None, id: Any = 1, **meta_extra: Any) -> dict[str, Any]:
    """A legacy ``tools/call`` body (``_meta`` only when given: a progress token, say)."""
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if meta_extra:
        params["_meta"] = meta_extra
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


def initialize(version: str = LEGACY, capabilities: dict[str, Any] | None = None, id: Any = 0) -> dict[str, Any]:
    params = {
        "protocolVersion": version,
        "capabilities": capabilities or {},
        "clientInfo": {"name": "raw", "version": "1"},
    }
    return {"jsonrpc": "2.0", "id": id, "method": "initialize", "params": params}


async def open_session(
    http: httpx.AsyncClient, url: str, version: str = LEGACY, capabilities: dict[str, Any] | None = None
) -> dict[str, str]:
    """A legacy session, initialized: the headers its later requests carry."""
    reply = await http.post(
        url, json=initialize(version, capabilities), headers={**BASE, "MCP-Protocol-Version": version}
    )
    assert reply.status_code == 200, reply.text
    assert reply.json()["result"]["protocolVersion"] == version
    headers = {**BASE, "Mcp-Session-Id": reply.headers["mcp-session-id"], "MCP-Protocol-Version": version}
    done = await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
    assert done.status_code == 202, done.text
    return headers


# -- Server-Sent Events ------------------------------------------------------------------------


@dataclass
class Event:
    """One SSE event: its ``data`` (joined lines), ``id`` and ``retry`` fields, if any."""

    data: str = ""
    id: str | None = None
    retry: int | None = None
    event: str = "message"

    @property
    def message(self) -> Any:
        return orjson.loads(self.data)


def _event_lines(lines: list[str]) -> Event | None:
    event = Event()
    data: list[str] = []
    seen = False
    for line in lines:
        if not line or line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        seen = True
        if name == "data":
            data.append(value)
        elif name == "id":
            event.id = value
        elif name == "retry":
            event.retry = int(value)
        elif name == "event":
            event.event = value
    event.data = "\n".join(data)
    return event if seen else None


def parse_sse(text: str) -> list[Event]:
    """The events of a whole SSE body (comments and keep-alives left out)."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        event = _event_lines(block.split("\n"))
        if event is not None:
            events.append(event)
    return events


async def read_sse(reply: httpx.Response) -> AsyncIterator[Event]:
    """The events of an SSE response as they arrive."""
    lines: list[str] = []
    async for line in reply.aiter_lines():
        if line:
            lines.append(line)
            continue
        event = _event_lines(lines)
        lines = []
        if event is not None:
            yield event


def sse_messages(reply: httpx.Response) -> list[Any]:
    """The JSON-RPC messages of a whole SSE response, in order (priming events left out)."""
    assert reply.headers["content-type"].startswith("text/event-stream"), reply.headers
    return [event.message for event in parse_sse(reply.text) if event.data]


def refusal(reply: httpx.Response, status: int, code: int | None = None) -> dict[str, Any]:
    """The JSON-RPC error of a refused request, after checking that it is one a person can act
    on: ``status``, a JSON body with a JSON-RPC error (``code`` if given) and a message that
    says what was wrong."""
    assert reply.status_code == status, (reply.status_code, reply.text)
    assert reply.headers.get("content-type", "").startswith("application/json"), reply.headers
    body = reply.json()
    assert body["jsonrpc"] == "2.0" and "id" in body and "result" not in body, body
    error = body["error"]
    assert isinstance(error["code"], int) and isinstance(error["message"], str), error
    assert len(error["message"]) >= 20, f"not much to act on: {error['message']!r}"
    if code is not None:
        assert error["code"] == code, error
    return error  # type: ignore[no-any-return]
