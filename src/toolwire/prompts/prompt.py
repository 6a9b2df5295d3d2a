"""Prompts: message templates a user picks, made from a Python function.

The function's parameters are the prompt's arguments (required when they have no default,
described by the docstring); clients send every argument as a string, and a parameter
annotated ``int``, ``float``, ``bool`` (or any JSON type) receives it converted. What the
function returns becomes the ``messages`` of ``prompts/get``:

===============================  =============================================================
the function returns             the messages
===============================  =============================================================
``str``                          one user message with that text
a content block (``text()``,     one user message with that block
``image()``, ...)
``user_message(...)``,           that message
``assistant_message(...)``
a list of the above              those messages, in order
``PromptResult(messages, ...)``  the messages and a ``description`` for this rendering
===============================  =============================================================

Missing required arguments, unknown ones and values that do not convert are refused with
``-32602`` before the function runs, naming each problem.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Literal

from ..auth.identity import scope_set
from ..errors import ToolwireError
from ..tools.content import Content
from ..tools.tags import tag_set
from ..tools.tool import NAME_PATTERN, Tool, ToolContext
from ..tools.validation import ArgumentsInvalid

__all__ = ["Message", "Prompt", "PromptArgumentsInvalid", "PromptResult", "assistant_message", "user_message"]

Completer = list[str] | Callable[..., Any]


class PromptArgumentsInvalid(ToolwireError, ValueError):
    """The arguments of a ``prompts/get`` do not fit the prompt; the message says how."""


class Message(dict[str, Any]):
    """A prompt message: ``{"role": "user" | "assistant", "content": <content block>}``."""


def _message(role: Literal["user", "assistant"], content: str | Content | dict[str, Any]) -> Message:
    block = {"type": "text", "text": content} if isinstance(content, str) else content
    return Message(role=role, content=block)


def user_message(content: str | Content | dict[str, Any]) -> Message:
    """A message from the user: text, or any content block (image, audio, resource...)."""
    return _message("user", content)


def assistant_message(content: str | Content | dict[str, Any]) -> Message:
    """A message from the assistant (to prime the model's answer)."""
    return _message("assistant", content)


class PromptResult:
    """Messages plus a ``description`` of this particular rendering."""

    __slots__ = ("description", "messages")

    def __init__(self, messages: Iterable[Message | Content | str], description: str | None = None) -> None:
        self.messages = list(messages)
        self.description = description


class Prompt:
    """A prompt from ``function``; ``complete`` maps argument names to completers (a list of
    values, or ``fn(value)`` / ``fn(value, arguments)``). ``ValueError`` for an invalid name,
    ``TypeError`` for a parameter type with no JSON form."""

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        complete: dict[str, Completer] | None = None,
        scopes: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
    ) -> None:
        name = name or str(getattr(function, "__name__", ""))
        if not NAME_PATTERN.fullmatch(name):
            rule = "1 to 128 characters from A-Z, a-z, 0-9, '_', '-' and '.'"
            raise ValueError(f"invalid prompt name {name!r}: pass name= with {rule}")
        self._call = Tool.from_function(function, name=name, structured_output=False, lenient=True)
        self.name = self._call.name
        self.title = title
        self.description = description if description is not None else self._call.description
        self.icons = icons
        self.meta = meta
        #: OAuth scopes a caller needs to see and get it (HTTP with ``auth=``).
        self.scopes = scope_set(self.name, scopes)
        #: Labels that visibility rules pick prompts by (server-side only).
        self.tags = tag_set(f"prompt {self.name!r}", tags)
        self.enabled = True
        schema = self._call.input_schema
        required = set(schema.get("required", []))
        self.arguments = []
        for key, property_schema in schema.get("properties", {}).items():
            argument: dict[str, Any] = {"name": key}
            if "description" in property_schema:
                argument["description"] = property_schema["description"]
            argument["required"] = key in required
            self.arguments.append(argument)
        self.completers = dict(complete or {})
        for key in self.completers:
            if key not in schema.get("properties", {}):
                raise ValueError(f"prompt {self.name!r}: cannot complete {key!r}, not one of its arguments")

    @property
    def wants_context(self) -> bool:
        return self._call.wants_context

    @property
    def definition(self) -> dict[str, Any]:
        definition: dict[str, Any] = {"name": self.name}
        for key, value in (("title", self.title), ("description", self.description)):
            if value is not None:
                definition[key] = value
        if self.arguments:
            definition["arguments"] = self.arguments
        if self.icons:
            definition["icons"] = self.icons
        if self.meta:
            definition["_meta"] = self.meta
        return definition

    def validate_arguments(self, arguments: Any) -> dict[str, Any]:
        """The arguments converted to the parameters' types; :class:`PromptArgumentsInvalid`
        naming missing, unknown or unconvertible ones."""
        if arguments is None:
            arguments = {}
        if type(arguments) is not dict:
            raise PromptArgumentsInvalid('"arguments" must be an object of strings')
        problems = []
        missing = [a["name"] for a in self.arguments if a["required"] and a["name"] not in arguments]
        if missing:
            problems.append(f"missing required argument{'s' * (len(missing) > 1)} {', '.join(missing)}")
        known = {a["name"] for a in self.arguments}
        unknown = [key for key in arguments if key not in known]
        if unknown:
            problems.append(f"unknown argument{'s' * (len(unknown) > 1)} {', '.join(unknown)}")
        if problems:
            raise PromptArgumentsInvalid(f"prompt {self.name!r}: {'; '.join(problems)}")
        try:
            return self._call.validate_arguments(arguments, "Invalid arguments for prompt '{}'")
        except ArgumentsInvalid as exc:
            raise PromptArgumentsInvalid(str(exc)) from None

    async def render(self, arguments: dict[str, Any], context: ToolContext | None = None) -> dict[str, Any]:
        """The neutral ``GetPromptResult`` for validated ``arguments``. ``TypeError`` if the
        function returns something that is not a message."""
        value = await self._call.invoke(arguments, context)
        description = self.description
        if isinstance(value, PromptResult):
            description = value.description or description
            value = value.messages
        items = value if isinstance(value, list) else [value]
        result: dict[str, Any] = {"messages": [_to_message(self.name, item) for item in items]}
        if description is not None:
            result["description"] = description
        return result


def _to_message(name: str, item: Any) -> dict[str, Any]:
    if isinstance(item, Message):
        return item
    if isinstance(item, str):
        return user_message(item)
    if isinstance(item, Content):
        return user_message(item)
    if isinstance(item, dict) and item.get("role") in ("user", "assistant") and isinstance(item.get("content"), dict):
        return item
    raise TypeError(f"prompt {name!r} returned a {type(item).__name__}: return text, content blocks or messages")
