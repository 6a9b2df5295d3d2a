"""The ``tasks/*`` methods: handlers the tasks extension registers (see :mod:`.extension`),
answering about the tasks that calls became.

The routes say which versions have which method and that a 2026-07-28 request must
declare the extension; a handler here finds the task (one the caller may not see is not
found: ``-32602``) and answers about it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..protocol.errors import INVALID_PARAMS, ProtocolError
from ..protocol.incoming import Request
from ..protocol.outgoing import Answer
from ..protocol.versions import META_RELATED_TASK
from ..server.context import ClientRequestFailed
from .model import TaskRecord
from .notices import take_notices

if TYPE_CHECKING:
    from ..server.session import ServerSession
    from .manager import TaskManager


def task_method(session: ServerSession, request: Request) -> None:
    session.start(request, _answer_task_method(session, request))


async def _answer_task_method(session: ServerSession, request: Request) -> Answer | None:
    try:
        tasks = session.server.tasks
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
    if record.notices:
        await _relay_notices(session, request, tasks, record.id)
    return session.connection.respond(request, request.codec.task(record, detailed=request.codec.modern))


async def _relay_notices(session: ServerSession, request: Request, tasks: TaskManager, task_id: str) -> None:
    """The notifications a worker kept for the task's client (2025-11-25), sent on the stream
    of ``request`` (a ``tasks/result`` or ``tasks/get`` of the task) tagged with the task."""
    for notice in await take_notices(tasks.store, task_id):
        meta = {**notice["params"].get("_meta", {}), META_RELATED_TASK: {"taskId": task_id}}
        session.send(session.connection.notify(None, notice["method"], {**notice["params"], "_meta": meta}), request.id)


async def _task_result(
    session: ServerSession, request: Request, tasks: TaskManager, record: TaskRecord
) -> Answer | None:
    live = tasks.live(record.id)
    if live is not None:
        live.waiters.append(request.id)  # its questions now go on this request's stream
    asked: set[str] = set()

    async def relay(found: TaskRecord) -> None:
        """A worker's notifications and questions (in the store), sent on this request's stream."""
        if found.notices:
            await _relay_notices(session, request, tasks, found.id)
        for key, question in list(found.inputs.items()):
            if key in asked:
                continue
            asked.add(key)
            params = {**question["params"], "_meta": {META_RELATED_TASK: {"taskId": found.id}}}
            try:
                answer = await session.request_client(question["method"], params, request.id)
            except ClientRequestFailed:
                continue  # asked again by the next tasks/result
            await tasks.answer(found, {key: answer})

    try:
        record = await tasks.wait(record, relay)
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
