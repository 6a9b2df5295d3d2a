"""What both eras of the Streamable HTTP endpoint share about one ASGI request: refusing it
(:class:`HttpError`), reading its headers and body, and serving its response stream beside
the calls it started while watching for the client going away."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import orjson

from ...protocol.errors import INVALID_REQUEST, ProtocolError
from ...protocol.incoming import RequestId
from ...protocol.versions import META_PROTOCOL_VERSION
from ...server.session import EAGER_TASKS
from ...server.stepping import at_once
from .wire.request import Request as WireRequest

if TYPE_CHECKING:
    from ...server.session import ServerSession

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class HttpError(Exception):
    """A refusal before any JSON-RPC processing: HTTP ``status`` and a JSON-RPC error (and
    ``headers`` to send with it)."""

    def __init__(
        self,
        status: int,
        code: int,
        message: str,
        id: RequestId | None = None,
        data: Any = None,
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.error = ProtocolError(code, message, data)
        self.id = id
        self.headers = headers or []

    def body(self) -> bytes:
        return orjson.dumps({"jsonrpc": "2.0", "id": self.id, "error": self.error.to_dict()})


def route_path(scope: Scope) -> str:
    """The request's path below where the app is mounted (``root_path``), if it is."""
    path: str = scope.get("path", "")
    root: str = scope.get("root_path", "")
    return path[len(root) :] if root and path.startswith(root) else path


def headers(scope: Scope) -> dict[str, str]:
    """Request headers by name (ASGI servers give names in lower case; the last one wins
    for repeated names)."""
    return {name.decode("latin-1"): value.decode("latin-1") for name, value in scope.get("headers", ())}


@functools.lru_cache(maxsize=256)
def accepts_json_and_sse(accept: str) -> bool:
    return accepts(accept, "application/json") and accepts(accept, "text/event-stream")


@functools.lru_cache(maxsize=256)
def accepts(accept: str, kind: str) -> bool:
    major = kind.split("/")[0]
    for item in accept.split(","):
        media = item.split(";")[0].strip().lower()
        if media in (kind, "*/*", f"{major}/*"):
            return True
    return False


def request_id(message: Any) -> RequestId | None:
    id = message.get("id") if isinstance(message, dict) else None
    return id if isinstance(id, (str, int)) and not isinstance(id, bool) else None


def meta_version(message: Any) -> Any:
    if not isinstance(message, dict):
        return None
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None


def is_initialize(message: Any) -> bool:
    return isinstance(message, dict) and message.get("method") == "initialize"


def body_at_once(headers: dict[str, str], receive: Receive, limit: int) -> bytes | None:
    """The request's body when toolwire's own server has it all, without a coroutine (413
    past ``limit`` bytes, as :func:`read_body`); ``None`` otherwise: then :func:`read_body`
    reads it."""
    request = getattr(receive, "__self__", None)
    body = request.whole_body() if type(request) is WireRequest else None  # taken: not twice
    if body is not None and len(body) > limit:
        raise _too_large(headers, limit)
    return body


def _declares_past(headers: dict[str, str], limit: int) -> bool:
    """Whether the request's ``Content-Length`` is past ``limit`` bytes."""
    declared = headers.get("content-length")
    return declared is not None and declared.isascii() and declared.isdigit() and int(declared) > limit


def _too_large(headers: dict[str, str], limit: int) -> HttpError:
    """413 for a body past ``limit`` bytes, naming the length it declared if it declared one
    (a Content-Length toolwire's own server has is the body's length: its parser holds the
    body to it)."""
    if _declares_past(headers, limit):
        declared = headers["content-length"]
        return HttpError(413, INVALID_REQUEST, f"Payload too large: {declared} bytes exceeds the limit of {limit}")
    return HttpError(413, INVALID_REQUEST, f"Payload too large: the body exceeds the limit of {limit} bytes")


