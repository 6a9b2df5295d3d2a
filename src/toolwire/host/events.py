"""What a conversation turn reports as it goes, for terminals, web pages and tests alike.

:meth:`Conversation.send <toolwire.host.Conversation.send>` yields these events in order.
Four of them are questions for the person — :class:`ApprovalNeeded`,
:class:`SamplingNeeded`, :class:`ElicitationNeeded` — and the turn waits for the answer:
call one of the event's methods before asking for the next event. A question left
unanswered is taken as a refusal (a decline for elicitation), so nothing runs by accident.

Every event has ``kind`` (its name in JSON) and :meth:`Event.to_dict` (JSON-ready, for
event logs such as ``toolwire ask --json``).
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict, dataclass, field, fields, is_dataclass
from typing import Any, ClassVar

from .approval import Change


@dataclass(slots=True)
class Event:
    kind: ClassVar[str] = "event"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        for item in fields(self):
            if not item.name.startswith("_"):
                out[item.name] = _plain(getattr(self, item.name))
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, Event):
        return value.to_dict()
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


@dataclass(slots=True)
class ExposedTool:
    """A tool as the model sees it (``name``) and where it comes from; ``warning``: why its
    name may fool a person (:func:`.lookalikes.marks`), empty when it is plain."""

    name: str
    server: str
    tool: str
    description: str
    read_only: bool
    trusted: bool
    warning: str = ""


@dataclass(slots=True)
class ToolsChanged(Event):
    """The tools the model is shown changed (and at the start of the first turn): all of
    them, and why (``"start"``, a server's ``list_changed``, a server that stopped);
    ``deferred``: how many more the model can find and load with the host's ``find_tools``
    (0 unless the host defers definitions: :mod:`.deferral`)."""

    kind: ClassVar[str] = "tools_changed"
    tools: list[ExposedTool]
    reason: str
    deferred: int = 0


@dataclass(slots=True)
class ToolsLoaded(Event):
    """The model's search (the call ``call_id`` of ``find_tools``) for ``query`` loaded
    ``tools``: their definitions are in its next requests, for the rest of the conversation."""

    kind: ClassVar[str] = "tools_loaded"
    call_id: str
    query: str
    tools: list[ExposedTool]


@dataclass(slots=True)
class TextDelta(Event):
    """A piece of the model's answer, as it arrives."""

    kind: ClassVar[str] = "text"
    text: str


@dataclass(slots=True)
class ToolCallProposed(Event):
    """The model asked for a tool call: of ``tool`` (the model's name for it), the tool
    ``name`` of ``server`` (``None`` for the host's own tools, or a name it does not know);
    ``warning``: why that name may fool a person, as the listing marks it (empty when it is
    plain)."""

    kind: ClassVar[str] = "tool_call"
    call_id: str
    tool: str
    server: str | None
    name: str | None
    arguments: dict[str, Any] | None
    warning: str = ""


class _Question(Event):
    """An event the turn waits on until it is answered (see the module's description)."""

    __slots__ = ()

    def _settle(self, answer: Any) -> None:
        future: asyncio.Future[Any] = self._answer  # type: ignore[attr-defined]
        if not future.done():
            future.set_result(answer)

    @property
    def answered(self) -> bool:
        return bool(self._answer.done())  # type: ignore[attr-defined]


@dataclass(slots=True)
class ApprovalNeeded(_Question):
    """A call waits for the person: allow it once, allow the tool for the rest of the
    conversation (when ``always_offered``), or refuse it with a reason the model reads.
    ``changes``: how the tool's definition differs from what the person approved before;
    ``warning``: why the tool's name may fool the person (empty when it is plain);
    ``annotations``: the tool's, as its server says (believed only when ``trusted``).

    A program that answers for nobody present passes ``by`` (``"flag"``: a command-line
    flag allowed it, ``"host"``: nobody could be asked) so that the log does not say the
    user decided; only the user's answers are remembered."""

    kind: ClassVar[str] = "approval_needed"
    call_id: str
    tool: str
    server: str
    name: str
    arguments: dict[str, Any]
    reason: str
    always_offered: bool = True
    changes: list[Change] = field(default_factory=list)
    warning: str = ""
    annotations: dict[str, Any] = field(default_factory=dict)
    trusted: bool = False
    _answer: asyncio.Future[tuple[str, str, str]] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    def allow(self, always: bool = False, by: str = "user", reason: str = "") -> None:
        """Run the call (``always``: and later calls of the tool, when offered, for the user)."""
        self._settle(("always" if always and self.always_offered and by == "user" else "once", reason, by))

    def refuse(self, reason: str = "", by: str = "user") -> None:
        self._settle(("refuse", reason, by))


@dataclass(slots=True)
class ToolCallDecided(Event):
    """What became of a proposed call: ``decision`` is ``"allow"`` or ``"refuse"``, ``by``
    ``"policy"``, ``"user"``, ``"flag"`` (``toolwire ask --yes``) or ``"host"`` (a call that
    could not run: unknown tool, bad arguments, nobody to ask), ``reason`` says why."""

    kind: ClassVar[str] = "tool_decided"
    call_id: str
    decision: str
    by: str
    reason: str


@dataclass(slots=True)
class ToolProgress(Event):
    """A running call's progress, as its server reports it."""

    kind: ClassVar[str] = "progress"
    call_id: str
    progress: float
    total: float | None
    message: str | None


@dataclass(slots=True)
class ToolResult(Event):
    """A call's outcome as the model will read it: ``summary`` (one line), ``is_error``,
    and how long it took."""

    kind: ClassVar[str] = "tool_result"
    call_id: str
    tool: str
    is_error: bool
    summary: str
    seconds: float


@dataclass(slots=True)
class SamplingNeeded(_Question):
    """A server asks the host's model for a completion: ``request`` is its
    ``sampling/createMessage`` params. Allow it (the model is asked, its answer goes to the
    server) or refuse it."""

    kind: ClassVar[str] = "sampling_needed"
    server: str
    request: dict[str, Any]
    _answer: asyncio.Future[bool] = field(default_factory=lambda: asyncio.get_running_loop().create_future())

    def allow(self) -> None:
        self._settle(True)

    def refuse(self) -> None:
        self._settle(False)


@dataclass(slots=True)
class ElicitationNeeded(_Question):
    """A server asks the person for information: ``message`` and a ``schema`` of flat
    fields. :meth:`accept` with the values (checked against the schema: ``ValueError`` with
    what is wrong), or :meth:`decline`, or :meth:`cancel`."""

    kind: ClassVar[str] = "elicitation_needed"
    server: str
    message: str
    schema: dict[str, Any]
    _answer: asyncio.Future[dict[str, Any]] = field(default_factory=lambda: asyncio.get_running_loop().create_future())

    def accept(self, content: dict[str, Any]) -> None:
        from .elicitation import check_answer

        check_answer(self.schema, content)
        self._settle({"action": "accept", "content": content})

    def decline(self) -> None:
        self._settle({"action": "decline"})

    def cancel(self) -> None:
        self._settle({"action": "cancel"})


@dataclass(slots=True)
class Failed(Event):
    """The model's API failed; the turn ends (the conversation is kept, and can go on)."""

    kind: ClassVar[str] = "error"
    message: str


@dataclass(slots=True)
class Done(Event):
    """The turn ended: ``reason`` is ``"answered"``, ``"step_limit"``, ``"cancelled"`` or
    ``"error"``; ``text`` is the model's last answer; ``usage`` the tokens of this turn."""

    kind: ClassVar[str] = "done"
    reason: str
    text: str
    steps: int
    input_tokens: int
    output_tokens: int
