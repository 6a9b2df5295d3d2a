"""The :class:`Context` a tool receives when it annotates a parameter with it.

Through it a tool reports progress, logs to the client, learns it was cancelled, and asks the
user (elicitation, form mode), the client's model (sampling) or the client's roots. The same tool code works in
both eras: on a legacy connection :meth:`Context.elicit` and :meth:`Context.sample` send a
request to the client and wait for the answer; on a 2026-07-28 request they end this round
with an ``InputRequiredResult`` and, when the client retries with the answers, the tool runs
again from the start and gets them back at the same calls. Write such tools so that work
with side effects happens after the questions.

``report_progress`` and ``log`` work from async and sync tools alike (sync tools run on a
worker thread) and may be awaited or not. ``elicit`` and ``sample`` are coroutines.

In a call that became a task (see docs/tasks.md) the same methods work through the task:
progress is also kept as the task's status message; a question puts the task in
``input_required`` until the client answers it (2025-11-25: a request tagged with the
task; 2026-07-28: an entry of the task's ``inputRequests``, answered with
``tasks/update``, so the tool does not run again from the start); 2026-07-28 sends no log
messages for a task.
"""

from __future__ import annotations

from collections.abc import Awaitable, Generator
from typing import TYPE_CHECKING, Any

from ..errors import ToolwireError
from ..protocol.codec import LOG_SEVERITY
from ..tools.tool import ToolContext
from ..tools.validation import ArgumentsInvalid, Validator

if TYPE_CHECKING:
    from ..auth.identity import Identity
    from ..protocol.incoming import Request
    from .server import Server
    from .session import ServerSession
    from .visibility import RuleSet


class CapabilityMissing(ToolwireError):
    """The client did not declare a capability the tool needs (``elicitation``, ``sampling``).

    A tool may catch it to fall back; uncaught, the call fails with ``-32021`` (2026-07-28) or
    an ``isError`` result (legacy versions, which have no such code)."""

    def __init__(self, capability: str, message: str) -> None:
        super().__init__(message)
        self.capability = capability


class ClientRequestFailed(ToolwireError):
    """The client answered a server request (elicitation, sampling) with an error."""


class InputRequired(BaseException):
    """Ends a 2026-07-28 round: the client must answer ``requests`` and retry.

    A ``BaseException`` so that a tool's ``except Exception`` does not swallow it."""

    def __init__(self, requests: dict[str, Any]) -> None:
        super().__init__("input required")
        self.requests = requests


class Elicitation:
    """The user's answer: ``action`` is ``"accept"``, ``"decline"`` or ``"cancel"``; ``data``
    holds the accepted content (as the requested type when a type was given)."""

    __slots__ = ("action", "content", "data")

    def __init__(self, action: str, content: dict[str, Any] | None, data: Any) -> None:
        self.action = action
        self.content = content
        self.data = data

    @property
    def accepted(self) -> bool:
        return self.action == "accept"

    def __repr__(self) -> str:
        return f"Elicitation(action={self.action!r}, data={self.data!r})"


