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

So asking the extensions whether one takes the call over (:meth:`Extension.claim_call
<toolwire.server.extensions.Extension.claim_call>`: the tasks extension makes it a task),
validating the arguments, running the tool and turning what it raises into the result the
specification calls for are written once. The call's answer is its result rendered for
the request's version (:func:`call_answer`), unless the extension that took it over deals
with the result (a task stores it).

Errors: unknown tools and bad arguments are what the codec of the request's version says
(``-32602``, or an ``isError`` result from 2025-11-25 on); a tool that raises is an
``isError`` result (masked when the server masks errors), logged with its traceback; a
:class:`~toolwire.protocol.errors.ProtocolError` the tool raises is the call's error.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Final

from ..guards.seam import Call, run_guarded
from ..logs import get_logger
from ..protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, ProtocolError, exception_text
from ..protocol.incoming import Request
from ..protocol.outgoing import Answer
from ..tools.direct import DirectCall
from ..tools.results import ToolError, error_result
from ..tools.tool import OutputInvalid, Tool
from ..tools.validation import ArgumentsInvalid
from .context import CapabilityMissing, ClientRequestFailed, Context, InputRequired
from .request_state import answers, input_required

if TYPE_CHECKING:
    from .extensions import CallClaim
    from .server import Server
    from .session import ServerSession
    from .visibility import Visibility

log = get_logger("toolwire")


