"""The client side of Streamable HTTP (and of the 2024-11-05 HTTP+SSE transport it replaced).

:class:`StreamableHttpTransport` is a client :class:`~toolwire.client.transports.Transport`:
the :class:`~toolwire.client.Client` hands it encoded messages and it POSTs each one,
delivering what comes back (one JSON answer, or the events of an SSE stream) as messages.
It reads what it needs from the messages themselves:

* **2026-07-28** requests carry their version in ``_meta``: each POST gets
  ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and the ``Mcp-Param-*`` headers the
  called tool's ``x-mcp-header`` annotations ask for. Tools whose annotations are invalid are
  left out of ``tools/list`` answers (with a warning). Cancelling a request closes its
  response stream, which is how 2026-07-28 cancels over HTTP.
* **Legacy** sessions: the ``Mcp-Session-Id`` of the ``initialize`` answer and the
  negotiated version go on every later request; after ``notifications/initialized`` a
  ``GET`` stream carries what the server sends outside any request. A 404 on the session
  (it expired) re-runs the handshake and sends the request again. A stream that ends before
  its answer is resumed with ``GET`` and ``Last-Event-ID`` after the ``retry`` delay the
  server announced. ``DELETE`` ends the session when the transport closes.
* An ``initialize`` refused with 400/404/405 (and no modern error) tries the old HTTP+SSE
  transport: a ``GET`` whose first event names the endpoint to POST to.

A server that cannot be reached closes the transport (the client raises
``ConnectionClosed``); an HTTP error without a JSON-RPC body becomes an error answer to the
request that caused it, naming the status. So does an answer the transport refuses, the
connection it came on closed: a body, or an event of a stream, larger than
``max_message_bytes`` (decompressed; the error says how to raise it), a head larger than
64 kB, a redirect to another origin (the configured headers and the session id would go
there). A request cancelled or timed out closes its answer's connection in both eras.

The HTTP is httpx's ``AsyncClient`` on :class:`~toolwire.client.http11.Http11Transport`
(httpx's own transport when a proxy is configured in the environment). The POSTs of
messages take the :class:`~toolwire.client.direct_route.DirectRoute` to the same connections while
httpx's client layer would add nothing to them (no ``auth``, no cookies, no redirect): that
layer costs several times what the rest of a request does. Streams are read with
:mod:`.sse`; the tools' header annotations are kept by :mod:`.tool_headers`.
"""

from __future__ import annotations

import asyncio
import contextlib
import urllib.request
from typing import Any
from urllib.parse import urljoin

import httpx
import orjson

from ..auth.client.errors import AuthorizationError
from ..logs import get_logger
from ..protocol import http_headers
from ..protocol.connection import DEFAULT_MAX_MESSAGE_BYTES
from ..protocol.errors import METHOD_NOT_FOUND, MODERN_ERRORS
from ..protocol.versions import META_PROTOCOL_VERSION
from .direct_route import DirectRoute
from .errors import AUTHORIZATION_FAILED, ClientError
from .http11 import Http11Transport
from .http11_connection import Refused, TooLarge
from .http_reply import Reply
from .sse import StreamPosition, read_events
from .tool_headers import screen_tools

log = get_logger("toolwire.client")

ACCEPT = "application/json, text/event-stream"
MAX_RESUMES = 5


