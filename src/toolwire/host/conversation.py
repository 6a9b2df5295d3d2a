"""A conversation: the loop of model, approval, tool calls and results, one turn at a time.

:meth:`Conversation.send` adds the person's message and runs a turn: the model is asked
(its text streamed as :class:`~.events.TextDelta`), every tool call it asks for is decided
(:mod:`.approval`; questions for the person are events), the allowed ones run at once,
concurrently, and their results go back to the model, until it answers without tool calls
or ``max_steps`` model requests were made. Nothing in a turn raises: a refused, unknown,
malformed, failed, timed-out or crashed call becomes a tool result the model reads; a
failure of the model's API ends the turn with :class:`~.events.Failed`. Cancelling (the
task iterating, or :meth:`Conversation.cancel`) stops the model request and the calls in
flight (their servers are told), and each unanswered call is recorded as cancelled, so the
conversation can go on.

When the host defers tool definitions (:mod:`.deferral`), each model request carries the
tools :attr:`Conversation.shown_tools` names, and a call of the host's ``find_tools`` loads
more into :attr:`Conversation.loaded` for the rest of the conversation. A call of the host's
``load_skill`` loads a server's skill (:mod:`.skills`). In code mode, a call of the host's
``run_code`` runs the model's program in the sandbox, and every tool call the program makes
takes the path a direct call takes (:mod:`.code_mode`).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..client import CallToolResult, ClientError, ConnectionClosed, OutputSchemaMismatch, RequestTimeout
from ..discovery import MAX_QUERY_CHARS
from ..logs import get_logger
from .approval import Approvals
from .code_mode import outcome_text, tool_value
from .deferral import Pair, found_text
from .events import (
    ApprovalNeeded,
    Done,
    ElicitationNeeded,
    Event,
    ExposedTool,
    Failed,
    SamplingNeeded,
    TextDelta,
    ToolCallDecided,
    ToolCallProposed,
    ToolProgress,
    ToolResult,
    ToolsChanged,
    ToolsLoaded,
    _Question,
)
from .host import READ_RESOURCE_TOOL
from .model import (
    Message,
    ModelError,
    ModelRequest,
    ModelTurn,
    Part,
    ToolCallRequest,
    ToolSpec,
    Usage,
    parts_text,
    text_part,
)
from .resources import LIST_RESOURCES_TOOL
from .results import cut, model_parts, summary
from .sandbox import SandboxUnavailable, run_program

if TYPE_CHECKING:
    from ..client import ToolInfo
    from .host import Host

log = get_logger("toolwire.host")

#: Model requests a turn may make before it stops (each tool round is one).
MAX_STEPS = 20
FORMAT = "toolwire-conversation/1"


class Conversation:
    """Messages with a model that calls the host's tools (see the module's description).

    ``system``: the system prompt; ``max_steps``: model requests per turn; ``max_tokens``:
    per model answer. :attr:`messages` (neutral, :mod:`.model`), :attr:`usage` (tokens of
    every turn) and :attr:`approvals` are kept, and saved by :meth:`save`; :attr:`loaded`:
    the ``(server, tool name)`` pairs the model loaded with ``find_tools``, in order.
    """

    def __init__(
        self,
        host: Host,
        *,
        system: str | None = None,
        max_steps: int = MAX_STEPS,
        max_tokens: int | None = None,
        messages: list[Message] | None = None,
        approvals: Approvals | None = None,
        usage: Usage | None = None,
    ) -> None:
        self.host = host
        self.system = system
        self.max_steps = max_steps
        self.max_tokens = max_tokens
        self.messages: list[Message] = messages if messages is not None else []
        self.approvals = approvals or Approvals()
        self.usage = usage or Usage()
        self.loaded: list[Pair] = []
        self._shown_tools = False
        self._turn: asyncio.Task[None] | None = None

    @property
    def text(self) -> str:
        """The model's last answer (empty before it gave one)."""
        for message in reversed(self.messages):
            if message["role"] == "assistant":
                return parts_text(message.get("content", []))
        return ""

    @property
    def shown_tools(self) -> list[ExposedTool]:
        """The servers' tools the model's next request shows: every tool, or when the host
        defers them, the pinned and recently used ones and those loaded (loaded tools
        whose server no longer lists them are dropped)."""
        host = self.host
        if not host.deferring:
            return list(host.tools)
        pairs = self._shown_pairs()
        return [tool for tool in (host.exposed(*pair) for pair in pairs) if tool is not None]

    def tool_specs(self) -> list[ToolSpec]:
        """The definitions the model's next request carries (see :attr:`shown_tools`)."""
        host = self.host
        return host.specs_for(self._shown_pairs()) if host.deferring else host.specs

    def _shown_pairs(self) -> list[Pair]:
        assert self.host.deferral is not None
        offered = self.host.offered
        known = set(offered)
        self.loaded = [pair for pair in self.loaded if pair in known]
        shown = self.host.deferral.shown_first(offered, self._recent())
        return shown + [pair for pair in self.loaded if pair not in shown]

    def _recent(self) -> list[Pair]:
        """The tools the messages called, most recent first, each once."""
        recent: list[Pair] = []
        for message in reversed(self.messages):
            for call in reversed(message.get("tool_calls") or []):
                resolved = self.host.resolve(str(call.get("name", "")))
                if resolved is not None and (pair := (resolved[0], resolved[1].name)) not in recent:
                    recent.append(pair)
        return recent

    async def send(self, content: str | list[Part]) -> AsyncIterator[Event]:
        """Add the person's message and run a turn; yields its events, the last one
        :class:`~.events.Done`. ``RuntimeError`` if the host has no provider or a turn of
        this conversation is already running."""
        if self.host.provider is None:
            raise RuntimeError("the host has no model provider")
        if self._turn is not None:
            raise RuntimeError("a turn of this conversation is already running")
        parts = [text_part(content)] if isinstance(content, str) else content
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        turn = Turn(self, queue)
        self.host.attach(turn)
        self._turn = task = asyncio.get_running_loop().create_task(turn.run(parts))
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
                if isinstance(event, _Question) and not event.answered:
                    _default_answer(event)
        finally:
            if not task.done():
                task.cancel()
            await asyncio.wait([task])
            self._turn = None
            self.host.detach(turn)

    def cancel(self) -> None:
        """Stop the turn in progress (its last event is ``Done(reason="cancelled")``)."""
        if self._turn is not None:
            self._turn.cancel()

    # -- saving ----------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "system": self.system,
            "messages": self.messages,
            "usage": {"input_tokens": self.usage.input_tokens, "output_tokens": self.usage.output_tokens},
            "approvals": self.approvals.to_dict(),
        }

    def save(self, path: str | Path) -> None:
        """Write the conversation as JSON (``OSError`` if the file cannot be written)."""
        Path(path).write_bytes(orjson.dumps(self.to_dict(), option=orjson.OPT_INDENT_2))

    @classmethod
    def load(cls, host: Host, path: str | Path, **options: Any) -> Conversation:
        """A conversation saved by :meth:`save`, to go on with ``host``. ``ValueError`` for a
        file that is not one; ``OSError`` if it cannot be read."""
        try:
            data = orjson.loads(Path(path).read_bytes())
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"{path} is not JSON: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("messages"), list):
            raise ValueError(f"{path} is not a saved toolwire conversation")
        usage = data.get("usage") or {}
        return cls(
            host,
            system=data.get("system"),
            messages=data["messages"],
            approvals=Approvals.from_dict(data.get("approvals") or {}),
            usage=Usage(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))),
            **options,
        )


