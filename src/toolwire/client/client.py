"""The :class:`Client`: discover and call any MCP server's tools, in either protocol era.

    async with Client(["npx", "some-server"]) as client:
        for tool in await client.list_tools():
            print(tool.name)
        result = await client.call_tool("echo", {"text": "hi"}, progress=print)

Connecting probes with ``server/discover`` (2026-07-28); any answer that is not a modern one,
or no answer within ``probe_timeout``, falls back to the ``initialize`` handshake, whose
version the server may negotiate down to 2024-11-05. The era is then fixed for the
connection: ``client.version`` and ``client.modern`` say which.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import re
import shlex
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from types import TracebackType
from typing import TYPE_CHECKING, Any

import orjson

from ..logs import get_logger
from ..protocol.connection import DEFAULT_MAX_MESSAGE_BYTES
from ..protocol.errors import METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY, MODERN_ERRORS
from ..protocol.versions import (
    LATEST_LEGACY,
    LEGACY_VERSIONS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    MODERN_VERSIONS,
    TASKS_EXTENSION,
)
from .errors import (
    AUTHORIZATION_FAILED,
    ClientError,
    ConnectionClosed,
    OutputSchemaMismatch,
    ProtocolViolation,
    RequestTimeout,
    ServerError,
    ToolCallFailed,
    ToolChanged,
    VersionMismatch,
)
from .session import ClientSession
from .tasks import TaskHandle, TaskInfo
from .transports import InMemory, InProcess, StdioProcess, Transport
from .types import (
    CallToolResult,
    GetPromptResult,
    PromptInfo,
    ResourceContents,
    ResourceInfo,
    ResourceTemplateInfo,
    ToolInfo,
)

if TYPE_CHECKING:
    from ..completion import Completion
    from .telemetry import ClientTelemetry

log = get_logger("toolwire.client")

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
ProgressCallback = Callable[[float, float | None, str | None], Any]

#: Codes by which a server shows it speaks the modern era even when it refuses a request.
#: Fields of a tool definition that pinning watches.
PINNED_FIELDS = ("title", "description", "inputSchema", "outputSchema", "annotations")
MAX_PAGES = 1000
#: How often deadlines of calls in flight are checked (seconds): a timeout's resolution.
WATCH_INTERVAL = 0.05
_TOKENS = itertools.count(1)
MAX_INPUT_ROUNDS = 10
#: The clock of call deadlines.
_monotonic = time.monotonic
#: A target served with ``toolwire run``: ``path/server.py`` or ``path/server.py:object``.
_PYTHON_FILE = re.compile(r"[^\s]+\.py(?::[A-Za-z_][A-Za-z0-9_]*)?")


class Client:
    """A connection to one MCP server. Use it as an async context manager.

    ``target`` is a command to run over stdio (a list of arguments, or one string split like
    a shell would), a path to a ``.py`` file (served with ``toolwire run``), an
    ``http(s)://`` URL (Streamable HTTP, or the 2024-11-05 HTTP+SSE transport), a toolwire
    :class:`~toolwire.Server` (in memory), or a :class:`Transport`.

    Options: ``env``/``cwd`` for the process; ``headers`` for every HTTP request; ``auth``
    for HTTP servers that ask for authorization: a :class:`~toolwire.auth.OAuth` (or any
    ``httpx.Auth``), see docs/authorization.md;
    ``protocol`` to speak one version only (a legacy version skips the probe and asks for it
    in the handshake; the server may still answer an older one); ``timeout`` (seconds) for each request;
    ``probe_timeout`` for the era probe (with ``auth``, ``timeout``: the probe may be what
    the server first asks authorization for); ``elicitation``/``sampling`` handlers, each
    ``async (params) -> result`` (declared as capabilities only when given); ``roots``, the
    roots to offer (``[{"uri": "file:///...", "name": ...}]``, see :meth:`set_roots`); ``on_log`` for
    the server's log messages (``log_level`` asks for them); ``on_tools_changed``,
    ``on_resources_changed``, ``on_prompts_changed`` (the server's lists changed) and
    ``on_resource_updated(uri)`` (a subscribed resource changed); ``on_close(reason)`` (the
    server went away: it exited, crashed or closed the connection; not called after
    :meth:`close`); ``pins`` to check tools against approved definitions (see :meth:`approve`);
    ``max_message_bytes``: the largest message taken from a server (default 4 MiB, as
    servers): over stdio a longer line ends the connection with :class:`ConnectionClosed`
    saying so; over HTTP a longer answer, or event of a stream, decompressed, fails its
    request with a :class:`ServerError` saying so (the client stays usable);
    ``telemetry``: OpenTelemetry spans and durations of every request, the trace context sent
    along (``True`` for the global providers, or a :class:`~.telemetry.ClientTelemetry`);
    ``extensions``: the protocol extensions this client takes part in, by identifier, with
    their settings (declared in its capabilities, see docs/extensions.md; what the server
    offers is :attr:`server_extensions`, its notifications reach :meth:`on_notification`).
    """

    def __init__(
        self,
        target: str | list[str] | InProcess | Transport,
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        headers: dict[str, str] | None = None,
        auth: Any = None,
        name: str = "toolwire-client",
        version: str = "0.1.0",
        protocol: str | None = None,
        timeout: float = 60.0,
        probe_timeout: float = 5.0,
        elicitation: Handler | None = None,
        sampling: Handler | None = None,
        roots: list[dict[str, Any]] | None = None,
        on_log: Callable[[dict[str, Any]], Any] | None = None,
        log_level: str | None = None,
        on_tools_changed: Callable[[], Any] | None = None,
        on_resources_changed: Callable[[], Any] | None = None,
        on_prompts_changed: Callable[[], Any] | None = None,
        on_resource_updated: Callable[[str], Any] | None = None,
        on_close: Callable[[str], Any] | None = None,
        pins: dict[str, dict[str, str]] | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        telemetry: bool | ClientTelemetry = False,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        if protocol is not None and protocol not in (*LEGACY_VERSIONS, *MODERN_VERSIONS):
            raise ClientError(f"unknown protocol version {protocol!r}")
        self.transport = _transport(target, env, cwd, headers, max_message_bytes, auth)
        self.client_info = {"name": name, "version": version}
        self.protocol = protocol
        self.timeout = timeout
        self.probe_timeout = max(probe_timeout, timeout) if auth is not None else probe_timeout
        self.elicitation = elicitation
        self.sampling = sampling
        self.roots = roots
        self.on_log = on_log
        self.log_level = log_level
        self.on_tools_changed = on_tools_changed
        self.on_resources_changed = on_resources_changed
        self.on_prompts_changed = on_prompts_changed
        self.on_resource_updated = on_resource_updated
        self.pins = pins
        self.extensions = dict(extensions or {})
        self._on_notification: dict[str, Callable[[dict[str, Any]], Any]] = {}
        self.version: str | None = None
        self.server_info: dict[str, Any] = {}
        self.capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        if telemetry is True:
            from .telemetry import ClientTelemetry

            telemetry = ClientTelemetry()
        self._session = ClientSession(
            self.transport, self._serve, self._notified, on_close, telemetry if telemetry else None
        )
        self._tools: dict[str, ToolInfo] = {}
        self._tools_fresh_until = 0.0
        self._tools_valid = False
        self._validators: dict[str, Any] = {}
        self._progress: dict[str | int, ProgressCallback] = {}
        self._watched: dict[int, _Watched] = {}
        self._watchdog: asyncio.TimerHandle | None = None
        self._subscription: int | None = None
        self._acknowledged: asyncio.Future[dict[str, Any]] | None = None
        self._resource_subscriptions: set[str] = set()
        self._request_meta: dict[str, Any] | None = None
        self._task_watchers: dict[str, Callable[[TaskInfo], Any]] = {}

    # -- connection ------------------------------------------------------------------------

    @property
    def closed(self) -> str | None:
        """Why the connection ended (``None`` while it is open)."""
        return self._session.closed

    @property
    def modern(self) -> bool:
        """Whether the connection speaks the 2026-07-28 era (per-request ``_meta``)."""
        return self.version in MODERN_VERSIONS

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def connect(self) -> None:
        """Start the transport and find the server's era and version.

        :class:`VersionMismatch` if it speaks none of ours; :class:`ConnectionClosed` if it
        cannot be started or dies first.
        """
        try:
            await self.transport.start()
        except OSError as exc:
            command = f" {self.transport.command[0]!r}" if isinstance(self.transport, StdioProcess) else ""
            raise ConnectionClosed(f"cannot start the server{command}: {exc.strerror or exc}") from exc
        try:
            if self.protocol in LEGACY_VERSIONS or not await self._probe_modern():
                if self.protocol in MODERN_VERSIONS:
                    raise VersionMismatch(f"the server does not speak {self.protocol}")
                await self._initialize()
        except BaseException:
            await self.close()
            raise
        if self.modern and self._listen_filter():
            self._listen()

    async def _probe_modern(self) -> bool:
        id, future = self._session.start("server/discover", {"_meta": self._meta(self.protocol or MODERN_VERSIONS[-1])})
        try:
            result = await asyncio.wait_for(future, self.probe_timeout)
        except TimeoutError:
            self._session.forget(id)
            return False
        except ServerError as exc:
            if exc.code == AUTHORIZATION_FAILED:
                raise  # the handshake would need the same authorization
            if exc.code not in MODERN_ERRORS:
                return False
            supported = (exc.data or {}).get("supported", []) if isinstance(exc.data, dict) else []
            if not set(supported) & set(MODERN_VERSIONS):
                return False  # a dual-era server without our modern version: use the handshake
            result = await self._session.request("server/discover", {"_meta": self._meta(_latest(supported))})
        if not isinstance(result, dict) or "supportedVersions" not in result:
            return False
        shared = [v for v in MODERN_VERSIONS if v in result.get("supportedVersions", [])]
        if not shared:
            return False
        self.version = shared[-1]
        self.capabilities = result.get("capabilities") or {}
        self.instructions = result.get("instructions")
        self.server_info = (result.get("_meta") or {}).get(META_SERVER_INFO) or {}
        return True

    async def _initialize(self) -> None:
        params = {
            "protocolVersion": self.protocol or LATEST_LEGACY,
            "capabilities": self._capabilities(),
            "clientInfo": self.client_info,
        }
        result = await self._session.request("initialize", params, self.timeout)
        version = result.get("protocolVersion")
        if version not in LEGACY_VERSIONS or (self.protocol is not None and version > self.protocol):
            raise VersionMismatch(f"the server wants protocol version {version!r}, which this client does not speak")
        self.version = version
        self.capabilities = result.get("capabilities") or {}
        self.server_info = result.get("serverInfo") or {}
        self.instructions = result.get("instructions")
        self._session.notify("notifications/initialized")
        if self.log_level is not None and "logging" in self.capabilities:
            await self._session.request("logging/setLevel", {"level": self.log_level}, self.timeout)

    async def close(self) -> None:
        """End the connection (for a process: close its stdin, then terminate, then kill)."""
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        if self._subscription is not None:
            self._session.cancel(self._subscription, "the client is closing")
            self._subscription = None
        await self._session.close()
        await self.transport.close()

    def _capabilities(self) -> dict[str, Any]:
        capabilities: dict[str, Any] = {}
        if self.elicitation is not None:
            capabilities["elicitation"] = {"form": {}}
        if self.sampling is not None:
            capabilities["sampling"] = {}
        if self.roots is not None:
            capabilities["roots"] = {"listChanged": True}
        if self.extensions:
            capabilities["extensions"] = self.extensions
        return capabilities

    @property
    def server_extensions(self) -> dict[str, dict[str, Any]]:
        """The extensions the server offers, by identifier, with their settings (empty
        before :meth:`connect`, and for a server that offers none)."""
        extensions = self.capabilities.get("extensions")
        return extensions if isinstance(extensions, dict) else {}

    def on_notification(self, method: str, callback: Callable[[dict[str, Any]], Any]) -> Callable[[], None]:
        """Call ``callback(params)`` for each notification ``method`` the server sends (an
        extension's, say), in place of what the client would do with it; returns a function
        that stops it. What the callback raises is logged, not raised."""
        self._on_notification[method] = callback

        def stop() -> None:
            if self._on_notification.get(method) is callback:
                del self._on_notification[method]

        return stop

    def _meta(self, version: str | None = None) -> dict[str, Any]:
        """The per-request ``_meta`` of the modern era (built once per connection)."""
        if version is None and self._request_meta is not None:
            return self._request_meta
        meta: dict[str, Any] = {
            META_PROTOCOL_VERSION: version or self.version,
            META_CLIENT_CAPABILITIES: self._capabilities(),
            META_CLIENT_INFO: self.client_info,
        }
        if self.log_level is not None:
            meta[META_LOG_LEVEL] = self.log_level
        if version is None:
            self._request_meta = meta
        return meta

    def _params(self, params: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]:
        """Request params for this era: modern requests carry the per-request ``_meta``."""
        if self.version in MODERN_VERSIONS:
            meta = {**self._meta(), **meta} if meta else self._meta()
        if meta:
            params = {**params, "_meta": meta}
        return params

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Any request, with this era's ``_meta``; raises as :meth:`ClientSession.request`."""
        return await self._session.request(method, self._params(params or {}), self.timeout)

    async def ping(self) -> None:
        """Check the server answers (legacy era: ``ping``; modern: ``server/discover``)."""
        if self.modern:
            await self.request("server/discover")
        else:
            await self._session.request("ping", None, self.timeout)

    # -- tools -----------------------------------------------------------------------------

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

    async def _walk(self, method: str, key: str) -> tuple[list[dict[str, Any]], float]:
        """Every item of a paged list, and the shortest ``ttlMs`` of its pages (modern).
        :class:`ProtocolViolation` for cursors that repeat or never end."""
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        ttl = float("inf")
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            result = await self.request(method, {} if cursor is None else {"cursor": cursor})
            items += [item for item in result.get(key) or [] if isinstance(item, dict)]
            if self.modern:
                ttl = min(ttl, max(0, result.get("ttlMs", 0)))
            cursor = result.get("nextCursor")
            if cursor is None:
                return items, ttl
            if cursor in seen:
                raise ProtocolViolation(f"the server handed out the cursor {cursor!r} twice: its pages loop")
            seen.add(cursor)
        raise ProtocolViolation(f"{method} did not end after {MAX_PAGES} pages")

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
                if not (self.modern and exc.code == MISSING_REQUIRED_CLIENT_CAPABILITY and _needs_tasks(exc.data)):
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

    async def _call_as_task(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        progress: ProgressCallback | None,
        max_timeout: float | None,
        meta: dict[str, Any] | None,
    ) -> dict[str, Any]:
        handle = await self.start_task(name, arguments, progress=progress, meta=meta)
        try:
            return (await handle.result(timeout=max_timeout)).raw
        except asyncio.CancelledError:
            if handle.id is not None and self.closed is None:
                await asyncio.shield(handle.cancel())
            raise

    def _may_be_task(self, tool: ToolInfo | None) -> bool:
        """2026-07-28: the server decides; 2025-11-25: the server takes tasks and the tool allows one."""
        return self.modern or (tool is not None and tool.task_support is not None and self._takes_tasks())

    def _must_be_task(self, tool: ToolInfo | None) -> bool:
        """2025-11-25: the tool says it runs only as a task, and the server takes tasks."""
        return tool is not None and not self.modern and tool.task_support == "required" and self._takes_tasks()

    def _takes_tasks(self) -> bool:
        tasks = self.capabilities.get("tasks")
        requests = tasks.get("requests") if isinstance(tasks, dict) else None
        tools = requests.get("tools") if isinstance(requests, dict) else None
        return isinstance(tools, dict) and "call" in tools

    # -- tasks -----------------------------------------------------------------------------

    async def start_task(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        ttl: float | None = None,
        progress: ProgressCallback | None = None,
        meta: dict[str, Any] | None = None,
    ) -> TaskHandle:
        """Call a tool as a task and return its :class:`~toolwire.client.tasks.TaskHandle` at
        once (its ``id`` is what to keep to come back to it, with :meth:`task`).

        2025-11-25: sends ``task`` (``ttl``: seconds the server should keep it; it may keep
        it less). 2026-07-28: declares the tasks extension on the call and lets the server
        decide. In both eras a call that runs in its request gives a handle with ``id``
        ``None`` and its result: a tool the server answered at once, and (2025-11-25 and
        older) one whose ``taskSupport`` is ``forbidden`` or a server that runs no task.
        ``progress`` receives the task's progress notifications (2025-11-25).
        """
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        token = None
        if progress is not None:
            token = f"toolwire-{next(_TOKENS)}"
            self._progress[token] = progress
            meta = {**(meta or {}), "progressToken": token}
        try:
            if self.modern:
                return await self._start_modern_task(params, {**(meta or {}), **self._task_meta()}, token)
            if self._may_be_task(await self._tool(name)):  # else in its request: the server would refuse it
                params["task"] = {} if ttl is None else {"ttl": int(ttl * 1000)}
            if meta:
                params["_meta"] = meta
            result = await self._session.request("tools/call", params, self.timeout)
        except BaseException:
            if token is not None:
                self._progress.pop(token, None)
            raise
        created = result.get("task")
        if not isinstance(created, dict):
            if token is not None:
                self._progress.pop(token, None)  # no task to report on
            return TaskHandle(self, None, result=result)
        return TaskHandle(self, TaskInfo(created), progress_token=token)

    async def _start_modern_task(self, params: dict[str, Any], meta: dict[str, Any], token: str | None) -> TaskHandle:
        call = dict(params)
        for _ in range(MAX_INPUT_ROUNDS):
            result: dict[str, Any] = await self._session.request("tools/call", self._params(call, meta), self.timeout)
            kind = result.get("resultType")
            if kind == "task":
                return TaskHandle(self, TaskInfo(result), progress_token=token)
            if kind is None or kind == "complete":
                if token is not None:
                    self._progress.pop(token, None)  # no task to report on
                return TaskHandle(self, None, result=result)
            if kind != "input_required":
                raise ProtocolViolation(f"unknown resultType {kind!r}")
            call = await self._retry(params, result)
        raise ProtocolViolation(f"tool {params['name']!r} still wanted input after {MAX_INPUT_ROUNDS} rounds")

    def task(self, task_id: str) -> TaskHandle:
        """The task ``task_id`` (one this or an earlier client started), to poll, wait for
        or cancel; nothing is asked of the server until then."""
        return TaskHandle(self, None, task_id=task_id)

    async def list_tasks(self) -> list[TaskInfo]:
        """Every task the server shows this client (2025-11-25 ``tasks/list``, all pages);
        :class:`ClientError` on 2026-07-28, which has no such list."""
        if self.modern:
            raise ClientError("2026-07-28 has no tasks/list: keep the ids of the tasks you start")
        return [TaskInfo(item) for item in (await self._walk("tasks/list", "tasks"))[0]]

    async def request_task(self, method: str, params: dict[str, Any], *, forever: bool = False) -> Any:
        """A ``tasks/*`` request (2026-07-28: declaring the tasks extension), waited for the
        client's ``timeout`` or, with ``forever``, as long as it takes."""
        if self.modern:
            params = self._params(params, self._task_meta())
        return await self._session.request(method, params, None if forever else self.timeout)

    def _task_meta(self) -> dict[str, Any]:
        """2026-07-28 ``_meta`` declaring the tasks extension besides the usual capabilities."""
        capabilities = self._capabilities()
        extensions = {**capabilities.get("extensions", {}), TASKS_EXTENSION: {}}
        return {META_CLIENT_CAPABILITIES: {**capabilities, "extensions": extensions}}

    def watch_task(self, task_id: str, callback: Callable[[TaskInfo], Any]) -> None:
        """Call ``callback(info)`` on each 2025-11-25 status notification of ``task_id``."""
        self._task_watchers[task_id] = callback

    def forget_task(self, task_id: str | None, progress_token: str | None) -> None:
        """Stop routing notifications of a task that ended (or was given up on)."""
        if task_id is not None:
            self._task_watchers.pop(task_id, None)
        if progress_token is not None:
            self._progress.pop(progress_token, None)

    async def serve_request(self, method: str, params: dict[str, Any]) -> Any:
        """Answer a question from the server (elicitation, sampling, roots) as this client
        answers them: with its handlers."""
        return await self._serve(method, params)

    async def _retry(self, params: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
        """The params of the next round after an ``InputRequiredResult``: the answers to its
        input requests (through the elicitation and sampling handlers) and its state."""
        retry = dict(params)
        retry["inputResponses"] = {
            key: await self._serve(request.get("method", ""), request.get("params") or {})
            for key, request in (result.get("inputRequests") or {}).items()
        }
        if "requestState" in result:
            retry["requestState"] = result["requestState"]
        return retry

    async def _complete_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The final result of ``method``, answering 2026-07-28 input requests round by round."""
        for _ in range(MAX_INPUT_ROUNDS):
            result: dict[str, Any] = await self.request(method, params)
            kind = result.get("resultType", "complete")
            if kind == "complete":
                return result
            if kind != "input_required":
                raise ProtocolViolation(f"unknown resultType {kind!r}")
            params = await self._retry(params, result)
        raise ProtocolViolation(f"{method} still wanted input after {MAX_INPUT_ROUNDS} rounds")

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
            token = f"toolwire-{next(_TOKENS)}"
            meta = {**(meta or {}), "progressToken": token}
        if meta is not None or self.version in MODERN_VERSIONS:
            params = self._params(params, meta)
        id, future = self._session.start("tools/call", params)
        now = _monotonic()
        limit = now + (max_timeout if max_timeout is not None else timeout * 10)
        watched = _Watched(future, now + timeout, limit, timeout, params["name"])
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

    # -- resources -------------------------------------------------------------------------

    async def list_resources(self) -> list[ResourceInfo]:
        """Every resource the server lists, walking all pages."""
        return [ResourceInfo.from_dict(item) for item in (await self._walk("resources/list", "resources"))[0]]

    async def list_resource_templates(self) -> list[ResourceTemplateInfo]:
        """Every resource template the server lists, walking all pages; none from a server
        that offers resources but not this list (older servers answer it "method not found")."""
        try:
            listed, _ = await self._walk("resources/templates/list", "resourceTemplates")
        except ServerError as exc:
            if exc.code == METHOD_NOT_FOUND:
                return []
            raise
        return [ResourceTemplateInfo.from_dict(item) for item in listed]

    async def read_resource(self, uri: str) -> list[ResourceContents]:
        """The contents of ``uri`` (a resource, or a URI a template matches). A missing
        resource is a :class:`ServerError` with code ``-32002`` (legacy) or ``-32602``."""
        result = await self._complete_request("resources/read", {"uri": uri})
        return [ResourceContents.from_dict(entry) for entry in result.get("contents") or []]

    async def subscribe_resource(self, uri: str) -> None:
        """Ask to hear when ``uri`` changes (``on_resource_updated``): ``resources/subscribe``
        on legacy servers, a ``subscriptions/listen`` naming it on 2026-07-28 ones.
        :class:`ClientError` if the server does not offer subscriptions or refuses this one."""
        if not self.capabilities.get("resources", {}).get("subscribe"):
            raise ClientError("the server does not offer resource subscriptions")
        if not self.modern:
            await self.request("resources/subscribe", {"uri": uri})
            self._resource_subscriptions.add(uri)
            return
        self._resource_subscriptions.add(uri)
        honoured = await self._relisten()
        if uri not in honoured.get("resourceSubscriptions", []):
            self._resource_subscriptions.discard(uri)
            raise ClientError(f"the server did not accept a subscription to {uri!r}")

    async def unsubscribe_resource(self, uri: str) -> None:
        """Stop hearing about ``uri``."""
        if uri not in self._resource_subscriptions:
            return
        self._resource_subscriptions.discard(uri)
        if not self.modern:
            await self.request("resources/unsubscribe", {"uri": uri})
        else:
            await self._relisten()

    # -- prompts and completion ------------------------------------------------------------

    async def list_prompts(self) -> list[PromptInfo]:
        """Every prompt the server lists, walking all pages."""
        return [PromptInfo.from_dict(item) for item in (await self._walk("prompts/list", "prompts"))[0]]

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> GetPromptResult:
        """The prompt ``name`` rendered with ``arguments`` (strings, as the protocol wants).
        Unknown prompts and bad arguments are a :class:`ServerError` (``-32602``)."""
        params = {"name": name, "arguments": {key: str(value) for key, value in (arguments or {}).items()}}
        return GetPromptResult.from_dict(await self._complete_request("prompts/get", params))

    async def complete(
        self,
        argument: str,
        value: str,
        *,
        prompt: str | None = None,
        resource_template: str | None = None,
        context: dict[str, str] | None = None,
    ) -> Completion:
        """Suggestions for ``argument`` of a ``prompt`` (by name) or a ``resource_template``
        (by its template string), given what was typed so far (``value``) and the arguments
        already resolved (``context``). ``ValueError`` unless exactly one target is named."""
        from ..completion import Completion

        if (prompt is None) == (resource_template is None):
            raise ValueError("name exactly one of prompt= and resource_template=")
        ref = (
            {"type": "ref/prompt", "name": prompt}
            if prompt is not None
            else {"type": "ref/resource", "uri": resource_template}
        )
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        found = (await self.request("completion/complete", params)).get("completion") or {}
        return Completion(found.get("values") or [], found.get("total"), found.get("hasMore"))

    def set_roots(self, roots: list[dict[str, Any]]) -> None:
        """Offer other roots from now on; a legacy server is told the list changed (a
        2026-07-28 server asks for them with each request that needs them)."""
        self.roots = roots
        if not self.modern and self.version is not None:
            self._session.notify("notifications/roots/list_changed")

    # -- pinning ---------------------------------------------------------------------------

    def approve(self, tools: Iterable[ToolInfo] | None = None) -> dict[str, dict[str, str]]:
        """Record the definitions of ``tools`` (default: every listed tool) as approved, and
        return the pins (save them to check the same server later with ``Client(pins=...)``).
        Afterwards a call to a tool whose definition differs raises :class:`ToolChanged`."""
        if self.pins is None:
            self.pins = {}
        for tool in tools if tools is not None else self._tools.values():
            self.pins[tool.name] = fingerprint(tool)
        return self.pins

    def changed_tools(self) -> dict[str, list[str]]:
        """Listed tools whose definitions differ from their pins: name -> changed fields
        (``["not approved"]`` for a tool that has none)."""
        return {name: fields for name, tool in self._tools.items() if (fields := self._pin_changes(name, tool))}

    def _pin_changes(self, name: str, tool: ToolInfo | None) -> list[str]:
        pinned = (self.pins or {}).get(name)
        if pinned is None:
            return ["not approved"]
        if tool is None:
            return ["no longer listed"]
        now = fingerprint(tool)
        return [field for field in PINNED_FIELDS if now.get(field) != pinned.get(field)]

    def _check_pin(self, name: str, tool: ToolInfo | None) -> None:
        changes = self._pin_changes(name, tool)
        if changes:
            raise ToolChanged(name, changes)

    # -- from the server -------------------------------------------------------------------

    def _listen_filter(self) -> dict[str, Any]:
        """What to listen for on 2026-07-28: the list changes the server offers to announce,
        and the resources subscribed to."""
        wanted: dict[str, Any] = {}
        for kind in ("tools", "prompts", "resources"):
            if (self.capabilities.get(kind) or {}).get("listChanged"):
                wanted[f"{kind}ListChanged"] = True
        if self._resource_subscriptions:
            wanted["resourceSubscriptions"] = sorted(self._resource_subscriptions)
        return wanted

    def _listen(self) -> None:
        params = self._params({"notifications": self._listen_filter()})
        self._acknowledged = asyncio.get_running_loop().create_future()
        self._subscription, future = self._session.start("subscriptions/listen", params, long_lived=True)
        future.add_done_callback(lambda f: f.exception() if not f.cancelled() else None)

    async def _relisten(self) -> dict[str, Any]:
        """Replace the subscription with one for the current filter; returns what the server
        agreed to honour. :class:`RequestTimeout` if it does not acknowledge in time."""
        if self._subscription is not None:
            self._session.cancel(self._subscription, "replaced by a new subscription")
        self._listen()
        assert self._acknowledged is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._acknowledged), self.timeout)
        except TimeoutError:
            raise RequestTimeout("the server did not acknowledge the subscription") from None

    def _notified(self, method: str, params: dict[str, Any]) -> None:
        if self._on_notification:
            heard = self._on_notification.get(method)
            if heard is not None:
                try:
                    heard(params)
                except Exception:
                    log.exception("the callback for %s failed", method)
                return
        if method == "notifications/progress":
            callback = self._progress.get(params.get("progressToken"))  # type: ignore[arg-type]
            if callback is not None:
                callback(params.get("progress", 0), params.get("total"), params.get("message"))
            return
        if method == "notifications/message":
            if self.on_log is not None:
                self.on_log(params)
            return
        if method == "notifications/tasks/status":
            watcher = self._task_watchers.get(params.get("taskId"))  # type: ignore[arg-type]
            if watcher is not None:
                watcher(TaskInfo(params))
            return
        subscription = (params.get("_meta") or {}).get(META_SUBSCRIPTION_ID)
        if self.modern and subscription != self._subscription:
            return  # a notification of a subscription given up on
        if method == "notifications/tools/list_changed":
            self._tools_valid = False
            if self.on_tools_changed is not None:
                self.on_tools_changed()
        elif method == "notifications/resources/list_changed" and self.on_resources_changed is not None:
            self.on_resources_changed()
        elif method == "notifications/prompts/list_changed" and self.on_prompts_changed is not None:
            self.on_prompts_changed()
        elif method == "notifications/resources/updated" and self.on_resource_updated is not None:
            self.on_resource_updated(str(params.get("uri", "")))
        elif method == "notifications/subscriptions/acknowledged":
            acknowledged = self._acknowledged
            if acknowledged is not None and not acknowledged.done():
                acknowledged.set_result(params.get("notifications") or {})

    async def _serve(self, method: str, params: dict[str, Any]) -> Any:
        """Answer what the server asks: legacy requests and 2026-07-28 input requests alike."""
        if method == "ping":
            return {}
        if method == "roots/list" and self.roots is not None:
            return {"roots": self.roots}
        handler = {"elicitation/create": self.elicitation, "sampling/createMessage": self.sampling}.get(method)
        if handler is None:
            raise ServerError(METHOD_NOT_FOUND, f"Method not found: this client does not handle {method}")
        return await handler(params)


class _Watched:
    """A call in flight, with the deadline its progress keeps moving (up to ``limit``)."""

    __slots__ = ("deadline", "future", "limit", "timeout", "tool")

    def __init__(self, future: asyncio.Future[Any], deadline: float, limit: float, timeout: float, tool: str) -> None:
        self.future = future
        self.deadline = deadline if deadline < limit else limit
        self.limit = limit
        self.timeout = timeout
        self.tool = tool


def _progress_callback(watched: _Watched, progress: ProgressCallback) -> ProgressCallback:
    def progressed(value: float, total: float | None, message: str | None) -> None:
        watched.deadline = min(_monotonic() + watched.timeout, watched.limit)
        progress(value, total, message)

    return progressed


def fingerprint(tool: ToolInfo) -> dict[str, str]:
    """SHA-256 of each pinned field of a tool's definition (canonical JSON)."""
    return {
        field: hashlib.sha256(orjson.dumps(tool.raw.get(field), option=orjson.OPT_SORT_KEYS)).hexdigest()
        for field in PINNED_FIELDS
    }


def _needs_tasks(data: Any) -> bool:
    """Whether a ``-32021`` error's data names the tasks extension as the missing capability."""
    required = data.get("requiredCapabilities") if isinstance(data, dict) else None
    extensions = required.get("extensions") if isinstance(required, dict) else None
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions


def _latest(versions: list[str]) -> str:
    return max(v for v in versions if v in MODERN_VERSIONS)


def _transport(
    target: Any,
    env: dict[str, str] | None,
    cwd: str | None,
    headers: dict[str, str] | None,
    max_message_bytes: int,
    auth: Any = None,
) -> Transport:
    if auth is not None and not (isinstance(target, str) and target.startswith(("http://", "https://"))):
        raise ClientError("auth= is for http(s):// servers (over stdio, give the server credentials in env=)")
    if isinstance(target, InProcess):  # a toolwire Server
        return InMemory(target)
    if isinstance(target, str):
        if target.startswith(("http://", "https://")):
            from .http import StreamableHttpTransport

            return StreamableHttpTransport(target, headers, auth=auth, max_message_bytes=max_message_bytes)
        if _PYTHON_FILE.fullmatch(target):
            target = [sys.executable, "-m", "toolwire", "run", target]
        else:
            target = shlex.split(target)
    if isinstance(target, list):
        if not target:
            raise ClientError("an empty command")
        return StdioProcess(target, env=env, cwd=cwd, max_message_bytes=max_message_bytes)
    if hasattr(target, "send") and hasattr(target, "start"):
        return target  # type: ignore[no-any-return]
    raise ClientError(f"cannot connect to a {type(target).__name__}")