def call_tool(session: ServerSession, request: Request, visibility: Visibility | None = None) -> None:
    """Start answering a ``tools/call`` (the handler of the dispatch table's route). A server
    with visibility rules routes calls here with its ``visibility`` (see :mod:`.visibility`),
    so that one without them checks nothing."""
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
            tool = session.tools.get(name)  # registry.get, without the call
            if tool is not None and not tool.enabled:
                tool = None
        if visibility is not None and tool is not None and visibility.hides(session, request, "tools", name, tool):
            tool = None  # hidden from this caller or session: as unknown to them as a missing one
        server = session.server
        if tool is None or server.guarded is not None:
            work = _call_through(session, request, name, tool, arguments)
        elif tool.alone and not server.call_claimers:  # the tool's own coroutine is the call's
            direct: DirectCall | None = tool.direct
            coroutine: Any  # an async def's
            if direct is not None and direct.takes(arguments):
                coroutine = direct.handler(**arguments)  # validate_arguments then invoke, their frames left out
                session.start(request, coroutine, tool, ANSWER_CALL)
                return
            try:
                arguments = tool.validate_arguments(arguments)
            except ArgumentsInvalid as refused:
                work = _invalid(session, request, tool, refused, True)
            else:
                coroutine = tool.invoke(arguments, None, session.loop)
                session.start(request, coroutine, tool, ANSWER_CALL)
                return
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
    No coroutine of its own: what it checks at once (the tool unknown, an extension
    refusing the call) raises ``ProtocolError`` when called."""
    if tool is None:
        if session.server.raw_call_handler is not None:
            return _raw_tool_result(session, request, name, arguments)
        raise ProtocolError(INVALID_PARAMS, f"Unknown tool: {name}")
    claim = None
    claimers = session.server.call_claimers
    if claimers:  # most servers have no extension that takes calls over
        for extension in claimers:
            claim = extension.claim_call(request, tool)
            if claim is not None:
                break
    try:
        arguments = tool.validate_arguments(arguments)
    except ArgumentsInvalid as exc:
        return _invalid(session, request, tool, exc, answer)
    return run_tool(session, request, tool, arguments, claim, answer)


def _invalid(
    session: ServerSession, request: Request, tool: Tool, exc: ArgumentsInvalid, answer: bool
) -> Coroutine[Any, Any, Any]:
    """The result (or with ``answer``, the answer) of a call whose arguments break the
    tool's schema; ``ProtocolError`` where the request's version makes it an error."""
    invalid = request.codec.invalid_arguments(str(exc))
    return _ready(call_answer(session, request, tool, invalid) if answer else invalid)


async def run_tool(
    session: ServerSession,
    request: Request,
    tool: Tool,
    arguments: dict[str, Any],
    claim: CallClaim | None = None,
    answer: bool = False,
) -> Any:
    """Run the tool (within ``claim``, the extension's that took the call over, if any):
    its result, with whatever it raises turned into the result it calls for (a
    :class:`ProtocolError` it raises is raised). With ``answer``: the call's answer instead
    (``None`` when the claim dealt with the result: a task stored it), a ``ProtocolError``
    being its error answer; one ``str`` it returns answered as bytes around the text."""
    text: str | None = None
    try:
        context = (
            Context(session, request, answers(session, request, tool.name, arguments), tool.owner)
            if tool.wants_context
            else None
        )
        try:
            if claim is not None:
                request.claim = claim
                await claim.begin(session, request, tool, context)
                if claim.elsewhere:  # another process runs it (a worker): its result is stored there
                    return None if answer else {"content": []}
            value = await tool.invoke(arguments, context, session.loop)  # Tool.call, one coroutine less
            if answer and claim is None and type(value) is str and tool.text_results:
                text = value  # answered below, outside the tool's failures
            else:
                result = tool.result(value)
        except (Exception, InputRequired) as raised:
            result = _tool_failed(session, request, tool, arguments, context, raised)
    except ProtocolError as exc:
        if not answer:
            raise
        return await _call_failed(session, request, exc)
    if text is not None:
        return session.connection.respond_text(request, text)
    if not answer:
        return result
    if claim is not None and await claim.finish(session, request, tool, result):
        return None
    return call_answer(session, request, tool, result)


def answer_call(
    session: ServerSession, request: Request, tool: Tool, value: Any, raised: Exception | InputRequired | None
) -> Answer | None:
    """The answer to a call of ``tool`` (one whose coroutine is the handler's own:
    :attr:`Tool.alone`, no extension taking it over) whose handler returned ``value`` or
    raised ``raised``: what :func:`run_tool` answers, without its coroutine. The session
    calls it in the call's context. ``TypeError`` for a result JSON cannot carry."""
    if raised is None:
        if type(value) is str and tool.text_results:
            return session.connection.respond_text(request, value)
        try:
            result = tool.result(value)
        except Exception as failure:
            raised = failure
    try:
        if raised is not None:
            result = _tool_failed(session, request, tool, {}, None, raised)
    except ProtocolError as exc:
        return session.connection.respond_error(request, exc)
    return call_answer(session, request, tool, result)


#: :func:`answer_call`, bound once (Final: the compiled build passes it without a look-up).
ANSWER_CALL: Final = answer_call


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
    claim = request.claim
    if claim is not None and await claim.finish(session, request, tool, result):
        return None
    return call_answer(session, request, tool, result)


async def _raw_tool_result(
    session: ServerSession, request: Request, name: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    """:func:`tool_result` for a tool the server's raw handlers may know."""
    tool = await session.server.find_raw_tool(name)
    if tool is None or not session.server.visibility.allows(session, request, "tools", name, tool):
        raise ProtocolError(INVALID_PARAMS, f"Unknown tool: {name}")
    result: dict[str, Any] = await tool_result(session, request, name, tool, arguments)
    return result


def call_answer(session: ServerSession, request: Request, tool: Tool | None, result: dict[str, Any]) -> Answer | None:
    """The answer to a ``tools/call`` (not a task) whose tool gave ``result``."""
    codec = request.codec
    if codec.renders_content or "structuredContent" in result:  # else rendering leaves it as it is
        result = codec.call_result(result, tool is not None and tool.wrap_structured)
    return session.connection.respond(request, result)


async def _call_failed(session: ServerSession, request: Request, error: ProtocolError) -> Answer | None:
    """The call ends with ``error``: its answer, unless the extension that took it over
    deals with it (a task stores it as its failure)."""
    claim = request.claim
    if claim is not None and await claim.fail(session, request, error):
        return None
    return session.connection.respond_error(request, error)


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
        return input_required(session, tool.name, arguments, context, exc)
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


def route_calls(server: Server) -> None:
    """Point ``tools/call`` at the handler ``server`` needs: :func:`call_tool` itself, given
    the server's visibility once it has rules, behind :func:`~.versions.call_tool_version`
    once it has versioned tools. Servers with neither pay for neither."""
    handler: Callable[[ServerSession, Request], None] = call_tool
    if server.visibility.active:
        handler = functools.partial(call_tool, visibility=server.visibility)
    if server.tool_versions:
        from .versions import call_tool_version

        handler = functools.partial(call_tool_version, inner=handler)
    server.dispatch.register("tools/call", handler, owner="")


async def _ready(value: Any) -> Any:
    return value


__all__ = ["answer_call", "call_answer", "call_tool", "route_calls", "run_tool", "tool_result"]
