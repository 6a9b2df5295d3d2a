"""Serving resources, prompts and completion on a session: ``resources/read``,
``resources/subscribe`` and ``unsubscribe`` (legacy), ``prompts/get`` and ``completion/complete``.

Each handler takes the :class:`~toolwire.server.session.ServerSession` and the request. Its
errors are the specification's: a resource that does not exist is the codec's not-found
error (``-32002`` up to 2025-11-25, ``-32602`` after, ``data.uri`` in both); an unknown
prompt, bad prompt arguments, an unknown completion reference are ``-32602`` naming the
problem; a function that raises is ``-32603`` (its text masked when the server masks
errors, and logged with its traceback). On 2026-07-28 a prompt or resource function may ask
the user or the model through its :class:`~toolwire.Context`, as a tool does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..completion import complete
from ..guards.seam import Call, describe, run_guarded
from ..logs import get_logger
from ..protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    ProtocolError,
    exception_text,
)
from ..protocol.incoming import Request
from ..protocol.outgoing import Answer
from .context import CapabilityMissing, ClientRequestFailed, Context, InputRequired
from .request_state import answers, input_required

if TYPE_CHECKING:
    from .session import ServerSession

log = get_logger("toolwire")

Work = Callable[[Context | None], Awaitable[dict[str, Any]]]


def _string(request: Request, key: str) -> str:
    value = request.params.get(key)
    if type(value) is not str:
        raise ProtocolError(INVALID_PARAMS, f'Invalid params: "{key}" must be a string')
    return value


async def _run(
    session: ServerSession,
    request: Request,
    subject: str,
    arguments: dict[str, Any],
    wants_context: bool,
    work: Work,
) -> dict[str, Any]:
    """``work``'s result, with a Context when it wants one; a 2026-07-28 question ends the
    round with an ``InputRequiredResult``. Failures become the protocol errors above."""
    context = Context(session, request, answers(session, request, subject, arguments)) if wants_context else None
    try:
        return await work(context)
    except ProtocolError:
        raise
    except InputRequired as exc:
        assert context is not None
        return input_required(session, subject, arguments, context, exc)
    except CapabilityMissing as exc:
        if request.codec.modern:
            raise ProtocolError(
                MISSING_REQUIRED_CLIENT_CAPABILITY, str(exc), {"requiredCapabilities": {exc.capability: {}}}
            ) from None
        raise ProtocolError(INTERNAL_ERROR, f"Internal error: {exc}") from None
    except ClientRequestFailed as exc:
        raise ProtocolError(INTERNAL_ERROR, f"Internal error: {subject} could not finish: {exc}") from None
    except Exception as exc:
        from ..resources.resource import ResourceNotFound

        if isinstance(exc, ResourceNotFound):
            raise request.codec.resource_not_found(exc.uri, exc.reason) from None
        log.error("%s raised", subject, exc_info=True)
        if session.server.mask_errors:
            raise ProtocolError(INTERNAL_ERROR, f"Internal error: {subject} failed") from None
        raise ProtocolError(INTERNAL_ERROR, f"Internal error: {subject} failed: {exception_text(exc)}") from None


def _answer(session: ServerSession, request: Request, work: Callable[[], Awaitable[dict[str, Any]]]) -> None:
    """Run ``work`` for ``request`` (eagerly, as tool calls are) and send its result or error."""

    async def answer() -> Answer | None:
        try:
            guarded = session.server.guarded
            if guarded is None:
                result = await work()
            else:
                name, arguments = describe(request)
                result = await run_guarded(guarded, Call(session, request, name, arguments, work))
        except ProtocolError as exc:
            return session.connection.respond_error(request, exc)
        return session.connection.respond(request, result)

    session.start(request, answer())


# -- resources ------------------------------------------------------------------------------


def read_resource(session: ServerSession, request: Request) -> None:
    async def read() -> dict[str, Any]:
        from ..resources.resource import Resource

        uri = _string(request, "uri")
        codec = request.codec
        found = session.server.find_resource(uri)
        if found is None or _hidden(session, request, found[0]):
            raise codec.resource_not_found(uri)
        resource, variables = found

        async def contents(context: Context | None) -> dict[str, Any]:
            if isinstance(resource, Resource):
                entries = await resource.read(context)
            else:
                entries = await resource.read(uri, variables, context)
            return {"contents": codec.resource_contents(entries)}

        result = await _run(session, request, f"resources/read {uri}", {}, resource.wants_context, contents)
        identity = session.server.identity
        return codec.cacheable(result, identity.ttl_ms, identity.cache_scope)

    _answer(session, request, read)


def subscribe(session: ServerSession, request: Request) -> None:
    """``resources/subscribe`` and ``resources/unsubscribe`` (legacy): updates of ``uri``
    reach this session from now on, or no longer."""
    try:
        uri = _string(request, "uri")
    except ProtocolError as exc:
        return session.fail(request, exc)
    if request.method == "resources/subscribe":
        session.resource_subscriptions.add(uri)
    else:
        session.resource_subscriptions.discard(uri)
    session.send(session.connection.respond(request, {}), request.id)
    return None


# -- prompts --------------------------------------------------------------------------------


def get_prompt(session: ServerSession, request: Request) -> None:
    async def get() -> dict[str, Any]:
        from ..prompts.prompt import PromptArgumentsInvalid

        name = _string(request, "name")
        prompt = session.server.prompts.get(name)
        if prompt is None or _hidden(session, request, prompt):
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: unknown prompt {name!r}", {"name": name})
        try:
            arguments = prompt.validate_arguments(request.params.get("arguments"))
        except PromptArgumentsInvalid as exc:
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: {exc}") from None
        codec = request.codec

        async def render(context: Context | None) -> dict[str, Any]:
            result = await prompt.render(arguments, context)
            result["messages"] = codec.prompt_messages(result["messages"])
            return result

        return await _run(session, request, f"prompts/get {name}", arguments, prompt.wants_context, render)

    _answer(session, request, get)


# -- completion -----------------------------------------------------------------------------


def complete_argument(session: ServerSession, request: Request) -> None:
    async def completion() -> dict[str, Any]:
        params = request.params
        ref, argument = params.get("ref"), params.get("argument")
        if type(ref) is not dict or type(argument) is not dict:
            raise ProtocolError(INVALID_PARAMS, 'Invalid params: "ref" and "argument" must be objects')
        name, value = argument.get("name"), argument.get("value", "")
        if type(name) is not str or type(value) is not str:
            raise ProtocolError(INVALID_PARAMS, 'Invalid params: "argument" needs a string "name" and "value"')
        context = params.get("context")
        resolved = context.get("arguments") if type(context) is dict else None
        completers = _completers(session, request, ref)
        completer = completers.get(name)
        if completer is None:
            return {"completion": {"values": [], "total": 0, "hasMore": False}}
        try:
            found = await complete(completer, value, resolved if type(resolved) is dict else {})
        except Exception as exc:
            log.error("completing %r raised", name, exc_info=True)
            raise ProtocolError(
                INTERNAL_ERROR, f"Internal error: completing {name!r} failed: {exception_text(exc)}"
            ) from None
        return {"completion": found}

    _answer(session, request, completion)


def _completers(session: ServerSession, request: Request, ref: dict[str, Any]) -> dict[str, Any]:
    kind = ref.get("type")
    if kind == "ref/prompt":
        name = ref.get("name")
        prompt = session.server.prompts.get(name) if type(name) is str else None
        if prompt is None or _hidden(session, request, prompt):
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: unknown prompt {name!r}")
        return prompt.completers
    if kind == "ref/resource":
        uri = ref.get("uri")
        template = session.server.resource_templates.get(uri) if type(uri) is str else None
        if template is None and type(uri) is str:
            found = session.server.find_resource(uri)
            if found is not None and found[1]:
                template = found[0]  # type: ignore[assignment]
        if template is None or _hidden(session, request, template):
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: no resource template {uri!r}")
        return template.completers
    raise ProtocolError(
        INVALID_PARAMS, f'Invalid params: "ref.type" must be "ref/prompt" or "ref/resource", not {kind!r}'
    )


def _hidden(session: ServerSession, request: Request, item: Any) -> bool:
    """Whether the visibility rules of ``request`` hide ``item`` (a prompt, a resource or a
    template): it is then as unknown as one that does not exist."""
    from ..prompts.prompt import Prompt
    from ..resources.resource import Resource

    visibility = session.server.visibility
    if not visibility.active:
        return False
    if isinstance(item, Prompt):
        return visibility.hides(session, request, "prompts", item.name, item)
    if isinstance(item, Resource):
        return visibility.hides(session, request, "resources", item.uri, item)
    return visibility.hides(session, request, "resourceTemplates", item.uri_template, item)