async def read_body(headers: dict[str, str], receive: Receive, limit: int, timeout: float) -> bytes:
    """The request's body: 413 past ``limit`` bytes, 408 (and the connection closed)
    when it takes longer than ``timeout`` seconds (timed only when it is not all there at
    once, as it nearly always is), 400 when the client goes away first."""
    body = body_at_once(headers, receive, limit)
    if body is not None:
        return body
    if _declares_past(headers, limit):
        raise _too_large(headers, limit)
    message: Any
    message, rest = at_once(receive())
    if rest is None and message["type"] == "http.request" and not message.get("more_body"):
        body = bytes(message.get("body", b""))
    if body is not None:
        if len(body) > limit:
            raise _too_large(headers, limit)
        return body
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout):
            while True:
                if rest is not None:
                    message, rest = await rest, None
                elif message is None:
                    message = await receive()
                if message["type"] == "http.disconnect":
                    raise HttpError(400, INVALID_REQUEST, "the client went away while sending the body")
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    problem = f"Payload too large: the body exceeds the limit of {limit} bytes"
                    raise HttpError(413, INVALID_REQUEST, problem)
                chunks.append(chunk)
                if not message.get("more_body"):
                    return b"".join(chunks)
                message = None
    except TimeoutError:
        problem = f"Request timeout: the body did not arrive within {timeout:g} s"
        raise HttpError(408, INVALID_REQUEST, problem, headers=[(b"connection", b"close")]) from None


def first_steps(session: ServerSession, events: list[Any]) -> Awaitable[None] | None:
    """Hand a POST's ``events`` to ``session``, and let the calls they start take their first
    step before the answer is waited for: most tools finish in it, and their answer then
    goes out whole, without the machinery of waiting (a disconnect watcher, wake-ups,
    keep-alive timers). Python 3.12 and later start calls at once (eager tasks). On 3.11 a
    call runs in this task (see :meth:`ServerSession.handle_inline`), and when it waits the
    rest of it is returned, to be awaited by the caller; other calls take their first step
    at the loop's next turn (see :func:`first_turn`)."""
    if EAGER_TASKS:
        session.handle(events)
        return None
    work = session.handle_inline(events)
    if work is None:
        return None
    _, rest = at_once(work)
    return rest


async def first_turn() -> None:
    """Let calls started as tasks take their first step (Python 3.11: at the loop's next
    turn; on 3.12 and later they took it already), when :func:`first_steps` left answers
    to come."""
    if not EAGER_TASKS:
        await asyncio.sleep(0)


async def stream_beside(
    rest: Awaitable[None] | None,
    receive: Receive,
    serve: Callable[[asyncio.Event], Awaitable[bool | None]],
    gone: Callable[[], None] | None = None,
) -> None:
    """Serve the response stream (``serve(disconnected)``: true once it completed) while
    watching for the client going away, and call ``gone()`` if it did not complete. With
    ``rest`` (a call running in this task, from :func:`first_steps`), the stream is served
    from a task of its own while this one finishes the call; if this task is cancelled,
    so is the stream."""

    async def streaming() -> None:
        async with watch_disconnect(receive) as disconnected:
            completed = await serve(disconnected)
        if not completed and gone is not None:
            gone()

    if rest is None:
        await streaming()
        return
    streamer = asyncio.get_running_loop().create_task(streaming())
    try:
        await rest
    except BaseException:
        streamer.cancel()
        raise
    await streamer


async def watching_disconnect(receive: Receive, serve: Callable[[asyncio.Event], Awaitable[None]]) -> None:
    """``serve(disconnected)`` within :func:`watch_disconnect` (for code the compiled build
    compiles, which holds no ``async with``: see :data:`toolwire.build.COMPILED`)."""
    async with watch_disconnect(receive) as disconnected:
        await serve(disconnected)


@contextlib.asynccontextmanager
async def watch_disconnect(receive: Receive) -> Any:
    """An event set when the client goes away, watched for as long as the block runs."""
    disconnected = asyncio.Event()

    async def watch() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        disconnected.set()

    watcher = asyncio.ensure_future(watch())
    try:
        yield disconnected
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await watcher
