"""``tools/call``: the one path every call of a tool takes, guarded or not.

Theory of operation
-------------------
:func:`call_tool` is the dispatch table's handler. It answers at once what is wrong with
the request itself (``name`` not a string, ``arguments`` not an object), then starts the
call as a task of the session's (:meth:`~toolwire.server.session.ServerSession.start`):

* without guards, a registered tool runs in one coroutine, :func:`run_tool` with
  ``answer=True``, which also renders the answer (the hot path: one coroutine around the
  tool's own);
* with guards (or a tool only the low-level handlers know), :func:`_call_through` runs the
  guards, whose ``next`` is :func:`tool_result`: the same :func:`run_tool`, returning the
  result for the guards to see instead of the answer.

So checking the task plan, validating the arguments, running the tool and turning what it
raises into the result the specification calls for are written once. The call's answer is
its result rendered for the request's version (:func:`call_answer`), or, once the call
became a task, the task's stored result.

Errors: unknown tools and bad arguments are what the codec of the request's version says
(``-32602``, or an ``isError`` result from 2025-11-25 on); a tool that raises is an
``isError`` result (masked when the server masks errors), logged with its traceback; a
:class:`~toolwire.protocol.errors.ProtocolError` the tool raises is the call's error.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from ..guards.seam import Call, run_guarded
from ..logs import get_logger
from ..protocol.connection import Request
from ..protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    ProtocolError,
    exception_text,
)
from ..protocol.outgoing import Answer
from ..protocol.versions import TASKS_EXTENSION
from ..tools.results import ToolError, error_result
from ..tools.tool import OutputInvalid, Tool
from ..tools.validation import ArgumentsInvalid
from .context import CapabilityMissing, ClientRequestFailed, Context, InputRequired
from .dispatch import declares, extension_missing

if TYPE_CHECKING:
    from .session import ServerSession

log = get_logger("toolwire")


def call_tool(session: ServerSession, request: Request) -> None:
    """Start answering a ``tools/call`` (the handler of the dispatch table's route)."""
    params = request.params
    name = params.get("name")
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    work: Coroutine[Any, Any, Answer | None]
    tool = None
    try:
        if type(name) is not str:
            raise ProtocolError(INVALID_PARAMS, 'Invalid params: "name" must be a string')
        if type(arguments) is not dict:
            raise ProtocolError(INVALID_PARAMS, 'Invalid params: "arguments" must be an object')
        tool = request.target  # looked up already by a transport that checked it (HTTP)
        if tool is None:
            tool = session.server.registry.by_key.get(name)  # registry.get, without the call
            if tool is not None and not tool.enabled:
                tool = None
        if tool is None or session.server.guarded is not None:
            work = _call_through(session, request, name, tool, arguments)
        else:
            work = tool_result(session, request, name, tool, arguments, True)
    except ProtocolError as exc:
        work = _ready(session.connection.respond_error(request, exc))
    session.start(request, work, tool)


def tool_result(
    session: ServerSession,
    request: Request,
    name: str,
    tool: Tool | None,
    arguments: dict[str, Any],
    answer: bool = False,
) -> Coroutine[Any, Any, Any]:
    """The result of calling tool ``name`` (``tool``, when registered) with ``arguments``,
    as guards see it; with ``answer``, the call's answer instead (see :func:`run_tool`).
    No coroutine of its own: what it checks at once (the tool unknown, the task plan
    refused) raises ``ProtocolError`` when called."""
    if tool is None:
        if session.server.raw_call_handler is not None:
            return _raw_tool_result(session, request, name, arguments)
        raise ProtocolError(INVALID_PARAMS, f"Unknown tool: {name}")
    if tool.task is None and "task" not in request.params:
        as_task, ttl_ms = False, None  # most calls: task_plan's first case, without the call
    else:
        as_task, ttl_ms = task_plan(request, tool)
    try:
        arguments = tool.validate_arguments(arguments)
    except ArgumentsInvalid as exc:
        invalid = request.codec.invalid_arguments(str(exc))
        return _ready(call_answer(session, request, tool, invalid) if answer else invalid)
    return run_tool(session, request, tool, arguments, as_task, ttl_ms, answer)


async def run_tool(
    session: ServerSession,
    request: Request,
    tool: Tool,
    arguments: dict[str, Any],
    as_task: bool = False,
    ttl_ms: int | None = None,
    answer: bool = False,
) -> Any:
    """Run the tool: its result, with whatever it raises turned into the result it calls
    for (a :class:`ProtocolError` it raises is raised). With ``answer``: the call's answer
    instead (``None`` when it became a task, whose result is then stored), a
    ``ProtocolError`` being its error answer."""
    try:
        context = (
            Context(session, request, session.answers(request, tool.name, arguments), tool.owner)
            if tool.wants_context
            else None
        )
        try:
            if as_task:
                await _become_task(session, request, tool, context, ttl_ms)
            result = tool.result(await tool.invoke(arguments, context, session.loop))  # Tool.call, one coroutine less
        except (Exception, InputRequired) as exc:
            result = _tool_failed(session, request, tool, arguments, context, exc)
    except ProtocolError as exc:
        if not answer:
            raise
        return await _call_failed(session, request, exc)
    if not answer:
        return result
    if request.task is not None:
        await _task_finished(session, request, tool, result)
        return None
    return call_answer(session, request, tool, result)


async def _call_through(
    session: ServerSession, request: Request, name: str, tool: Tool | None, arguments: dict[str, Any]
) -> Answer | None:
    """Answer a ``tools/call`` through the guards, or of a tool that only the low-level
    handlers may know."""
    try:
        guarded = session.server.guarded
        if guarded is None:
            result = await tool_result(session, request, name, tool, arguments)
        else:
            call = Call(
                session, request, name, arguments, lambda: tool_result(session, request, name, tool, arguments), tool
            )
            result = await run_guarded(guarded, call)
    except ProtocolError as exc:
        return await _call_failed(session, request, exc)
    if tool is None:
        tool = session.server.known_raw_tool(name)
    if request.task is not None:
        await _task_finished(session, request, tool, result)
        return None
    return call_answer(session, request, tool, result)


async def _raw_tool_result(
    session: ServerSession, request: Request, name: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    """:func:`tool_result` for a tool the server's raw handlers may know."""
    tool = await session.server.find_raw_tool(name)
    if tool is None:
        raise ProtocolError(INVALID_PARAMS, f"Unknown tool: {name}")
    result: dict[str, Any] = await tool_result(session, request, name, tool, arguments)
    return result


def call_answer(session: ServerSession, request: Request, tool: Tool | None, result: dict[str, Any]) -> Answer | None:
    """The answer to a ``tools/call`` (not a task) whose tool gave ``result``."""
    codec = request.codec
    if codec.renders_content or "structuredContent" in result:  # else rendering leaves it as it is
        result = codec.call_result(result, tool is not None and tool.wrap_structured)
    return session.connection.respond(request, result)


async def _task_finished(session: ServerSession, request: Request, tool: Tool | None, result: dict[str, Any]) -> None:
    """Store ``result`` as the result of the task the call became."""
    codec = request.codec
    rendered = codec.call_result(result, tool is not None and tool.wrap_structured)
    await session.server.tasks.finish(request.task, codec.finish(rendered, None))


async def _call_failed(session: ServerSession, request: Request, error: ProtocolError) -> Answer | None:
    """The call ends with ``error``: its answer, or its task's failure."""
    if request.task is not None:
        await session.server.tasks.fail(request.task, error)
        return None
    return session.connection.respond_error(request, error)


def task_plan(request: Request, tool: Tool) -> tuple[bool, int | None]:
    """Whether this call runs as a task, and the lifetime (ms) its client asked for.

    2026-07-28: a task whenever the tool can be one and the request declares the tasks
    extension; ``-32021`` for a ``task="required"`` tool without it. 2025-11-25: a task
    when the client sent ``task``; ``-32601`` for ``task`` on a tool that takes none or
    its absence on one that requires it. Older versions have no tasks: the call runs
    in the request."""
    support = tool.task
    if support is None and "task" not in request.params:
        return False, None  # most calls: neither the tool nor the request mentions tasks
    codec = request.codec
    if codec.modern:
        if support is None:
            return False, None
        if declares(request, TASKS_EXTENSION):
            return True, None
        if support == "required":
            raise extension_missing(
                TASKS_EXTENSION,
                f"tool {tool.name!r} runs only as a task; "
                f"declare the {TASKS_EXTENSION} extension in the request's client capabilities",
            )
        return False, None
    if not codec.tasks:
        return False, None
    asked = request.params.get("task")
    if asked is None:
        if support == "required":
            raise ProtocolError(
                METHOD_NOT_FOUND,
                f'Method not found: tool {tool.name!r} runs only as a task: send "task" with the call',
            )
        return False, None
    if support is None:
        raise ProtocolError(
            METHOD_NOT_FOUND, f'Method not found: tool {tool.name!r} does not run as a task: call it without "task"'
        )
    ttl = asked.get("ttl") if type(asked) is dict else None
    if type(asked) is not dict or not (ttl is None or (type(ttl) in (int, float) and ttl > 0)):
        raise ProtocolError(
            INVALID_PARAMS, 'Invalid params: "task" must be an object with an optional "ttl" above 0 (ms)'
        )
    return True, None if ttl is None else int(ttl)


async def _become_task(
    session: ServerSession, request: Request, tool: Tool, context: Context | None, ttl_ms: int | None
) -> None:
    """Make the call a task: at once, or when the tool says so (``defer_task``)."""
    if tool.defer_task and context is not None:
        context.defer_task(tool.name, ttl_ms)
    else:
        await session.detach(request, tool.name, ttl_ms)


def _tool_failed(
    session: ServerSession,
    request: Request,
    tool: Tool,
    arguments: dict[str, Any],
    context: Context | None,
    exc: Exception | InputRequired,
) -> dict[str, Any]:
    """The result for what the tool raised; ``ProtocolError`` when the call must fail
    instead (one the tool raised, or a result its output schema refuses)."""
    if isinstance(exc, ProtocolError):
        raise exc
    if isinstance(exc, ToolError):
        return error_result(str(exc))
    if isinstance(exc, InputRequired):
        assert context is not None
        return session.input_required(tool.name, arguments, context, exc)
    if isinstance(exc, CapabilityMissing):
        return request.codec.missing_capability(exc.capability, str(exc))
    if isinstance(exc, ClientRequestFailed):
        return error_result(f"Tool '{tool.name}' could not finish: {exc}")
    if isinstance(exc, OutputInvalid):
        log.error("%s", exc)
        raise ProtocolError(INTERNAL_ERROR, f"Internal error: {exc}") from None
    log.error("tool %r raised", tool.name, exc_info=exc)
    if session.server.mask_errors:
        return error_result(f"Tool '{tool.name}' failed with an internal error")
    return error_result(f"Tool '{tool.name}' failed: {exception_text(exc)}")


async def _ready(value: Any) -> Any:
    return value


__all__ = ["call_answer", "call_tool", "run_tool", "task_plan", "tool_result"]
