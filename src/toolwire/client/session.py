"""The JSON-RPC side of a client connection: ids, answers, server requests, notifications.

:class:`ClientSession` numbers requests, matches answers to them, hands notifications to
its ``on_notification`` callback and runs the server's own requests (legacy servers ask for
elicitation, sampling, ping) through ``on_request``. When the server misbehaves every
request waiting on it fails at once with an error that says how; nothing waits forever.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import orjson

from ..logs import get_logger
from ..protocol.errors import INTERNAL_ERROR
from .errors import ConnectionClosed, ProtocolViolation, RequestTimeout, ServerError
from .transports import Transport

if TYPE_CHECKING:
    from .telemetry import ClientTelemetry

log = get_logger("toolwire.client")

RequestHandler = Callable[[str, dict[str, Any]], Awaitable[Any]]
NotificationHandler = Callable[[str, dict[str, Any]], None]


class ClientSession:
    """Requests and answers over one transport."""

    def __init__(
        self,
        transport: Transport,
        on_request: RequestHandler,
        on_notification: NotificationHandler,
        on_closed: Callable[[str], Any] | None = None,
        telemetry: ClientTelemetry | None = None,
    ) -> None:
        self.transport = transport
        self.telemetry = telemetry
        self._on_closed = on_closed
        self._encoding = orjson.OPT_APPEND_NEWLINE if transport.newline else 0
        self._on_request = on_request
        self._on_notification = on_notification
        self._next_id = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._long_lived: set[int] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.closed: str | None = None
        transport.on_message = self._message
        transport.on_close = self._closed

    def start(
        self,
        method: str,
        params: dict[str, Any] | None,
        long_lived: bool = False,
    ) -> tuple[int, asyncio.Future[Any]]:
        """Send a request; returns its id and the future of its result (or error).

        ``long_lived``: a request answered only at the end (``subscriptions/listen``), which
        does not count as in flight when deciding whether messages may leave together."""
        if self.closed is not None:
            raise ConnectionClosed(self.closed)
        self._next_id = id = self._next_id + 1
        loop = self._loop
        if loop is None:
            loop = self._loop = asyncio.get_running_loop()
        pending = self._pending
        pending[id] = future = loop.create_future()
        if self.telemetry is not None:
            params, opened = self.telemetry.begin(method, params, id)
            future.add_done_callback(lambda done: self.telemetry.end(opened, done))  # type: ignore[union-attr]
        if params is None:
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        else:
            message = {"jsonrpc": "2.0", "id": id, "method": method, "params": params}
        data = orjson.dumps(message, option=self._encoding)
        if long_lived:
            self._long_lived.add(id)
        if len(pending) - len(self._long_lived) > 1:
            self.transport.send_soon(data)  # others are in flight: leave together with theirs
        else:
            self.transport.send(data)
        return id, future

    async def request(self, method: str, params: dict[str, Any] | None = None, timeout: float | None = None) -> Any:
        """The result of ``method``; :class:`ServerError`, :class:`RequestTimeout` (the
        request is then cancelled), :class:`ConnectionClosed` or :class:`ProtocolViolation`."""
        id, future = self.start(method, params)
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            self.cancel(id, "timed out")
            raise RequestTimeout(f"no answer to {method} within {timeout} s") from None
        except asyncio.CancelledError:
            self.cancel(id, "cancelled by the client")
            raise

    def cancel(self, id: int, reason: str) -> None:
        """Forget request ``id`` and tell the server to stop working on it."""
        self._long_lived.discard(id)
        future = self._pending.pop(id, None)
        if future is not None and not future.done():
            future.cancel()
        if self.closed is None:
            self.notify("notifications/cancelled", {"requestId": id, "reason": reason})

    def forget(self, id: int) -> None:
        self._pending.pop(id, None)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if self.closed is None:
            self.transport.send(orjson.dumps(message, option=self._encoding))

    # -- input -----------------------------------------------------------------------------

    def _message(self, data: bytes) -> None:
        try:
            message = orjson.loads(data)
        except orjson.JSONDecodeError:
            text = data[:200].decode(errors="replace")
            self._fail_all(ProtocolViolation(f"the server wrote something that is not JSON: {text!r}"))
            return
        if type(message) is dict and "result" in message and "method" not in message:
            id = message.get("id")  # the common case: a plain answer to a request waiting
            future = self._pending.get(id) if type(id) is int else None
            if future is not None and id not in self._long_lived and not future.done():
                del self._pending[id]  # type: ignore[arg-type]
                future.set_result(message["result"])
                return
        for item in message if type(message) is list else [message]:
            self._one(item)

    def _one(self, message: Any) -> None:
        if type(message) is not dict or message.get("jsonrpc") != "2.0":
            self._fail_all(ProtocolViolation(f"the server sent something that is not JSON-RPC 2.0: {message!r:.200}"))
            return
        method = message.get("method")
        if method is None:
            self._answer(message)
        elif "id" in message:
            task = asyncio.get_running_loop().create_task(self._serve(message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        else:
            params = message.get("params")
            self._on_notification(method, params if type(params) is dict else {})

    def _answer(self, message: dict[str, Any]) -> None:
        id = message.get("id")
        future = self._pending.pop(id, None) if type(id) is int else None
        if future is not None and self._long_lived:
            self._long_lived.discard(id)
        if future is None:
            if id is None and "error" in message:  # an error about a message it could not read
                error = message["error"]
                self._fail_all(ServerError(error.get("code", 0), error.get("message", ""), error.get("data")))
            elif type(id) is not int or id > self._next_id:
                self._fail_all(ProtocolViolation(f"the server answered id {id!r}, which no request has"))
            return  # an answer to a request given up on (cancelled, timed out): dropped
        if future.done():
            return
        error = message.get("error")
        if error is not None:
            if type(error) is not dict:
                future.set_exception(ProtocolViolation(f"malformed error object: {error!r:.200}"))
            else:
                future.set_exception(
                    ServerError(error.get("code", 0), str(error.get("message", "")), error.get("data"))
                )
        elif "result" in message:
            future.set_result(message["result"])
        else:
            future.set_exception(ProtocolViolation("an answer with neither result nor error"))

    async def _serve(self, message: dict[str, Any]) -> None:
        """Answer a request from the server (legacy era: elicitation, sampling, ping)."""
        id = message["id"]
        params = message.get("params")
        try:
            result = await self._on_request(message["method"], params if type(params) is dict else {})
            answer: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "result": result}
        except ServerError as exc:
            error = {"code": exc.code, "message": exc.message}
            answer = {"jsonrpc": "2.0", "id": id, "error": error}
        except Exception as exc:
            log.warning("answering the server's %s failed", message["method"], exc_info=True)
            answer = {"jsonrpc": "2.0", "id": id, "error": {"code": INTERNAL_ERROR, "message": f"client error: {exc}"}}
        if self.closed is None:
            self.transport.send(orjson.dumps(answer, option=self._encoding))

    def _fail_all(self, error: Exception, quiet: bool = False) -> None:
        """Fail every request waiting: which of them the problem was about cannot be known."""
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(error)
        if not pending and not quiet:
            log.warning("%s", error)

    def _closed(self, reason: str) -> None:
        """The transport ended: fail what waits, then tell ``on_closed`` (not called when
        the client closed the connection itself)."""
        if self.closed is None:
            self.closed = reason
            self._fail_all(ConnectionClosed(reason), quiet=True)
            if self._on_closed is not None:
                self._on_closed(reason)

    async def close(self) -> None:
        self._on_closed = None
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._closed("the client closed the connection")