class StreamableHttpTransport:
    """Streamable HTTP to ``url``; ``headers`` go on every request (authorization, say;
    :class:`ClientError` for one that is not ASCII); ``max_message_bytes`` bounds every
    message taken from the server (see the module). ``legacy_sse``: ``True`` speaks the old
    HTTP+SSE transport from the start, ``False`` never falls back to it, ``None`` (the
    default) falls back when the server refuses the first request."""

    newline = False
    #: Seconds a request waits for the legacy GET stream to open.
    LISTEN_WAIT = 2.0

    def __init__(
        self,
        url: str,
        headers: dict[str, str] | None = None,
        timeout: float = 30.0,
        auth: httpx.Auth | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        legacy_sse: bool | None = None,
    ) -> None:
        for name, value in (headers or {}).items():
            if not (name.isascii() and value.isascii()):
                raise ClientError(f"the header {name!r} is not ASCII: HTTP headers must be (encode the value first)")
        self.url = url
        self.max_message_bytes = max_message_bytes
        self._origin = _origin(httpx.URL(url))
        self.headers = dict(headers or {})
        self.auth = auth
        self.timeout = timeout
        self.on_message: Any = lambda data: None
        self.on_close: Any = lambda reason: None
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self._http: httpx.AsyncClient | None = None
        self._tasks: dict[Any, asyncio.Task[None]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._background: set[asyncio.Task[None]] = set()
        self._initialize: bytes | None = None
        #: Requests a re-opened session is sent again, by what they set.
        self._session_state: dict[str, bytes] = {}
        self._tool_headers: dict[str, dict[str, tuple[str, ...]]] = {}
        self._listing: set[Any] = set()
        self._endpoint: str | None = None  # HTTP+SSE (2024-11-05): where to POST
        self.legacy_sse = legacy_sse
        #: Set once the legacy GET stream is open (or refused): requests wait for it, so that
        #: a server asking something while answering them has a stream to ask on.
        self._listening: asyncio.Event | None = None
        self._closed = False
        #: POSTs go straight to the connection pool while httpx's client layer would add nothing.
        self._direct: DirectRoute | None = None
        #: The headers of every POST, for the session id and version they were made for.
        self._post_headers: tuple[tuple[str | None, str | None], dict[str, str]] | None = None

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()  # kept: looking it up makes a system call (Python 3.11)
        transport = None if urllib.request.getproxies() else Http11Transport()  # a proxy: httpx's own
        self._http = httpx.AsyncClient(
            timeout=httpx.Timeout(self.timeout, read=None),
            follow_redirects=True,
            auth=self.auth,
            transport=transport,
            headers={"Accept-Encoding": "gzip, deflate"},  # what Reply decodes a step at a time
            event_hooks={"response": [self._same_origin]},
        )
        if transport is not None:
            direct = DirectRoute(self._http, transport, self.url)
            self._direct = direct if direct.allows(self.headers) else None

    # -- sending -----------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        """POST one message, in the background (its answers arrive through ``on_message``)."""
        if self._closed:
            return
        message = orjson.loads(data)
        if message.get("method") == "notifications/cancelled":
            self._cancel(message)  # its answer is read no more
            if self._modern(message):
                return  # 2026-07-28: closing the stream is the cancellation
        if "method" not in message or "id" not in message:
            self._spawn(self._post(data, message))  # notifications, and answers to the server
            return
        id = message["id"]
        loop = self._loop or asyncio.get_running_loop()
        task = self._tasks[id] = loop.create_task(self._post(data, message))
        task.add_done_callback(lambda _: self._tasks.pop(id, None) if self._tasks.get(id) is task else None)

    send_soon = send

    async def close(self) -> None:
        """Stop every exchange; a legacy session is ended with ``DELETE``."""
        if self._closed:
            return
        self._closed = True
        for task in [*self._tasks.values(), *self._background]:
            task.cancel()
        await asyncio.gather(*self._tasks.values(), *self._background, return_exceptions=True)
        if self._http is not None:
            if self.session_id is not None:
                with contextlib.suppress(httpx.HTTPError):
                    await (await self._send("DELETE", self.url, self._session_headers(), timeout=2.0)).aclose()
            await self._http.aclose()

    async def _same_origin(self, response: httpx.Response) -> None:
        """httpx's response hook: a redirect from the server's origin to another one is
        refused (:class:`Refused`), since the configured headers (credentials) and the
        session id would go there with the request; other requests (authorization's) pass."""
        if not response.has_redirect_location or _origin(response.request.url) != self._origin:
            return
        target = response.request.url.join(response.headers["location"])
        if _origin(target) != self._origin:
            raise Refused(
                f"the server redirected {response.request.method} {response.request.url} to another origin "
                f"({target.scheme}://{target.netloc.decode()}): not followed, since the request's headers and "
                "session id would go there; connect to that URL instead if it is to be trusted"
            )

    async def _send(
        self, method: str, url: str, headers: dict[str, str], content: bytes | None = None, timeout: float | None = None
    ) -> Reply:
        """A request through httpx's client; its answer once the head has come, to be closed
        after. Raises httpx's exceptions, and :class:`Refused`."""
        assert self._http is not None
        request = self._http.build_request(
            method, url, content=content, headers=headers, timeout=timeout or httpx.USE_CLIENT_DEFAULT
        )
        return Reply(await self._http.send(request, stream=True))

    def _modern(self, message: dict[str, Any]) -> bool:
        """Whether the connection speaks 2026-07-28 (no handshake was made)."""
        return self._initialize is None

    def _cancel(self, message: dict[str, Any]) -> None:
        params = message.get("params") or {}
        task = self._tasks.pop(params.get("requestId"), None)
        if task is not None:
            task.cancel()

    def _session_headers(self) -> dict[str, str]:
        headers = dict(self.headers)
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        return headers

    def _request_headers(self, message: dict[str, Any]) -> dict[str, str]:
        key = (self.session_id, self.protocol_version)
        cached = self._post_headers
        if cached is None or cached[0] != key:
            cached = self._post_headers = (
                key,
                {**self._session_headers(), "Accept": ACCEPT, "Content-Type": "application/json"},
            )
        headers = cached[1].copy()
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        meta = params.get("_meta")
        version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
        method = message.get("method")
        if isinstance(version, str) and isinstance(method, str):
            parameters = self._tool_headers.get(params.get("name", "")) if method == "tools/call" else None
            headers.update(http_headers.request_headers(version, method, params, parameters))
        return headers

    async def _post(self, data: bytes, message: dict[str, Any], retried: bool = False) -> None:
        assert self._http is not None
        method = message.get("method")
        if method == "initialize":
            self._initialize = data
        self._remember(method, message, data)
        if method == "tools/list":
            self._listing.add(message.get("id"))
        if self._endpoint is None and self.legacy_sse and "id" in message and not await self._open_sse_transport():
            self._answer_error(message, None, b"", f"{self.url} offers no HTTP+SSE event stream")
            return
        if self._endpoint is not None:
            await self._post_to_endpoint(data, message)
            return
        if self._listening is not None and not self._listening.is_set() and "id" in message:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._listening.wait(), self.LISTEN_WAIT)
        try:
            reply = await self._open(data, self._request_headers(message))
            try:
                if method == "initialize" and reply.status_code < 300:
                    self.session_id = reply.headers.get("mcp-session-id")
                if reply.status_code == 404 and self.session_id is not None and not retried and method != "initialize":
                    await reply.aread(self.max_message_bytes)
                    await self._reinitialize()
                    await self._post(data, message, retried=True)
                    return
                if method == "initialize" and reply.status_code in (400, 404, 405):
                    body = await reply.aread(self.max_message_bytes)
                    if self.legacy_sse is None and not _modern_error(body) and await self._open_sse_transport():
                        await self._post_to_endpoint(data, message)
                        return
                    self._answer_error(message, reply.status_code, body)
                    return
                await self._receive(reply, message)
            finally:
                await reply.aclose()
        except Refused as exc:
            self._refused(message, exc)
        except AuthorizationError as exc:
            self._answer_error(message, None, b"", f"authorization failed: {exc}", AUTHORIZATION_FAILED)
        except httpx.HTTPError as exc:
            self._unreachable(exc)
        except Exception as exc:  # whatever else failed, the request is answered: nothing waits forever
            log.exception("sending %s failed", method)
            self._answer_error(message, None, b"", f"the request could not be sent: {type(exc).__name__}: {exc}")
        if method == "notifications/initialized" and self.session_id is not None:
            self._listening = asyncio.Event()
            self._spawn(self._listen(self._listening))

    async def _open(self, data: bytes, headers: dict[str, str]) -> Reply:
        """POST ``data``; the answer once its head has come, to be closed after: on the
        direct route while it holds, else (and for a redirect, sent again) through httpx's
        client. Raises httpx's exceptions."""
        assert self._http is not None
        direct = self._direct
        if direct is not None and direct.usable:
            reply = await direct.send("POST", headers, data)
            if reply is not None:
                return reply
        return await self._send("POST", self.url, headers, data)

    async def _receive(self, reply: Reply, message: dict[str, Any]) -> None:
        """Deliver what a POST's answer holds: nothing (202), JSON, or a stream's events."""
        kind = reply.headers.get("content-type", "").split(";")[0].strip().lower()
        if reply.status_code == 202:
            return
        if kind == "text/event-stream":
            stream = StreamPosition()
            answered = await self._read_stream(reply, stream, message.get("id"))
            if not answered and "id" in message and "method" in message:
                await self._resume(stream, message)
            return
        body = await reply.aread(self.max_message_bytes)
        if reply.status_code >= 400 or kind != "application/json":
            self._answer_error(message, reply.status_code, body)
            return
        self._deliver(body)

    async def _read_stream(self, reply: Reply, stream: StreamPosition, id: Any) -> bool:
        """Deliver a stream's messages; whether the answer to ``id`` was among them.
        Raises :class:`Refused` (an event too large)."""
        answered = False
        limit = self.max_message_bytes
        try:
            async for event in read_events(reply.aiter_lines(limit), limit):
                if event.id is not None:
                    stream.last_id = event.id
                if event.retry is not None:
                    stream.retry_ms = event.retry
                data = "\n".join(event.data).encode()
                if not data:
                    continue  # a priming event: only its id and retry matter
                if id is not None and _answers(data, id):
                    answered = True
                self._deliver(data)
        except Refused:
            raise
        except httpx.HTTPError:
            pass  # the connection dropped: resumed below when the server made it resumable
        return answered

    async def _resume(self, stream: StreamPosition, message: dict[str, Any]) -> None:
        """Get the rest of a stream that ended before its answer: ``GET`` with
        ``Last-Event-ID`` after the announced delay, a few times at most. A server that can
        no longer be reached closes the transport; one that cannot resume fails the request."""
        assert self._http is not None
        headers = {**self._session_headers(), "Accept": "text/event-stream"}
        for _ in range(MAX_RESUMES):
            if stream.last_id is not None:
                await asyncio.sleep(stream.retry_ms / 1000)
                headers["Last-Event-ID"] = stream.last_id
            try:
                reply = await self._send("GET", self.url, headers)
                try:
                    if reply.status_code != 200 or stream.last_id is None:
                        break  # only asked whether the server is still there
                    if await self._read_stream(reply, stream, message.get("id")):
                        return
                finally:
                    await reply.aclose()
            except httpx.ConnectError as exc:
                self._unreachable(exc)
                return
            except Refused as exc:
                self._refused(message, exc)
                return
            except AuthorizationError as exc:
                self._answer_error(message, None, b"", f"authorization failed: {exc}", AUTHORIZATION_FAILED)
                return
            except httpx.HTTPError:
                continue
        self._answer_error(message, None, b"", "the server's stream ended before the answer and could not be resumed")

    async def _listen(self, open: asyncio.Event) -> None:
        """The legacy ``GET`` stream: what the server sends outside any request. ``open`` is
        set once it is open, or refused."""
        assert self._http is not None
        stream = StreamPosition()
        try:
            while not self._closed:  # reconnected for as long as the session lasts
                headers = {**self._session_headers(), "Accept": "text/event-stream"}
                if stream.last_id is not None:
                    headers["Last-Event-ID"] = stream.last_id
                try:
                    reply = await self._send("GET", self.url, headers)
                    try:
                        open.set()
                        if reply.status_code != 200:
                            return  # 405: the server offers no such stream
                        await self._read_stream(reply, stream, None)
                    finally:
                        await reply.aclose()
                except TooLarge as exc:
                    log.warning("the server's event stream is closed: %s", _too_large("a message on it", exc.limit))
                    return
                except Refused as exc:
                    log.warning("the server's event stream is closed: %s", exc)
                    return
                except AuthorizationError as exc:
                    log.warning("the server's event stream cannot be opened: %s", exc)
                    return
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(stream.retry_ms / 1000)
        finally:
            open.set()

    async def _reinitialize(self) -> None:
        """The session expired: open a new one with the same ``initialize``."""
        assert self._http is not None and self._initialize is not None
        self.session_id = None
        message = orjson.loads(self._initialize)
        headers = {**self.headers, "Accept": ACCEPT, "Content-Type": "application/json"}
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version
        status = await self._post_aside(self._initialize, headers)
        if status >= 300:
            self.on_close(f"the session expired and a new one could not be opened (HTTP {status})")
            return
        log.info("the session expired: a new one was opened")
        notice = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await self._post_aside(notice, self._request_headers(message))
        for data in self._session_state.values():  # the log level, resource subscriptions
            await self._post_aside(data, self._request_headers(orjson.loads(data)))
        if self._listening is not None:
            self._listening = asyncio.Event()
            self._spawn(self._listen(self._listening))

    async def _post_aside(self, data: bytes, headers: dict[str, str]) -> int:
        """POST what re-opens a session; its status (its answer is read, then dropped; an
        ``initialize`` answer's session id is kept)."""
        reply = await self._send("POST", self.url, headers, data)
        try:
            if orjson.loads(data).get("method") == "initialize":
                self.session_id = reply.headers.get("mcp-session-id")
            await reply.aread(self.max_message_bytes)
        finally:
            await reply.aclose()
        return reply.status_code

    def _remember(self, method: Any, message: dict[str, Any], data: bytes) -> None:
        """Note what a new session must be told again: the log level, the subscriptions."""
        params = message.get("params") or {}
        if method == "logging/setLevel":
            self._session_state[method] = data
        elif method == "resources/subscribe":
            self._session_state[f"subscribe {params.get('uri')}"] = data
        elif method == "resources/unsubscribe":
            self._session_state.pop(f"subscribe {params.get('uri')}", None)

    # -- HTTP+SSE (2024-11-05) ---------------------------------------------------------------

    async def _open_sse_transport(self) -> bool:
        """Try the old transport: a ``GET`` stream whose first event names the POST endpoint."""
        ready: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._spawn(self._sse_transport(ready))
        endpoint = await ready
        if endpoint is None:
            return False
        self._endpoint = endpoint
        return True

    async def _sse_transport(self, ready: asyncio.Future[str | None]) -> None:
        """The old transport's stream; ``ready`` gets the endpoint (``None``: no such stream;
        :class:`Refused`: an endpoint at another origin)."""
        limit = self.max_message_bytes
        try:
            reply = await self._send("GET", self.url, {**self.headers, "Accept": "text/event-stream"})
            try:
                if reply.status_code != 200:
                    ready.set_result(None)
                    return
                async for event in read_events(reply.aiter_lines(limit), limit):
                    data = "\n".join(event.data)
                    if event.event == "endpoint" and not ready.done():
                        endpoint = urljoin(self.url, data)
                        if _origin(httpx.URL(endpoint)) != self._origin:
                            ready.set_exception(Refused(f"the server's endpoint {endpoint} is at another origin"))
                            return
                        ready.set_result(endpoint)
                    elif data and ready.done():
                        self._deliver(data.encode())
            finally:
                await reply.aclose()
        except httpx.HTTPError as exc:
            if not ready.done():
                ready.set_result(None)
            elif isinstance(exc, TooLarge):
                self.on_close(_too_large("a message of the server's event stream", exc.limit))
            else:
                self._unreachable(exc)
            return
        if not ready.done():
            ready.set_result(None)
        elif not self._closed:
            self.on_close("the server closed its event stream")

    async def _post_to_endpoint(self, data: bytes, message: dict[str, Any]) -> None:
        assert self._endpoint is not None
        try:
            reply = await self._send("POST", self._endpoint, {**self.headers, "Content-Type": "application/json"}, data)
            try:
                if reply.status_code >= 400:
                    self._answer_error(message, reply.status_code, await reply.aread(self.max_message_bytes))
            finally:
                await reply.aclose()
        except Refused as exc:
            self._refused(message, exc)
        except httpx.HTTPError as exc:
            self._unreachable(exc)

    # -- delivering ----------------------------------------------------------------------------

    def _deliver(self, data: bytes) -> None:
        """Hand one message to the client, after noting what the transport needs of it: the
        version an ``initialize`` answer names, the tools a ``tools/list`` answer lists."""
        if self._listing and (b"tools" in data):
            data = screen_tools(data, self._listing, self._tool_headers)
        if self._initialize is not None and self.protocol_version is None:
            with contextlib.suppress(orjson.JSONDecodeError, AttributeError):
                result = orjson.loads(data).get("result") or {}
                if isinstance(result.get("protocolVersion"), str):
                    self.protocol_version = result["protocolVersion"]
        self.on_message(data)

    def _answer_error(
        self, message: dict[str, Any], status: int | None, body: bytes, reason: str = "", code: int = -32000
    ) -> None:
        """The error answer for a request the server refused: its own JSON-RPC error when the
        body holds one, else one that names the HTTP status."""
        id = message.get("id")
        if id is None or "method" not in message:
            if status is not None and status >= 400:
                log.warning("the server refused a %s with HTTP %s", message.get("method", "response"), status)
            return
        with contextlib.suppress(orjson.JSONDecodeError, AttributeError, TypeError):
            answer = orjson.loads(body)
            if isinstance(answer, dict) and isinstance(answer.get("error"), dict):
                answer["id"] = id
                self.on_message(orjson.dumps(answer))
                return
        text = reason or f"HTTP {status} from {self.url}" + (f": {body[:200].decode(errors='replace')}" if body else "")
        self.on_message(orjson.dumps({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": text}}))

    def _refused(self, message: dict[str, Any], exc: Refused) -> None:
        """Answer a request whose answer was refused, saying why (and how to raise a limit)."""
        what = f"the server's answer to {message.get('method')}"
        self._answer_error(message, None, b"", _too_large(what, exc.limit) if isinstance(exc, TooLarge) else str(exc))

    def _unreachable(self, exc: Exception) -> None:
        if not self._closed:
            self.on_close(f"cannot reach {self.url}: {type(exc).__name__}: {exc}")

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


def _answers(data: bytes, id: Any) -> bool:
    try:
        message = orjson.loads(data)
    except orjson.JSONDecodeError:
        return False
    return isinstance(message, dict) and message.get("id") == id and "method" not in message


def _modern_error(body: bytes) -> bool:
    try:
        answer = orjson.loads(body)
    except orjson.JSONDecodeError:
        return False
    error = answer.get("error") if isinstance(answer, dict) else None
    # an era's error, or a 2026-07-28-only server that knows no initialize
    return isinstance(error, dict) and (error.get("code") in MODERN_ERRORS or error.get("code") == METHOD_NOT_FOUND)


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port or {"http": 80, "https": 443}.get(url.scheme)


def _too_large(what: str, limit: int) -> str:
    return (
        f"{what} is larger than max_message_bytes ({limit} bytes): "
        "raise it with Client(..., max_message_bytes=...) if it is expected"
    )
