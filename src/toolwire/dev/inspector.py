"""The inspector: a client of the server under development, and the page that drives it.

``toolwire dev TARGET`` starts :func:`serve`. An :class:`Inspector` keeps one
:class:`~toolwire.client.Client` connected to TARGET (a server file, a URL, or a command),
records every message both ways, and serves on 127.0.0.1:

- ``/`` (with ``?token=...``): the page, and ``/static/...`` its script and style;
- ``/api/...`` (POST, the token in ``X-Toolwire-Token``): what the page asks for (the state,
  lists, a call, a read, a prompt, an answer to a question, another era);
- ``/api/events?token=...``: a stream (SSE) of what happens meanwhile: progress, logs,
  questions the server asks (elicitation, sampling), the traffic, what a server process
  writes on stderr (``output``), reloads.

A failed call (an ``isError`` result or an error) comes with what the server process wrote
on stderr during it (``stderr``: its ``print()``, its traceback without toolwire's frames);
every call's answer says how many progress notifications it sent and the last one.

For a server file, a change to it (or to a Python file beside it) starts a new server
process; once it answers, it replaces the old one. One that fails to start (a syntax error)
is reported on the page with its error, and the previous version goes on serving.

Only requests with the token (random per run) are answered, and only for the ``Host`` the
inspector listens on, so other local pages and users cannot drive it (403 otherwise). As
a second line of defense, the API refuses a request whose ``Origin`` is not the page's own
(``http://127.0.0.1:PORT``: the page is served there only), even with the token; the page
may not be framed by any other page, and the sandbox of MCP Apps views only by the page.
Everything the server sends is shown as text by the page, never as HTML.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import secrets
import time
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

import orjson

from ..apps import MCP_APP_MIME, UI_EXTENSION
from ..client import Client, ClientError, ServerError
from ..client.targets import transport_for
from ..client.transports import StdioProcess
from ..logs import get_logger
from ..protocol.connection import DEFAULT_MAX_MESSAGE_BYTES
from ..protocol.versions import SUPPORTED_VERSIONS
from ..tracebacks import own_lines
from .watch import Watch

log = get_logger("toolwire.dev")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

STATIC = {"inspector.js": "text/javascript", "inspector.css": "text/css", "sandbox.js": "text/javascript"}
#: Seconds between looks at the server's files.
WATCH_INTERVAL = 0.3
#: Messages of the traffic pane kept for a page that connects later.
TRAFFIC_KEPT = 500
#: Pieces of the servers' stderr kept for a page that connects later.
OUTPUT_KEPT = 500
PAGE_POLICY = (
    "default-src 'self'; img-src 'self' data:; media-src 'self' data:; style-src 'self'; frame-ancestors 'none'"
)
#: The sandbox of MCP Apps views: their inline scripts and styles run, nothing is fetched.
SANDBOX_POLICY = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
    "media-src data:; font-src data:; connect-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", PAGE_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]


class Recording:
    """A client transport that tells ``record(direction, message)`` of each message."""

    def __init__(self, inner: Any, record: Callable[[str, bytes], None]) -> None:
        self.inner = inner
        self.record = record
        self.newline = inner.newline
        self.on_message: Callable[[bytes], None] = lambda data: None
        self.on_close: Callable[[str], None] = lambda reason: None

    async def start(self) -> None:
        self.inner.on_message = self._received
        self.inner.on_close = lambda reason: self.on_close(reason)
        await self.inner.start()

    def _received(self, data: bytes) -> None:
        self.record("in", data)
        self.on_message(data)

    def send(self, data: bytes) -> None:
        self.record("out", data)
        self.inner.send(data)

    def send_soon(self, data: bytes) -> None:
        self.record("out", data)
        self.inner.send_soon(data)

    async def close(self) -> None:
        await self.inner.close()


class CallFailed(Exception):
    """A call that failed (``error``), with what the server wrote on stderr meanwhile."""

    def __init__(self, error: ClientError, output: str) -> None:
        super().__init__(str(error))
        self.error = error
        self.output = output


class Inspector:
    """One target, one client at a time, and the pages watching it. ``file``: the server
    file to watch (``None`` for URLs and commands)."""

    def __init__(self, target: Any, file: str | None = None, protocol: str | None = None) -> None:
        self.target = target
        self.file = file
        self.protocol = protocol
        self.token = secrets.token_urlsafe(18)
        self.client: Client | None = None
        self.error: str | None = None  # why the last start failed
        self.generation = 0
        self.host = ""
        self._listeners: set[asyncio.Queue[bytes]] = set()
        self._traffic: list[bytes] = []
        self._output: list[bytes] = []
        self._questions: dict[str, asyncio.Future[Any]] = {}
        self._watcher: asyncio.Task[None] | None = None
        self._swap = asyncio.Lock()

    # -- the client ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect to the target (``ClientError`` if it cannot be) and watch its file."""
        self.client = await self._connect(self.protocol)
        if self.file is not None:
            self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def _connect(self, protocol: str | None) -> Client:
        inner = transport_for(self.target, None, None, None, DEFAULT_MAX_MESSAGE_BYTES)
        if isinstance(inner, StdioProcess):
            decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
            inner.on_stderr = lambda chunk: self._said(decoder.decode(chunk))
        transport = Recording(inner, self._record)
        client = Client(
            transport,
            protocol=protocol,
            elicitation=lambda params: self._ask("elicitation/create", params),
            sampling=lambda params: self._ask("sampling/createMessage", params),
            log_level="debug",
            extensions={UI_EXTENSION: {"mimeTypes": [MCP_APP_MIME]}},  # the page renders MCP Apps views
            on_log=lambda params: self.emit({"kind": "log", "params": params}),
            on_tools_changed=lambda: self.emit({"kind": "changed", "what": "tools"}),
            on_resources_changed=lambda: self.emit({"kind": "changed", "what": "resources"}),
            on_prompts_changed=lambda: self.emit({"kind": "changed", "what": "prompts"}),
        )
        try:
            await client.connect()
        except BaseException:
            with contextlib.suppress(Exception):
                await client.close()
            raise
        return client

    async def reconnect(self, protocol: str | None) -> None:
        """Start a new client (another era, or the file changed); on success it replaces the
        old one, else the old one stays and the page is told why (:attr:`error`)."""
        async with self._swap:
            try:
                fresh = await self._connect(protocol)
            except ClientError as exc:
                self.error = str(exc)
                self.emit({"kind": "failed", "error": self.error})
                return
            old, self.client = self.client, fresh
            self.protocol = protocol
            self.error = None
            self.generation += 1
            self.emit({"kind": "reloaded", "generation": self.generation, "version": fresh.version})
            if old is not None:
                await old.close()

    async def _watch(self) -> None:
        assert self.file is not None
        watch = Watch(self.file)
        while True:
            await asyncio.sleep(WATCH_INTERVAL)
            if watch.changed():
                self.emit({"kind": "reloading"})
                await self.reconnect(self.protocol)

    async def close(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        for future in self._questions.values():
            if not future.done():
                future.cancel()
        if self.client is not None:
            await self.client.close()

    # -- events --------------------------------------------------------------------------------

    def emit(self, event: dict[str, Any]) -> None:
        data = orjson.dumps(event)
        for queue in list(self._listeners):
            queue.put_nowait(data)

    def _record(self, direction: str, data: bytes) -> None:
        try:
            message = orjson.loads(data)
        except orjson.JSONDecodeError:
            message = data.decode(errors="replace")
        event = orjson.dumps({"kind": "traffic", "direction": direction, "message": message, "at": time.time()})
        self._traffic = [*self._traffic[-(TRAFFIC_KEPT - 1) :], event]
        for queue in list(self._listeners):
            queue.put_nowait(event)

    def _said(self, text: str) -> None:
        """A piece of what the server process wrote on stderr, for the pages."""
        if not text:
            return
        event = orjson.dumps({"kind": "output", "text": text, "at": time.time()})
        self._output = [*self._output[-(OUTPUT_KEPT - 1) :], event]
        for queue in list(self._listeners):
            queue.put_nowait(event)

    async def _ask(self, method: str, params: dict[str, Any]) -> Any:
        """A question from the server: shown on the page, answered there."""
        question = secrets.token_hex(8)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._questions[question] = future
        self.emit({"kind": "question", "id": question, "method": method, "params": params})
        try:
            return await future
        finally:
            self._questions.pop(question, None)

    # -- the API -------------------------------------------------------------------------------

    async def api(self, action: str, body: dict[str, Any]) -> Any:
        """Answer the page's ``action``; ``KeyError`` for an unknown one."""
        client = self.client
        if action == "state":
            return self._state()
        if action == "era":
            version = body.get("version")
            await self.reconnect(version if version in SUPPORTED_VERSIONS else None)
            return self._state()
        if action == "answer":
            future = self._questions.get(str(body.get("id")))
            if future is not None and not future.done():
                future.set_result(body.get("answer"))
            return {}
        if client is None:
            raise ClientError("not connected")
        if action == "tools":
            return [tool.raw for tool in await client.list_tools(refresh=True)]
        if action == "call":
            return await self._call(client, body)
        if action == "resources":
            offered = "resources" in client.capabilities
            listed = await client.list_resources() if offered else []
            templates = await client.list_resource_templates() if offered else []
            return {"resources": [r.raw for r in listed], "templates": [t.raw for t in templates]}
        if action == "read":
            uri = str(body.get("uri", ""))
            template, variables = body.get("template"), body.get("variables")
            if isinstance(template, str) and isinstance(variables, dict):
                from ..resources.uri_template import UriTemplate

                given = {str(key): str(value) for key, value in variables.items() if value != ""}
                uri = UriTemplate(template).expand(given)
            return {"uri": uri, "contents": [entry.raw for entry in await client.read_resource(uri)]}
        if action == "prompts":
            return [prompt.raw for prompt in await client.list_prompts()] if "prompts" in client.capabilities else []
        if action == "complete":
            if "completions" not in client.capabilities:
                return []
            context = {str(key): str(value) for key, value in (body.get("context") or {}).items()}
            found = await client.complete(
                str(body.get("argument", "")),
                str(body.get("value", "")),
                prompt=body.get("prompt"),
                resource_template=body.get("template"),
                context=context or None,
            )
            return list(found.values)
        if action == "prompt":
            arguments = {key: str(value) for key, value in (body.get("arguments") or {}).items()}
            return (await client.get_prompt(str(body.get("name", "")), arguments)).raw
        raise KeyError(action)

    def _state(self) -> dict[str, Any]:
        client = self.client
        return {
            "target": " ".join(self.target) if isinstance(self.target, list) else str(self.target),
            "server": client.server_info if client else {},
            "version": client.version if client else None,
            "versions": list(SUPPORTED_VERSIONS),
            "chosen": self.protocol,
            "capabilities": client.capabilities if client else {},
            "error": self.error,
            "generation": self.generation,
            "watching": self.file,
        }

    async def _call(self, client: Client, body: dict[str, Any]) -> dict[str, Any]:
        """Call a tool; the answer has the result, its time, its progress (``count`` and the
        ``last`` notification) and, when it failed, ``stderr``. :class:`CallFailed` when the
        call raised a :class:`ClientError`."""
        call = str(body.get("call", ""))
        reported: dict[str, Any] = {"count": 0, "last": None}

        def progress(done: float, total: float | None, message: str | None) -> None:
            reported["count"] += 1
            reported["last"] = {"progress": done, "total": total, "message": message}
            self.emit({"kind": "progress", "call": call, "progress": done, "total": total, "message": message})

        process = client.transport.inner if isinstance(client.transport, Recording) else None
        process = process if isinstance(process, StdioProcess) else None
        mark = process.stderr_written if process is not None else 0
        started = time.perf_counter()
        arguments = body.get("arguments")
        try:
            result = await client.call_tool(
                str(body.get("name", "")),
                arguments if isinstance(arguments, dict) else {},
                progress=progress,
                task=bool(body.get("task")),
            )
        except ClientError as exc:
            raise CallFailed(exc, _output_since(process, mark)) from None
        answer = {"result": result.raw, "ms": round((time.perf_counter() - started) * 1000, 1), "progress": reported}
        if result.is_error:
            answer["stderr"] = _output_since(process, mark)
        return answer

    # -- HTTP ----------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        headers = {key.decode().lower(): value.decode(errors="replace") for key, value in scope["headers"]}
        if self.host and headers.get("host") not in (self.host, self.host.replace("127.0.0.1", "localhost")):
            await _respond(send, 403, b"forbidden: this inspector answers on its own address only", "text/plain")
            return
        path: str = scope["path"]
        query = _query(scope)
        page_origin = "http://" + self.host
        sandbox_origin = page_origin.replace("127.0.0.1", "localhost")
        if path.startswith("/api/") and self.host and headers.get("origin", page_origin) != page_origin:
            await _respond(send, 403, b'{"error": {"message": "forbidden: not from the page"}}', "application/json")
            return
        if path == "/":
            if query.get("token") != self.token or headers.get("host", "").startswith("localhost"):
                await _respond(send, 403, b"forbidden: open the address toolwire dev printed", "text/plain")
                return
            policy = f"{PAGE_POLICY}; frame-src {sandbox_origin}".encode()
            await _respond(send, 200, _page(), "text/html; charset=utf-8", policy)
        elif path == "/sandbox":
            if headers.get("host", "").startswith("127.0.0.1"):  # never the page's own origin
                await _respond(send, 404, b"not found", "text/plain")
                return
            policy = f"{SANDBOX_POLICY}; frame-ancestors {page_origin}".encode()
            await _respond(send, 200, _static("sandbox.html"), "text/html; charset=utf-8", policy)
        elif path.startswith("/static/") and path[8:] in STATIC:
            name = path[8:]
            await _respond(send, 200, _static(name), STATIC[name] + "; charset=utf-8")
        elif path == "/api/events":
            if query.get("token") != self.token:
                await _respond(send, 403, b"forbidden", "text/plain")
                return
            await self._events(receive, send)
        elif path == "/favicon.ico":
            await _respond(send, 204, b"", "image/x-icon")
        elif path.startswith("/api/") and scope["method"] == "POST":
            if headers.get("x-toolwire-token") != self.token:
                await _respond(send, 403, b'{"error": {"message": "forbidden"}}', "application/json")
                return
            await self._answer(path[5:], receive, send)
        else:
            await _respond(send, 404, b"not found", "text/plain")

    async def _answer(self, action: str, receive: Receive, send: Send) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            request = orjson.loads(body or b"{}")
            answer = {"ok": await self.api(action, request if isinstance(request, dict) else {})}
        except KeyError:
            await _respond(send, 404, b'{"error": {"message": "no such action"}}', "application/json")
            return
        except CallFailed as exc:
            answer = {"error": {**_error(exc.error), "stderr": exc.output}}
        except (ClientError, orjson.JSONDecodeError) as exc:
            answer = {"error": _error(exc)}
        await _respond(send, 200, orjson.dumps(answer, default=str), "application/json")

    async def _events(self, receive: Receive, send: Send) -> None:
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        for event in [*self._traffic, *self._output]:
            queue.put_nowait(event)
        self._listeners.add(queue)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream"), *SECURITY_HEADERS],
            }
        )
        while (await receive()).get("more_body"):  # the request's (empty) body first
            pass
        disconnected = asyncio.ensure_future(receive())  # then only its end is left to hear
        try:
            while True:
                getting = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getting, disconnected}, timeout=15, return_when=asyncio.FIRST_COMPLETED)
                if disconnected in done:
                    getting.cancel()
                    return
                data = getting.result() if getting in done else b""
                if not data:
                    getting.cancel()
                chunk = b"data: " + data + b"\n\n" if data else b": keep-alive\n\n"
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        finally:
            self._listeners.discard(queue)
            disconnected.cancel()