class _Done:
    """What ``report_progress`` and ``log`` return: already done, awaitable for symmetry."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, None]:
        return
        yield


_DONE = _Done()


class Context(ToolContext):
    """Per-call services for a tool. Get one by adding a parameter annotated ``Context``."""

    def __init__(
        self,
        session: ServerSession,
        request: Request,
        answers: dict[str, Any] | None = None,
        owner: Server | None = None,
    ) -> None:
        self._session = session
        self._request = request
        self._owner = owner
        self._progress: float | None = None
        #: 2026-07-28: answers gathered in earlier rounds, by input-request key.
        self.answers: dict[str, Any] = answers if answers is not None else {}
        self._asked = 0
        self._deferred: tuple[str, int | None] | None = None

    @property
    def request_id(self) -> str | int:
        return self._request.id

    @property
    def protocol_version(self) -> str:
        return self._request.codec.version

    @property
    def client_info(self) -> Any:
        """The client's self-reported name and version (not to be trusted for decisions)."""
        return self._request.client_info

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self._request.capabilities

    @property
    def request(self) -> Request:
        """The request being answered."""
        return self._request

    @property
    def lifespan(self) -> Any:
        """What the server's lifespan yielded: the database pool, client or model it opened
        once for the process (``None`` when the server has no lifespan). A tool of a mounted
        server sees its own server's."""
        return (self._owner or self._session.server).lifespan_state

    @property
    def identity(self) -> Identity | None:
        """The caller, when the server authorizes requests (HTTP with ``auth=``): subject,
        client id, scopes, claims. ``None`` when nothing authenticated them (stdio)."""
        return self._session.caller(self._request)

    async def upstream_token(self) -> str:
        """The caller's current access token at the identity provider they signed in with
        (refreshed first when near expiry), to call the provider's API on their behalf. Only
        when the operator allows it (``allow_upstream_token=True``); ``RuntimeError`` otherwise,
        or for a caller nobody signed in;
        :class:`~toolwire.auth.server.vault.NoUpstreamToken` when none is kept for them (they
        must sign in again); :class:`~toolwire.auth.server.upstream.UpstreamError` when the
        provider refuses the refresh. Never log or return the token."""
        vault = self._session.server.upstream_tokens
        if vault is None:
            raise RuntimeError(
                "this server does not hand out the identity provider's tokens: "
                "the operator allows it with allow_upstream_token=True"
            )
        caller = self.identity
        if caller is None or caller.subject is None:
            raise RuntimeError("the identity provider's token is only for a person who signed in")
        return await vault.access_token(caller.subject)

    @property
    def session_visibility(self) -> RuleSet:
        """The visibility rules of this session alone (``.disable("tool")``, ``.enable(tags=...)``:
        see :mod:`toolwire.server.visibility`); the client is told its lists changed.
        ``RuntimeError`` for a 2026-07-28 request over HTTP, whose session ends with it (use
        :attr:`caller_visibility`)."""
        session = self._session
        if not session.lasting:
            raise RuntimeError(
                "this request's session ends with it (2026-07-28 over HTTP): use ctx.caller_visibility instead"
            )
        return session.server.visibility.session(session)

    @property
    def caller_visibility(self) -> RuleSet:
        """The visibility rules of the authenticated caller (all their sessions and
        subscriptions are told of changes). ``RuntimeError`` when nothing authenticated the
        caller (use :attr:`session_visibility`)."""
        caller = self._session.caller_name(self._request)
        if caller is None:
            raise RuntimeError("no authenticated caller (HTTP with auth=): use ctx.session_visibility instead")
        return self._session.server.visibility.caller(caller)

    @property
    def is_cancelled(self) -> bool:
        """Whether the client cancelled this call or its task (sync tools should poll it in
        long loops)."""
        task = self._request.task
        return self._request.cancelled or (task is not None and task.record.status == "cancelled")

    @property
    def task_id(self) -> str | None:
        """The id of the task this call runs as, or ``None`` when it runs in its request."""
        task = self._request.task
        return task.id if task is not None else None

    def defer_task(self, tool: str, ttl_ms: int | None) -> None:
        """Set by the session: this call is to become a task when :meth:`start_task` is awaited."""
        self._deferred = (tool, ttl_ms)

    async def start_task(self) -> None:
        """For a tool declared with ``defer_task=True``: answer the client with a task handle
        now and go on in the background (what came before, such as questions to the user,
        happened in the request). Does nothing when the call does not become a task (the
        client cannot take one) or already is one."""
        deferred = self._deferred
        if deferred is None or self._request.task is not None:
            return
        self._deferred = None
        await self._session.detach(self._request, *deferred)

    def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> _Done:
        """Send ``notifications/progress`` if the client asked for progress on this call.

        ``ValueError`` if ``progress`` does not increase (the specification requires it to).
        """
        if self._progress is not None and progress <= self._progress:
            raise ValueError(f"progress must increase with each report: got {progress} after {self._progress}")
        self._progress = progress
        request = self._request
        token = request.progress_token
        if request.task is not None:
            self._session.server.tasks.progressed(request.task, token, progress, total, message)
        elif token is not None:
            params = request.codec.progress(token, progress, total, message)
            self._session.send_for(request, "notifications/progress", params)
        return _DONE

    def log(self, level: str, data: Any, logger: str | None = None) -> _Done:
        """Send a log message to the client, if its level for this call lets it through."""
        if level not in LOG_SEVERITY:
            raise ValueError(f"unknown log level {level!r}: use one of {', '.join(LOG_SEVERITY)}")
        request = self._request
        if self._session.connection.wants_log(request, level) and not (request.task and request.codec.modern):
            params: dict[str, Any] = {"level": level, "data": data}
            if logger is not None:
                params["logger"] = logger
            if request.task is not None:
                self._session.server.tasks.notify(request.task, "notifications/message", params)
            else:
                self._session.send_for(request, "notifications/message", params)
        return _DONE

    def close_stream(self) -> _Done:
        """Over Streamable HTTP (2025-11-25 sessions), end this call's response connection
        without ending its stream: the client reconnects after the announced delay and gets
        the rest (progress, the result) by resuming. For long calls behind proxies that cut
        idle connections. Elsewhere it does nothing."""
        closer = self._session.stream_closer
        if closer is not None:
            closer(self._request.id)
        return _DONE

    def debug(self, data: Any) -> _Done:
        return self.log("debug", data)

    def info(self, data: Any) -> _Done:
        return self.log("info", data)

    def warning(self, data: Any) -> _Done:
        return self.log("warning", data)

    def error(self, data: Any) -> _Done:
        return self.log("error", data)

    async def elicit(self, message: str, schema: dict[str, Any] | type, *, key: str | None = None) -> Elicitation:
        """Ask the user to fill in a form: ``schema`` is a flat JSON object schema, or a
        dataclass / TypedDict / pydantic model (then ``data`` is an instance of it). ``key``
        names the question in a 2026-07-28 ``InputRequiredResult`` (default: numbered).

        :class:`CapabilityMissing` if the client cannot elicit; :class:`ClientRequestFailed`
        if it answers with an error or with content that breaks the schema (legacy).
        """
        requested, convert = _form_schema(schema)
        codec = self._request.codec
        if not codec.elicitation or "elicitation" not in self._request.capabilities:
            raise CapabilityMissing(
                "elicitation", "This needs to ask the user, but the client does not support elicitation"
            )
        params = codec.elicitation_request(message, requested)
        validator = Validator(requested)
        answer = await self._ask(
            "elicit", "elicitation/create", params, lambda a: _check_elicitation(a, validator), key
        )
        action = str(answer.get("action"))
        content = answer.get("content") if action == "accept" else None
        data = convert(content) if content is not None and convert is not None else content
        return Elicitation(action, content, data)

    async def sample(
        self,
        messages: str | list[dict[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: list[str] | None = None,
        model_preferences: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        key: str | None = None,
    ) -> dict[str, Any]:
        """Ask the client's model for a completion; returns the ``CreateMessageResult``
        (``role``, ``content``, ``model``, ``stopReason``). A string is one user message.

        :class:`CapabilityMissing` if the client cannot sample; :class:`ClientRequestFailed`
        if it refuses.
        """
        if "sampling" not in self._request.capabilities:
            raise CapabilityMissing(
                "sampling", "This needs the client's model, but the client does not support sampling"
            )
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        params: dict[str, Any] = {"messages": messages, "maxTokens": max_tokens}
        optional = {
            "systemPrompt": system_prompt,
            "temperature": temperature,
            "stopSequences": stop_sequences,
            "modelPreferences": model_preferences,
            "metadata": metadata,
        }
        params.update({key: value for key, value in optional.items() if value is not None})
        return await self._ask("sample", "sampling/createMessage", params, _check_sampling, key)

    async def list_roots(self, *, key: str | None = None) -> list[dict[str, Any]]:
        """The client's roots (``uri`` and optional ``name`` each): the directories or
        places it lets the server work in.

        :class:`CapabilityMissing` if the client declares no roots; :class:`ClientRequestFailed`
        if it refuses.
        """
        if "roots" not in self._request.capabilities:
            raise CapabilityMissing("roots", "This needs the client's roots, but the client does not offer roots")
        answer = await self._ask("roots", "roots/list", {}, _check_roots, key)
        return list(answer["roots"])

    async def ask_all(self, *questions: Awaitable[Any]) -> list[Any]:
        """Ask several questions at once (``ctx.elicit(...)``, ``ctx.sample(...)``,
        ``ctx.list_roots()``), returning their answers in order: concurrently on a legacy
        connection, in one ``InputRequiredResult`` round on 2026-07-28. Whatever one of them
        raises (``CapabilityMissing``...) is raised, and the others are dropped."""
        if not self._request.codec.modern or self._request.task is not None:
            import asyncio

            return list(await asyncio.gather(*questions))
        answers: list[Any] = []
        missing: dict[str, Any] = {}
        pending = list(questions)
        try:
            while pending:
                try:
                    answers.append(await pending.pop(0))
                except InputRequired as exc:
                    missing.update(exc.requests)
                    answers.append(None)
        finally:
            for question in pending:
                close = getattr(question, "close", None)
                if close is not None:
                    close()
        if missing:
            raise InputRequired(missing)
        return answers

    async def _ask(
        self, kind: str, method: str, params: dict[str, Any], check: Any, key: str | None = None
    ) -> dict[str, Any]:
        task = self._request.task
        if task is not None:
            answer = await self._session.server.tasks.ask(task, kind, method, params, check)
            problem = check(answer)
            if problem:
                raise ClientRequestFailed(f"the client's answer to {method} is not valid: {problem}")
            return answer  # type: ignore[no-any-return]
        if not self._request.codec.modern:
            answer = await self._session.request_client(method, params, self._request.id)
            problem = check(answer)
            if problem:
                raise ClientRequestFailed(f"the client's answer to {method} is not valid: {problem}")
            return answer  # type: ignore[no-any-return]
        key = key or f"{kind}-{self._asked}"
        self._asked += 1
        answer = self.answers.get(key)
        if answer is None or check(answer):
            self.answers.pop(key, None)  # missing or invalid: ask again
            raise InputRequired({key: {"method": method, "params": params}})
        return answer  # type: ignore[no-any-return]


def _check_elicitation(answer: Any, validator: Validator) -> str | None:
    if type(answer) is not dict or answer.get("action") not in ("accept", "decline", "cancel"):
        return 'expected {"action": "accept" | "decline" | "cancel", ...}'
    if answer["action"] == "accept":
        try:
            validator.check(answer.get("content", {}), "content")
        except ArgumentsInvalid as exc:
            return str(exc)
    return None


def _check_roots(answer: Any) -> str | None:
    roots = answer.get("roots") if type(answer) is dict else None
    if type(roots) is not list or not all(type(root) is dict and type(root.get("uri")) is str for root in roots):
        return 'expected {"roots": [{"uri": ...}, ...]}'
    return None


def _check_sampling(answer: Any) -> str | None:
    if type(answer) is not dict or "content" not in answer or "role" not in answer:
        return "expected a CreateMessageResult with role and content"
    return None


def _form_schema(schema: dict[str, Any] | type) -> tuple[dict[str, Any], Any]:
    if isinstance(schema, dict):
        return schema, None
    import sys

    from ..tools.schema import SchemaBuilder

    pydantic = sys.modules.get("pydantic")
    if pydantic is not None and issubclass(schema, pydantic.BaseModel):
        model: Any = schema
        return model.model_json_schema(), model.model_validate
    builder = SchemaBuilder()
    spec = builder.compile(schema)
    flat = builder.defs[next(iter(builder.defs))] if builder.defs else spec.schema
    return flat, spec.convert


__all__ = [
    "CapabilityMissing",
    "ClientRequestFailed",
    "Context",
    "Elicitation",
    "InputRequired",
]
