"""What the host and a model provider exchange, in neutral terms.

A conversation is a list of plain, JSON-ready message dicts (so it saves and loads as JSON and
moves between providers unchanged)::

    {"role": "user", "content": [PART, ...]}
    {"role": "assistant", "content": [PART, ...], "tool_calls": [{"id", "name", "arguments"}]}
    {"role": "tool", "call_id": ..., "name": ..., "content": [PART, ...], "is_error": bool}

where a PART is ``{"type": "text", "text": ...}``, ``{"type": "image", "data": BASE64,
"mime_type": ...}`` or ``{"type": "audio", "data": BASE64, "mime_type": ...}``. Each provider
turns this into its own API's messages (:mod:`.providers`), and its answer into a
:class:`ModelTurn`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

Message = dict[str, Any]
Part = dict[str, Any]


def text_part(text: str) -> Part:
    return {"type": "text", "text": text}


def parts_text(parts: list[Part]) -> str:
    """The text parts of ``parts``, joined by newlines."""
    return "\n".join(part["text"] for part in parts if part.get("type") == "text")


@dataclass(slots=True)
class Usage:
    """Tokens a model request (or a conversation, summed) consumed."""

    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


@dataclass(slots=True)
class ToolSpec:
    """A tool as a model is shown it: a name valid for every provider, a description and the
    JSON Schema of its arguments (already made acceptable to providers)."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(slots=True)
class ToolCallRequest:
    """A call the model asked for. ``arguments`` is ``None`` when what the model sent was not a
    JSON object; ``error`` then says why (the model is told)."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    error: str | None = None

    def to_message(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments if self.arguments is not None else {}}


@dataclass(slots=True)
class ModelTurn:
    """One answer of the model: its text, the tool calls it asks for, and what it cost."""

    text: str = ""
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None


@dataclass(slots=True)
class ModelRequest:
    """What is sent to the model: the system prompt, the conversation, the tools it may call."""

    messages: list[Message]
    system: str | None = None
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int | None = None


class ModelError(Exception):
    """The model's API failed (unreachable, refused the key, rate limited, answered garbage);
    the message says which, in a line a person can act on."""


class Provider(Protocol):
    """A model behind an API. :meth:`complete` streams text to ``on_text`` as it arrives and
    returns the whole turn; it raises :class:`ModelError` for every failure of the API, and
    is cancelled by cancelling the awaiting task (the HTTP request is then closed)."""

    name: str
    model: str
    #: Media a model reads in tool results and messages: a subset of {"image", "audio"}.
    media: frozenset[str]

    async def complete(self, request: ModelRequest, on_text: Callable[[str], Any] | None = None) -> ModelTurn: ...

    async def close(self) -> None:
        """Release the API's connections (the provider stays usable)."""
