"""Turning what a tool returns (or raises) into a neutral ``CallToolResult`` dict.

A tool may return a plain value, one content block, a list of blocks, or a whole
:class:`ToolResult`. With an output schema, a plain value becomes ``structuredContent`` plus a
text copy of it; without one, strings become a text block and other values their JSON text.
To report an execution error the model should read, raise :class:`ToolError` (or return
``ToolResult(..., is_error=True)``).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Iterable
from typing import Any

import orjson

from ..errors import ToolwireError
from .content import Content


class ToolError(ToolwireError):
    """Raise inside a tool to answer with an execution error (``isError: true``) whose text is
    the message. Never masked: this is what the model is meant to read."""


#: ``structured`` not given (``None`` is a structured value).
UNSET: Any = object()


class ToolResult:
    """A whole tool result: content blocks, optional structured content, error flag, ``_meta``."""

    __slots__ = ("content", "is_error", "meta", "structured")

    def __init__(
        self,
        content: Iterable[Content | str] | Content | str = (),
        *,
        structured: Any = UNSET,
        is_error: bool = False,
        meta: dict[str, Any] | None = None,
    ) -> None:
        items: Iterable[Content | str] = [content] if isinstance(content, (str, Content)) else content
        self.content = [Content(type="text", text=c) if isinstance(c, str) else c for c in items]
        self.structured = structured
        self.is_error = is_error
        self.meta = meta

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {"content": self.content}
        if self.structured is not UNSET:
            result["structuredContent"] = to_json_value(self.structured)
        if self.is_error:
            result["isError"] = True
        if self.meta:
            result["_meta"] = self.meta
        return result


def error_result(message: str) -> dict[str, Any]:
    """A neutral execution-error result carrying ``message``."""
    return {"content": [{"type": "text", "text": message}], "isError": True}


def build_result(value: Any, structured: bool) -> dict[str, Any]:
    """The neutral result for a tool's return value; ``structured``: the tool has an outputSchema."""
    if type(value) is str and not structured:
        return {"content": [{"type": "text", "text": value}]}
    if isinstance(value, ToolResult):
        return value.to_dict()
    blocks = _blocks(value)
    if structured:
        # Blocks returned by a tool with an outputSchema (``-> list``) are its structured value too.
        data = dumps(value)
        content = blocks if blocks is not None else [{"type": "text", "text": data.decode()}]
        return {"content": content, "structuredContent": orjson.loads(data)}
    if blocks is not None:
        return {"content": blocks}
    if value is None:
        return {"content": []}
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}]}
    return {"content": [{"type": "text", "text": dumps(value).decode()}]}


def _blocks(value: Any) -> list[Content] | None:
    """``value`` as a list of content blocks, if it is one block or a non-empty list of them."""
    if isinstance(value, Content):
        return [value]
    if isinstance(value, list) and value and all(isinstance(item, Content) for item in value):
        return value
    return None


def raw_result(value: Any, structured: bool) -> dict[str, Any]:
    """The neutral result of a low-level handler: a whole result dict, blocks, or a value
    (made structured content when ``structured``, as in :func:`build_result`)."""
    if isinstance(value, dict) and "content" in value and not isinstance(value, Content):
        return value
    if not structured and isinstance(value, list) and all(isinstance(i, dict) and "type" in i for i in value):
        return {"content": value}
    return build_result(value, structured)


def dumps(value: Any) -> bytes:
    """JSON for any value a tool may return (dataclasses, enums, datetimes, pydantic models...)."""
    return orjson.dumps(value, default=_default)


def to_json_value(value: Any) -> Any:
    """``value`` as plain JSON data (dicts, lists, strings, numbers, booleans, ``None``)."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    return orjson.loads(dumps(value))


def _default(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if dump is not None:  # a pydantic model
        return dump(mode="json")
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, bytes):
        import base64

        return base64.b64encode(value).decode()
    import decimal
    import os

    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"a tool returned a {type(value).__qualname__}, which has no JSON form")
