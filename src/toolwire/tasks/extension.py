"""Tasks as an extension of the server (:class:`~toolwire.server.extensions.Extension`).

A server offers it as soon as one of its tools is declared with ``task=``. What it adds:

================================  ============================================================
capabilities                      2025-11-25: the core ``tasks`` capability (list, cancel,
                                  task-augmented ``tools/call``); 2026-07-28: the
                                  ``io.modelcontextprotocol/tasks`` extension; older: nothing
``tasks/get``, ``tasks/cancel``   2025-11-25 and 2026-07-28 (:mod:`.methods`)
``tasks/result``, ``tasks/list``  2025-11-25 only (2026-07-28: ``-32601``)
``tasks/update``                  2026-07-28 only
tool definitions                  ``execution.taskSupport`` of each task tool
``tools/call``                    a :class:`TaskClaim`: the call becomes a task (answered
                                  with its handle; the result is stored, not sent)
``subscriptions/listen``          ``taskIds``: ``notifications/tasks`` of those tasks
================================  ============================================================

A 2026-07-28 request must declare the extension to use any of it (``-32021`` with
``requiredCapabilities`` otherwise; a ``task="required"`` tool says so too). In 2025-11-25 a
call becomes a task when it carries ``task``: ``-32601`` for ``task`` on a tool that takes
none or its absence on one that requires it, ``-32602`` for a malformed one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..logs import get_logger
from ..protocol.codec import codec_for
from ..protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, ProtocolError
from ..protocol.incoming import Request
from ..protocol.versions import META_SUBSCRIPTION_ID, SUPPORTED_VERSIONS, TASKS_EXTENSION
from ..server.dispatch import declares, extension_missing
from ..server.extensions import CallClaim, Extension
from .methods import task_method
from .model import QUEUED
from .queue import Job, QueueFull, trace_context

if TYPE_CHECKING:
    from ..server.context import Context
    from ..server.server import Server
    from ..server.session import ServerSession
    from ..tools.tool import Tool
    from .queue import TaskQueue

#: The versions whose codecs have tasks in the core protocol (2025-11-25), and those that
#: have them as this extension (2026-07-28).
CORE = [version for version in SUPPORTED_VERSIONS if codec_for(version).tasks]
EXTENDED = [version for version in SUPPORTED_VERSIONS if codec_for(version).modern]
log = get_logger("toolwire.tasks")
_LEGACY_CAPABILITY: dict[str, Any] = {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}


class TasksExtension(Extension):
    """Tool calls that outlive their request (see the module's documentation and docs/tasks.md)."""

    id = TASKS_EXTENSION

    def capabilities(self, version: str) -> dict[str, Any]:
        codec = codec_for(version)
        if codec.tasks:
            return _LEGACY_CAPABILITY
        if codec.modern:
            return {"extensions": {self.id: {}}}
        return {}

    def install(self, server: Server) -> None:
        table = server.dispatch
        table.register("tasks/get", task_method, versions=CORE + EXTENDED, requires=self.id)
        table.register("tasks/cancel", task_method, versions=CORE + EXTENDED, requires=self.id)
        table.register("tasks/result", task_method, versions=CORE, missing="tasks/get carries the result")
        table.register("tasks/list", task_method, versions=CORE)
        table.register("tasks/update", task_method, versions=EXTENDED, requires=self.id)

    def tool_definition(self, tool: Tool) -> dict[str, Any] | None:
        return {"execution": {"taskSupport": tool.task}} if tool.task is not None else None

    def claim_call(self, request: Request, tool: Tool) -> CallClaim | None:
        """A :class:`TaskClaim` when this call runs as a task (rules in the module's
        documentation); ``None`` when it runs in its request."""
        support = tool.task
        if support is None and "task" not in request.params:
            return None  # most calls: neither the tool nor the request mentions tasks
        codec = request.codec
        if codec.modern:
            if support is None:
                return None
            if declares(request, TASKS_EXTENSION):
                return TaskClaim(None)
            if support == "required":
                raise extension_missing(
                    TASKS_EXTENSION,
                    f"tool {tool.name!r} runs only as a task; "
                    f"declare the {TASKS_EXTENSION} extension in the request's client capabilities",
                )
            return None
        if not codec.tasks:
            return None
        asked = request.params.get("task")
        if asked is None:
            if support == "required":
                raise ProtocolError(
                    METHOD_NOT_FOUND,
                    f'Method not found: tool {tool.name!r} runs only as a task: send "task" with the call',
                )
            return None
        if support is None:
            raise ProtocolError(
                METHOD_NOT_FOUND, f'Method not found: tool {tool.name!r} does not run as a task: call it without "task"'
            )
        ttl = asked.get("ttl") if type(asked) is dict else None
        if type(asked) is not dict or not (ttl is None or (type(ttl) in (int, float) and ttl > 0)):
            raise ProtocolError(
                INVALID_PARAMS, 'Invalid params: "task" must be an object with an optional "ttl" above 0 (ms)'
            )
        return TaskClaim(None if ttl is None else int(ttl))

    def listen(
        self, session: ServerSession, request: Request, wanted: dict[str, Any], honoured: dict[str, Any]
    ) -> ProtocolError | None:
        """``taskIds``: ``notifications/tasks`` of the tasks named, those running here that the
        caller may see (what the acknowledgement lists)."""
        task_ids = wanted.get("taskIds")
        if task_ids is None:
            return None
        if type(task_ids) is not list or not all(type(task_id) is str for task_id in task_ids):
            return ProtocolError(INVALID_PARAMS, 'Invalid params: "taskIds" must list task ids')
        if not declares(request, TASKS_EXTENSION):
            return extension_missing(TASKS_EXTENSION, f"task notifications need the {TASKS_EXTENSION} extension")
        meta = {META_SUBSCRIPTION_ID: request.id}

        def tell(task: dict[str, Any]) -> None:
            session.send_for(request, "notifications/tasks", {**task, "_meta": meta})

        tasks = session.server.tasks
        owner = session.caller_name(request)
        watched = []
        for task_id in task_ids:
            stop = tasks.watch(task_id, owner, tell)
            if stop is not None:
                watched.append(task_id)
                session.watch(request.id, stop)
        honoured["taskIds"] = watched
        return None

    def acknowledged(self, session: ServerSession, honoured: dict[str, Any]) -> None:
        """After the acknowledgement: where each watched task stands now (then each change)."""
        for task_id in honoured.get("taskIds", ()):
            session.server.tasks.tell(task_id)


class TaskClaim(CallClaim):
    """A call that runs as a task with lifetime ``ttl_ms`` (``None``: the server's)."""

    __slots__ = ("elsewhere", "ttl_ms")

    def __init__(self, ttl_ms: int | None) -> None:
        self.ttl_ms = ttl_ms
        self.elsewhere = False

    async def begin(self, session: ServerSession, request: Request, tool: Tool, context: Context | None) -> None:
        """Make the call a task: at once, or when the tool says so (``defer_task``); with a
        task queue, a task whose job a worker runs (see :meth:`_enqueue`)."""
        if tool.defer_task and context is not None:
            context.defer_task(tool.name, self.ttl_ms)
            return
        queue = session.server.tasks.queue
        if queue is not None:
            await self._enqueue(session, request, tool, queue)
        else:
            await session.detach(request, tool.name, self.ttl_ms)

    async def _enqueue(self, session: ServerSession, request: Request, tool: Tool, queue: TaskQueue) -> None:
        """Store the task as queued, answer with its handle and put its job on the queue.
        A full queue refuses the call (``-32603`` saying so; no task is made); a queue that
        fails once the task is stored fails the task, saying why."""
        tasks = session.server.tasks
        try:
            await queue.check_room()
        except QueueFull as exc:
            raise ProtocolError(INTERNAL_ERROR, f"Server busy: {exc}") from None
        except Exception as exc:
            log.exception("reaching the task queue failed")
            raise ProtocolError(
                INTERNAL_ERROR, f"Internal error: the task queue failed ({type(exc).__name__})"
            ) from None
        await session.detach(request, tool.name, self.ttl_ms, QUEUED)
        live = request.task
        tasks.release(live)
        self.elsewhere = True
        arguments = request.params.get("arguments") or {}
        caller = session.caller(request)
        job = Job(
            live.id,
            tool.name,
            arguments,
            request.codec.version,
            request.capabilities,
            request.client_info,
            request.progress_token,
            trace_context(),
            request.log_level,
            caller.to_json() if caller is not None else None,
        )
        try:
            await queue.enqueue(job)
        except Exception as exc:
            log.exception("queueing task %s failed", live.id)
            failed = f"Internal error: the task could not be queued ({type(exc).__name__})"
            await tasks.fail(live, ProtocolError(INTERNAL_ERROR, failed))

    async def finish(self, session: ServerSession, request: Request, tool: Tool | None, result: dict[str, Any]) -> bool:
        """Store ``result`` as the task's, once the call became one (a deferred task may not have);
        a queued task's result is the worker's to store (guards here saw an empty one)."""
        if self.elsewhere:
            return True
        if request.task is None:
            return False
        codec = request.codec
        rendered = codec.call_result(result, tool is not None and tool.wrap_structured)
        await session.server.tasks.finish(request.task, codec.finish(rendered, None))
        return True

    async def fail(self, session: ServerSession, request: Request, error: ProtocolError) -> bool:
        if self.elsewhere:
            return True  # the task is the worker's to end
        if request.task is None:
            return False
        await session.server.tasks.fail(request.task, error)
        return True


__all__ = ["TaskClaim", "TasksExtension"]