def _default_answer(event: _Question) -> None:
    """What an unanswered question means: no."""
    if isinstance(event, ApprovalNeeded):
        event.refuse("nobody answered the question", by="host")
    elif isinstance(event, SamplingNeeded):
        event.refuse()
    elif isinstance(event, ElicitationNeeded):
        event.decline()


class Turn:
    """One run of the loop, from the person's message to the model's answer."""

    def __init__(self, conversation: Conversation, queue: asyncio.Queue[Event | None]) -> None:
        self.conversation = conversation
        self.host = conversation.host
        self.emit = queue.put_nowait
        self.usage = Usage()
        self.steps = 0
        self.results: dict[str, Message] = {}

    async def ask(self, question: _Question) -> Any:
        """Show the person ``question`` and wait for the answer."""
        self.emit(question)
        return await question._answer  # type: ignore[attr-defined]

    async def sample(self, request: ModelRequest) -> ModelTurn:
        """A model answer for a server (no tools offered); counted in this turn's usage."""
        assert self.host.provider is not None
        answer = await self.host.provider.complete(request)
        self.usage.add(answer.usage)
        return answer

    async def run(self, parts: list[Part]) -> None:
        conversation = self.conversation
        conversation.messages.append({"role": "user", "content": parts})
        reason = "step_limit"
        try:
            while self.steps < conversation.max_steps:
                await self._announce_tools()
                self.steps += 1
                answer = await self._ask_model()
                if answer is None:
                    reason = "error"
                    break
                if not answer.tool_calls:
                    reason = "answered"
                    break
                await self._run_calls(answer.tool_calls)
        except asyncio.CancelledError:
            self._close_calls("the user cancelled the call")
            reason = "cancelled"
        except Exception as exc:  # a bug of ours must not end the conversation
            log.exception("the turn failed")
            self._close_calls("the host failed")
            self.emit(Failed(f"internal error: {type(exc).__name__}: {exc}"))
            reason = "error"
        conversation.usage.add(self.usage)
        self.emit(
            Done(
                reason,
                conversation.text if reason == "answered" else "",
                self.steps,
                self.usage.input_tokens,
                self.usage.output_tokens,
            )
        )

    async def _announce_tools(self) -> None:
        changes = await self.host.refresh()
        if changes or not self.conversation._shown_tools:
            self.conversation._shown_tools = True
            shown = self.conversation.shown_tools
            self.emit(ToolsChanged(shown, "; ".join(changes) or "start", len(self.host.tools) - len(shown)))

    async def _ask_model(self) -> ModelTurn | None:
        conversation = self.conversation
        provider = self.host.provider
        assert provider is not None
        request = ModelRequest(
            conversation.messages, conversation.system, conversation.tool_specs(), conversation.max_tokens
        )
        streamed = []

        def on_text(text: str) -> None:
            streamed.append(text)
            self.emit(TextDelta(text))

        try:
            answer = await provider.complete(request, on_text)
        except ModelError as exc:
            self.emit(Failed(str(exc)))
            return None
        if answer.text and not streamed:  # a provider that does not stream gives it all at once
            self.emit(TextDelta(answer.text))
        self.usage.add(answer.usage)
        message: Message = {"role": "assistant", "content": [text_part(answer.text)] if answer.text else []}
        if answer.tool_calls:
            message["tool_calls"] = [call.to_message() for call in answer.tool_calls]
        conversation.messages.append(message)
        return answer

    async def _run_calls(self, calls: list[ToolCallRequest]) -> None:
        """Decide every call (asking in order), run the allowed ones concurrently, then add
        every result in the order the model asked."""
        self.results = {}
        allowed = []
        for call in calls:
            if self.host.deferring and call.name == self.host.find_tools_name:
                await self._find(call)
                continue
            if self.host.skills and call.name == self.host.load_skill_name:
                await self._load_skill(call)
                continue
            if self.host.code_limits is not None and call.name == self.host.run_code_name:
                await self._run_code(call)
                continue
            plan = await self._decide(call)
            if plan is not None:
                allowed.append(plan)
        await asyncio.gather(
            *(self._execute(call, server, name, arguments) for call, server, name, arguments in allowed)
        )
        self.conversation.messages.extend(self.results[call.id] for call in calls)

    async def _decide(self, call: ToolCallRequest) -> tuple[ToolCallRequest, str, ToolInfo, dict[str, Any]] | None:
        """``(call, server, tool, arguments)`` if the call may run (the tool is
        ``READ_RESOURCE_TOOL`` or ``LIST_RESOURCES_TOOL`` for the host's resource tools);
        otherwise its refusal is recorded and ``None`` returned."""
        host = self.host
        resolved = host.resolve(call.name)
        reader = call.name == host.read_resource_name and resolved is None
        lister = call.name == host.list_resources_name and resolved is None and host.lists_resources
        server = resolved[0] if resolved else None
        name = resolved[1].name if resolved else None
        warning = host.mark(resolved[0], resolved[1].name) if resolved else ""
        self.emit(ToolCallProposed(call.id, call.name, server, name, call.arguments, warning))
        if call.arguments is None:
            self._refuse(call, "host", f"The call was not made: {call.error}")
            return None
        if reader or lister:
            uri = None if lister else str(call.arguments.get("uri", ""))
            try:
                server = host.resource_server(uri, call.arguments.get("server"))
            except ValueError as exc:
                self._refuse(call, "host", f"The call was not made: {exc}")
                return None
            tool = LIST_RESOURCES_TOOL if lister else READ_RESOURCE_TOOL
        elif resolved is None and host.deferring:
            told = f"There is no tool named {call.name!r}. {host.find_tools_name} finds the tools of the servers."
            self._refuse(call, "host", told)
            return None
        elif resolved is None:
            names = ", ".join(spec.name for spec in host.specs) or "none"
            self._refuse(call, "host", f"There is no tool named {call.name!r}. The tools are: {names}.")
            return None
        else:
            server, tool = resolved
        assert server is not None
        approvals = self.conversation.approvals
        verdict = host.policy.decide(server, tool, host.offered)
        changes = approvals.changes(server, tool)
        if verdict.action == "deny":
            self._refuse(call, "policy", f"The call was refused: {verdict.reason}.", verdict.reason)
            return None
        if not changes and verdict.action == "allow":
            self.emit(ToolCallDecided(call.id, "allow", "policy", verdict.reason))
        elif not changes and verdict.rememberable and approvals.remembered(server, tool.name):
            self.emit(ToolCallDecided(call.id, "allow", "user", "always allowed in this conversation"))
        else:
            reason = "its definition changed since it was approved" if changes else verdict.reason
            question = ApprovalNeeded(
                call.id,
                call.name,
                server,
                tool.name,
                call.arguments,
                reason,
                verdict.rememberable,
                changes,
                host.mark(server, tool.name),
                dict(tool.annotations),
                server in host.policy.trusted,
            )
            answer, why, by = await self.ask(question)
            if answer == "refuse":
                told = ("The user refused this call" if by == "user" else "The call was refused") + (
                    f": {why}" if why else "."
                )
                self._refuse(call, by, told, why or "refused")
                return None
            if by == "user":
                approvals.record(server, tool, always=answer == "always")
            said = why or ("always allowed" if answer == "always" else "allowed once")
            self.emit(ToolCallDecided(call.id, "allow", by, said))
        return call, server, tool, call.arguments

    async def _find(self, call: ToolCallRequest) -> None:
        """A call of the host's ``find_tools``: rank the servers' tools for its query, load
        the best into the conversation and tell the model which (never asks: it only reads
        the host's own list)."""
        host = self.host
        assert host.deferral is not None
        self.emit(ToolCallProposed(call.id, call.name, None, None, call.arguments))
        query = (call.arguments or {}).get("query")
        if call.arguments is None or not isinstance(query, str) or not query.strip():
            problem = call.error or "it needs a query: what you need to do, in a few words"
            self._refuse(call, "host", f"The call was not made: {problem}")
            return
        if len(query) > MAX_QUERY_CHARS:
            problem = f"the query has {len(query)} characters, over {MAX_QUERY_CHARS}: say what you need in a few words"
            self._refuse(call, "host", f"The call was not made: {problem}")
            return
        self.emit(ToolCallDecided(call.id, "allow", "host", "the host's own search of the tools"))
        started = time.monotonic()
        matches = await host.search_tools(query, host.deferral.found)
        found = [tool for tool in (host.exposed(match.server, match.name) for match in matches) if tool is not None]
        loaded = self.conversation.loaded
        loaded += [(tool.server, tool.tool) for tool in found if (tool.server, tool.tool) not in loaded]
        if found:
            self.emit(ToolsLoaded(call.id, query, found))
        text = found_text(query, [(tool.name, tool.server, tool.description) for tool in found])
        self._record(call, [text_part(text)], False, time.monotonic() - started)

    async def _load_skill(self, call: ToolCallRequest) -> None:
        """A call of the host's ``load_skill``: the skill's verified ``SKILL.md`` is the
        result (never asks: it reads what the server published for the model)."""
        self.emit(ToolCallProposed(call.id, call.name, None, None, call.arguments))
        name = (call.arguments or {}).get("name")
        if call.arguments is None or not isinstance(name, str):
            self._refuse(call, "host", f"The call was not made: {call.error or 'it needs the name of a skill'}")
            return
        self.emit(ToolCallDecided(call.id, "allow", "host", "the host's own loading of a skill"))
        started = time.monotonic()
        try:
            text, is_error = await self.host.load_skill(name), False
        except ValueError as exc:
            text, is_error = f"The skill was not loaded: {exc}.", True
        except ClientError as exc:
            text, is_error = f"The skill was not loaded: {exc}", True
        self._record(call, [text_part(text)], is_error, time.monotonic() - started)

    async def _run_code(self, call: ToolCallRequest) -> None:
        """A call of the host's ``run_code``: the program runs in the sandbox, each of its
        tool calls decided and run as the model's own are (``CALL.1``, ``CALL.2``...); the
        result is what it printed and returned, or why it failed."""
        host = self.host
        assert host.code_limits is not None
        self.emit(ToolCallProposed(call.id, call.name, None, None, call.arguments))
        program = (call.arguments or {}).get("program")
        if call.arguments is None or not isinstance(program, str) or not program.strip():
            self._refuse(call, "host", f"The call was not made: {call.error or 'it needs a program'}")
            return
        said = "the host's sandbox runs the program; each of its tool calls is decided on its own"
        self.emit(ToolCallDecided(call.id, "allow", "host", said))
        started = time.monotonic()
        numbers = itertools.count(1)
        deciding = asyncio.Lock()  # questions are asked one at a time, as for the model's calls
        functions = dict(host.functions)  # as the program was told them, whatever changes meanwhile

        async def call_tool(function: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
            inner = ToolCallRequest(f"{call.id}.{next(numbers)}", functions[function], arguments)
            async with deciding:
                plan = await self._decide(inner)
            result = await self._execute(*plan) if plan is not None else None
            record = self.results.pop(inner.id)
            text = parts_text(record["content"])
            return (False, text) if record["is_error"] or result is None else (True, tool_value(result, text))

        try:
            outcome = await run_program(program, list(functions), call_tool, host.code_limits)
            text, is_error = outcome_text(outcome), outcome.error is not None
        except SandboxUnavailable as exc:
            text, is_error = f"The program was not run: {exc}", True
        self._record(call, cut([text_part(text)], host.max_result_chars), is_error, time.monotonic() - started)

    def _refuse(self, call: ToolCallRequest, by: str, told: str, reason: str | None = None) -> None:
        self.emit(ToolCallDecided(call.id, "refuse", by, reason or told))
        self._record(call, [text_part(told)], True, 0.0)

    async def _execute(
        self, call: ToolCallRequest, server: str, tool: ToolInfo, arguments: dict[str, Any]
    ) -> CallToolResult | None:
        """Run one allowed call; whatever happens becomes its result (never raises, but
        for cancellation). Returns the tool's answer, if it gave one."""
        started = time.monotonic()
        result = None

        def progress(done: float, total: float | None, message: str | None) -> None:
            self.emit(ToolProgress(call.id, done, total, message))

        host = self.host
        is_error = True
        try:
            if tool is READ_RESOURCE_TOOL:
                parts = await host.read_resource(server, str(arguments.get("uri", "")))
                is_error = False
            elif tool is LIST_RESOURCES_TOOL:
                parts, is_error = [text_part(await host.list_resources(server))], False
            else:
                result = await host.call(server, tool.name, arguments, progress)
                readable = any(entry.reads_resources for entry in host.servers.values())
                parts = model_parts(result, host.max_result_chars, readable)
                is_error = result.is_error
        except RequestTimeout:
            parts = [
                text_part(
                    f"The call timed out: no answer within {host.call_timeout:g} s (the server was told to stop)."
                )
            ]
        except ConnectionClosed as exc:
            parts = [text_part(f"The server {server!r} stopped during the call: {exc}")]
        except OutputSchemaMismatch as exc:
            parts = [text_part(f"The server's answer was not usable: {exc}")]
        except ClientError as exc:
            parts = [text_part(f"The call failed: {exc}")]
        self._record(call, parts, is_error, time.monotonic() - started)
        return result

    def _record(self, call: ToolCallRequest, parts: list[Part], is_error: bool, seconds: float) -> None:
        self.results[call.id] = {
            "role": "tool",
            "call_id": call.id,
            "name": call.name,
            "content": parts,
            "is_error": is_error,
        }
        self.emit(ToolResult(call.id, call.name, is_error, summary(parts), round(seconds, 3)))

    def _close_calls(self, why: str) -> None:
        """Give every call of the last model answer a result, so the conversation stays valid."""
        messages = self.conversation.messages
        last = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
        if last is None or not last.get("tool_calls"):
            return
        answered = {m["call_id"] for m in messages if m["role"] == "tool"}
        for entry in last["tool_calls"]:
            if entry["id"] not in answered:
                result = self.results.get(entry["id"])
                messages.append(
                    result
                    or {
                        "role": "tool",
                        "call_id": entry["id"],
                        "name": entry["name"],
                        "content": [text_part(f"The call did not finish: {why}.")],
                        "is_error": True,
                    }
                )
