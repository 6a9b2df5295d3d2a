"""The ``tasks/*`` methods: handlers of the dispatch table, answering about the tasks that
calls became (see :mod:`toolwire.tasks`).

Which versions have which method, whether this server runs tasks at all and (2026-07-28)
whether the request declares the tasks extension are checked here, in that order, each
with its own message (``-32601``, ``-32601``, ``-32021``), until tasks move onto the
extension API. A task the caller may not see is not found (``-32602``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..protocol.connection import Request
from ..protocol.errors import INVALID_PARAMS, METHOD_NOT_FOUND, ProtocolError
from ..protocol.outgoing import Answer
from ..protocol.versions import META_RELATED_TASK, TASKS_EXTENSION
from .dispatch import declares, extension_missing

if TYPE_CHECKING:
    from ..tasks.manager import TaskManager
    from ..tasks.model import TaskRecord
    from .session import ServerSession


def _tasks_for(session: ServerSession, request: Request) -> TaskManager:
    """The task manager, if ``request`` may use it: ``-32601`` where the era has no such
    method or the server no task tools, ``-32021`` for a 2026-07-28 request that does not
    declare the tasks extension."""
    codec = request.codec
    method = request.method
    if codec.modern and method in ("tasks/result", "tasks/list"):
        raise ProtocolError(
            METHOD_NOT_FOUND,
            f"Method not found: {method} does not exist in {codec.version} (tasks/get carries the result)",
        )
    if not codec.modern and (not codec.tasks or method == "tasks/update"):
        raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method} does not exist in {codec.version}")
    if "tasks" not in session.server.identity.capabilities:
        raise ProtocolError(METHOD_NOT_FOUND, "Method not found: this server runs no tool as a task")
    if codec.modern and not declares(request, TASKS_EXTENSION):
        raise extension_missing(
            TASKS_EXTENSION,
            f"{method} needs the {TASKS_EXTENSION} extension declared in the request's client capabilities",
        )
    return session.server.tasks


def task_method(session: ServerSession, request: Request) -> None:
    session.start(request, _answer_task_method(session, request))


async def _answer_task_method(session: ServerSession, request: Request) -> Answer | None:
    try:
        tasks = _tasks_for(session, request)
        if request.method == "tasks/list":
            records, cursor = await tasks.page(session, request)
            listed: dict[str, Any] = {"tasks": [request.codec.task(record) for record in records]}
            if cursor is not None:
                listed["nextCursor"] = cursor
            return session.connection.respond(request, listed)
        if request.method == "tasks/update" and type(request.params.get("inputResponses")) is not dict:
            problem = '"inputResponses" must be an object of answers by key'
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: {problem}")
        record = await tasks.find(session, request)
        handler = _TASK_METHODS[request.method]
        return await handler(session, request, tasks, record)
    except ProtocolError as exc:
        return session.connection.respond_error(request, exc)


async def _task_get(session: ServerSession, request: Request, tasks: TaskManager, record: TaskRecord) -> Answer | None:
    return session.connection.respond(request, request.codec.task(record, detailed=request.codec.modern))


async def _task_result(
    session: ServerSession, request: Request, tasks: TaskManager, record: TaskRecord
) -> Answer | None:
    live = tasks.live(record.id)
    if live is not None:
        live.waiters.append(request.id)  # its questions now go on this request's stream
    try:
        record = await tasks.wait(record)
    finally:
        if live is not None:
            live.waiters.remove(request.id)
    related = {META_RELATED_TASK: {"taskId": record.id}}
    if record.result is not None:
        return session.connection.respond(
            request, {**record.result, "_meta": {**record.result.get("_meta", {}), **related}}
        )
    error = record.error or {
        "code": INVALID_PARAMS,
        "message": "The task was cancelled before it finished: it has no result",
    }
    return session.connection.respond_error(request, ProtocolError(error["code"], error["message"], error.get("data")))


async def _task_cancel(
    session: ServerSession, request: Request, tasks: TaskManager, record: TaskRecord
) -> Answer | None:
    if request.codec.modern:
        await tasks.cancel(record)  # an ended task is left as it is: the answer is the same
        return session.connection.respond(request, {})
    if record.terminal:
        raise ProtocolError(INVALID_PARAMS, f"Cannot cancel task: already in terminal status {record.status!r}")
    return session.connection.respond(request, request.codec.task(await tasks.cancel(record)))


async def _task_update(
    session: ServerSession, request: Request, tasks: TaskManager, record: TaskRecord
) -> Answer | None:
    await tasks.answer(record, request.params["inputResponses"])
    return session.connection.respond(request, {})


#: What each task method does once its task is found: handler(session, request, tasks, record).
_TASK_METHODS: dict[str, Callable[..., Awaitable[Answer | None]]] = {
    "tasks/get": _task_get,
    "tasks/result": _task_result,
    "tasks/cancel": _task_cancel,
    "tasks/update": _task_update,
}
