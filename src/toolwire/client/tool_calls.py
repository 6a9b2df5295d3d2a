"""Tools seen from the client: listing them (a 2026-07-28 list kept while its ``ttlMs`` lasts)
and calling them, each call watched for its deadline (which its progress moves, up to a limit)
and its structured content checked against the tool's outputSchema."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from ..protocol.errors import MISSING_REQUIRED_CLIENT_CAPABILITY
from ..protocol.versions import MODERN_VERSIONS
from .errors import OutputSchemaMismatch, ProtocolViolation, RequestTimeout, ServerError, ToolCallFailed
from .input_rounds import MAX_INPUT_ROUNDS
from .progress import ProgressCallback, progress_token
from .task_calls import needs_tasks
from .types import CallToolResult, ToolInfo

if TYPE_CHECKING:
    from .session import ClientSession

#: How often deadlines of calls in flight are checked (seconds): a timeout's resolution.
WATCH_INTERVAL = 0.05
#: The clock of call deadlines.
_monotonic = time.monotonic


class ToolCalls:
    """The :class:`~toolwire.client.Client`'s tool methods (a mixin of it)."""

    if TYPE_CHECKING:
        timeout: float
        version: str | None
        pins: dict[str, dict[str, str]] | None
        _session: ClientSession
        _tools: dict[str, ToolInfo]
        _tools_fresh_until: float
        _tools_valid: bool
        _validators: dict[str, Any]
        _progress: dict[str | int, ProgressCallback]
        _watched: dict[int, WatchedCall]
        _watchdog: asyncio.TimerHandle | None

        @property
        def modern(self) -> bool: ...

        def _params(self, params: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]: ...

        async def _walk(self, method: str, key: str) -> tuple[list[dict[str, Any]], float]: ...

        async def _retry(self, params: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]: ...

        def _check_pin(self, name: str, tool: ToolInfo | None) -> None: ...

        def _may_be_task(self, tool: ToolInfo | None) -> bool: ...

        def _must_be_task(self, tool: ToolInfo | None) -> bool: ...

        async def _call_as_task(
            self,
            name: str,
            arguments: dict[str, Any] | None,
            progress: ProgressCallback | None,
            max_timeout: float | None,
            meta: dict[str, Any] | None,
        ) -> dict[str, Any]: ...

    async def list_tools(self, *, refresh: bool = False) -> list[ToolInfo]:
        """Every tool, walking all pages. A 2026-07-28 list is reused while its ``ttlMs``
        lasts and no change was announced; ``refresh`` fetches it anyway."""
        if not refresh and self._tools_valid and time.monotonic() < self._tools_fresh_until:
            return list(self._tools.values())
        listed, ttl = await self._walk("tools/list", "tools")
        if not all(type(tool.get("name")) is str for tool in listed):
            raise ProtocolViolation("the server listed a tool without a string name")
        tools = {info.name: info for info in map(ToolInfo.from_dict, listed)}
        self._tools = tools
        self._validators = {}
        self._tools_valid = True
        self._tools_fresh_until = time.monotonic() + ttl / 1000 if self.modern else 0.0
        return list(tools.values())

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        progress: ProgressCallback | None = None,
        timeout: float | None = None,
        max_timeout: float | None = None,
        raise_on_error: bool = False,
        meta: dict[str, Any] | None = None,
        task: bool = False,
    ) -> CallToolResult:
        """Call a tool; returns its :class:`CallToolResult`.

        ``progress(progress, total, message)`` receives progress notifications, each of which
        resets the ``timeout`` (default: the client's), up to ``max_timeout`` in all (default:
        ten times ``timeout``). Cancelling the awaiting task cancels the call on the server.
        ``task=True`` runs the call as a task where the server allows it (see
        :meth:`start_task`) and in its request where it does not, in every era (a 2025-11-25
        tool whose ``taskSupport`` is ``forbidden``, a server that runs no task, a 2026-07-28
        server that answers at once); a call that must be a task (2025-11-25: the tool says
        ``taskSupport: required``; 2026-07-28: the server answers ``-32021`` naming the tasks
        extension) becomes one by itself. A task is waited for without a time limit unless
        ``max_timeout`` is given.
        Raises :class:`ServerError` (unknown tool, invalid arguments in older versions...),
        :class:`ToolCallFailed` for an ``isError`` result when ``raise_on_error``,
        :class:`OutputSchemaMismatch` when structured content is missing or breaks the tool's
        outputSchema,
        :class:`ToolChanged` when pinned and the tool changed, :class:`RequestTimeout`, and
        :class:`~toolwire.client.tasks.TaskCancelled` for a task cancelled meanwhile.
        """
        tool = self._tools.get(name)
        if tool is None and not self._tools_valid:
            tool = await self._tool(name)
        if self.pins is not None:
            self._check_pin(name, tool)
        if (task and self._may_be_task(tool)) or self._must_be_task(tool):
            result = await self._call_as_task(name, arguments, progress, max_timeout, meta)
        else:
            try:
                result = await self._call_once(name, arguments, progress, timeout, max_timeout, meta)
            except ServerError as exc:
                if not (self.modern and exc.code == MISSING_REQUIRED_CLIENT_CAPABILITY and needs_tasks(exc.data)):
                    raise
                result = await self._call_as_task(name, arguments, progress, max_timeout, meta)
        call = CallToolResult.from_dict(result)
        if tool is not None and tool.output_schema is not None and not call.is_error:
            self._check_output(tool, result)
        if raise_on_error and call.is_error:
            raise ToolCallFailed(call)
        return call

    async def _call_once(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        progress: ProgressCallback | None,
        timeout: float | None,
        max_timeout: float | None,
        meta: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """The result of a call in its request (2026-07-28: round after round of questions)."""
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        for _ in range(MAX_INPUT_ROUNDS):
            id, future, token = self._start_call(params, progress, timeout, max_timeout, meta)
            try:
                result: dict[str, Any] = await future
            except asyncio.CancelledError:
                self._session.cancel(id, "cancelled by the client")
                raise
            finally:
                self._watched.pop(id, None)  # gone already if it timed out
                if token is not None:
                    self._progress.pop(token, None)
            kind = result.get("resultType")
            if kind is None or kind == "complete":
                return result
            if kind != "input_required":
                raise ProtocolViolation(f"unknown resultType {kind!r}")
            params = await self._retry({"name": name, "arguments": arguments or {}}, result)
        raise ProtocolViolation(f"tool {name!r} still wanted input after {MAX_INPUT_ROUNDS} rounds")

    def _start_call(
        self,
        params: dict[str, Any],
        progress: ProgressCallback | None,
        timeout: float | None,
        max_timeout: float | None,
        meta: dict[str, Any] | None,
    ) -> tuple[int, asyncio.Future[Any], str | None]:
        """Send one ``tools/call`` round, watched for its timeout (one watchdog timer serves
        every call in flight: a timer per call would cost more than the rest of its work);
        returns its id, the future of its result and its progress token (if any)."""
        if timeout is None:
            timeout = self.timeout
        token = None
        if progress is not None:
            token = progress_token()
            meta = {**(meta or {}), "progressToken": token}
        if meta is not None or self.version in MODERN_VERSIONS:
            params = self._params(params, meta)
        id, future = self._session.start("tools/call", params)
        now = _monotonic()
        limit = now + (max_timeout if max_timeout is not None else timeout * 10)
        watched = WatchedCall(future, now + timeout, limit, timeout, params["name"])
        self._watched[id] = watched
        if self._watchdog is None:
            self._watchdog = asyncio.get_running_loop().call_later(WATCH_INTERVAL, self._expire)
        if token is not None:
            assert progress is not None
            self._progress[token] = _progress_callback(watched, progress)
        return id, future, token

    def _expire(self) -> None:
        now = _monotonic()
        for id, watched in list(self._watched.items()):
            if now >= watched.deadline and not watched.future.done():
                del self._watched[id]
                what = f"tool {watched.tool!r} did not answer within {watched.timeout} s"
                watched.future.set_exception(RequestTimeout(what))
                self._session.cancel(id, "timed out")
        self._watchdog = asyncio.get_running_loop().call_later(WATCH_INTERVAL, self._expire) if self._watched else None

    async def _tool(self, name: str) -> ToolInfo | None:
        """The tool's definition, listing the tools once if it is not known yet."""
        if name not in self._tools and not self._tools_valid:
            await self.list_tools()
        return self._tools.get(name)

    def _check_output(self, tool: ToolInfo, result: dict[str, Any]) -> None:
        """:class:`OutputSchemaMismatch` unless ``result`` has structured content that fits
        the tool's outputSchema (the specification requires it of every successful call)."""
        from ..tools.validation import SchemaError, Validator, describe_errors

        if "structuredContent" not in result:
            raise OutputSchemaMismatch(f"tool {tool.name!r} lists an outputSchema but returned no structured content")
        structured = result["structuredContent"]

        validator = self._validators.get(tool.name)
        if validator is None:
            assert tool.output_schema is not None
            validator = self._validators[tool.name] = Validator(tool.output_schema)
        try:
            compiled = validator.compile()
        except SchemaError as exc:
            raise OutputSchemaMismatch(f"tool {tool.name!r} advertises an unusable outputSchema: {exc}") from None
        if not compiled.is_valid(structured):
            problem = describe_errors(compiled, structured)
            raise OutputSchemaMismatch(
                f"tool {tool.name!r} returned structured content that breaks its outputSchema: {problem}"
            )


class WatchedCall:
    """A call in flight, with the deadline its progress keeps moving (up to ``limit``)."""

    __slots__ = ("deadline", "future", "limit", "timeout", "tool")

    def __init__(self, future: asyncio.Future[Any], deadline: float, limit: float, timeout: float, tool: str) -> None:
        self.future = future
        self.deadline = deadline if deadline < limit else limit
        self.limit = limit
        self.timeout = timeout
        self.tool = tool


def _progress_callback(watched: WatchedCall, progress: ProgressCallback) -> ProgressCallback:
    def progressed(value: float, total: float | None, message: str | None) -> None:
        watched.deadline = min(_monotonic() + watched.timeout, watched.limit)
        progress(value, total, message)

    return progressed