def _error(exc: Exception) -> dict[str, Any]:
    if isinstance(exc, ServerError):
        return {"code": exc.code, "message": exc.message, "data": exc.data}
    return {"message": str(exc)}


def _output_since(process: StdioProcess | None, mark: int) -> str:
    """What ``process`` wrote on stderr since ``mark``, toolwire's frames left out of its
    tracebacks (``""`` for a server that is not a process of ours)."""
    return own_lines(process.stderr_since(mark)).strip() if process is not None else ""


def _page() -> bytes:
    return _static("inspector.html")


def _static(name: str) -> bytes:
    return (resources.files(__package__) / "static" / name).read_bytes()


def _query(scope: Scope) -> dict[str, str]:
    from urllib.parse import parse_qsl

    return dict(parse_qsl(scope.get("query_string", b"").decode(errors="replace")))


async def _respond(send: Send, status: int, body: bytes, kind: str, policy: bytes | None = None) -> None:
    security = SECURITY_HEADERS if policy is None else [(b"content-security-policy", policy), *SECURITY_HEADERS[1:]]
    headers = [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode()), *security]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def serve(
    target: Any,
    file: str | None,
    *,
    port: int = 0,
    protocol: str | None = None,
    browser: bool = True,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Run the inspector until interrupted: connect to ``target``, listen on 127.0.0.1:``port``
    (0: any free port), say the page's address to ``on_ready(url)`` and open it in the
    browser unless ``browser`` is false. ``ClientError`` when the target cannot be reached
    at first; ``OSError`` when the port cannot be listened on."""
    import socket

    import uvicorn

    from ..transports.stdio import event_loop_runner

    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(128)
    bound = listener.getsockname()[1]

    async def run() -> None:
        inspector = Inspector(target, file, protocol)
        inspector.host = f"127.0.0.1:{bound}"
        await inspector.start()
        url = f"http://127.0.0.1:{bound}/?token={inspector.token}"
        if on_ready is not None:
            on_ready(url)
        if browser:
            import webbrowser

            asyncio.get_running_loop().run_in_executor(None, webbrowser.open, url)
        config = uvicorn.Config(
            inspector, log_level="warning", lifespan="on", access_log=False, timeout_graceful_shutdown=1
        )
        try:
            await uvicorn.Server(config).serve(sockets=[listener])
        finally:
            await inspector.close()

    event_loop_runner()(run())
