"""Tool calls as tasks, the client's side: when a call becomes a task (asked for, or required
by the tool or the server), starting one, taking one up again by its id, and the ``tasks/*``
requests and notifications a :class:`~toolwire.client.tasks.TaskHandle` relies on."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..protocol.versions import META_CLIENT_CAPABILITIES, TASKS_EXTENSION
from .errors import ClientError, ProtocolViolation
from .input_rounds import MAX_INPUT_ROUNDS
from .progress import progress_token
from .tasks import TaskHandle, TaskInfo
from .types import ToolInfo

if TYPE_CHECKING:
    from .progress import ProgressCallback
    from .session import ClientSession


class TaskCalls:
    """The :class:`~toolwire.client.Client`'s task methods (a mixin of it)."""

    if TYPE_CHECKING:
        timeout: float
        capabilities: dict[str, Any]
        _session: ClientSession
        _progress: dict[str | int, ProgressCallback]
        _task_watchers: dict[str, Callable[[TaskInfo], Any]]

        @property
        def modern(self) -> bool: ...

        @property
        def closed(self) -> str | None: ...

        def _capabilities(self) -> dict[str, Any]: ...

        def _params(self, params: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]: ...

        async def _walk(self, method: str, key: str) -> tuple[list[dict[str, Any]], float]: ...

        async def _retry(self, params: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]: ...

        async def _tool(self, name: str) -> ToolInfo | None: ...

        async def serve_request(self, method: str, params: dict[str, Any]) -> Any: ...

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
            token = progress_token()
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


def needs_tasks(data: Any) -> bool:
    """Whether a ``-32021`` error's data names the tasks extension as the missing capability."""
    required = data.get("requiredCapabilities") if isinstance(data, dict) else None
    extensions = required.get("extensions") if isinstance(required, dict) else None
    return isinstance(extensions, dict) and TASKS_EXTENSION in extensions
