"""The set of tools a server offers: order, pages, enable/disable, change events.

Tools are listed in registration order (deterministic, as 2026-07-28 asks). ``tools/list``
pages are rendered and JSON-encoded once per protocol version and page, then reused until
the registry changes: listing 1,000 tools costs a dictionary lookup. Cursors are opaque
(base64 of an offset); one that does not decode, or points past the end, is refused.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import orjson

from ..protocol.codec import Codec
from .tool import Tool


class InvalidCursor(ValueError):
    """A ``tools/list`` cursor that this registry did not hand out."""


class ToolRegistry:
    """Tools by name, in order. ``page_size=None`` lists every tool in one page."""

    def __init__(self, page_size: int | None = None) -> None:
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be at least 1, or None for a single page")
        self.page_size = page_size
        self._tools: dict[str, Tool] = {}
        self._pages: dict[tuple[str, str | None], bytes] = {}
        self._listeners: list[Callable[[], None]] = []

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def get(self, name: str) -> Tool | None:
        """The enabled tool called ``name``, or ``None``."""
        tool = self._tools.get(name)
        return tool if tool is not None and tool.enabled else None

    def all(self) -> list[Tool]:
        """Every registered tool, enabled or not, in order."""
        return list(self._tools.values())

    def add(self, tool: Tool) -> Tool:
        """Register ``tool``; ``ValueError`` if its name is taken."""
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered: remove it first or pick another name")
        self._tools[tool.name] = tool
        self._changed()
        return tool

    def remove(self, name: str) -> Tool:
        """Unregister and return the tool; ``KeyError`` if there is none by that name."""
        tool = self._require(name)
        del self._tools[name]
        self._changed()
        return tool

    def set_enabled(self, name: str, enabled: bool) -> None:
        """Show or hide a registered tool; ``KeyError`` if there is none by that name."""
        tool = self._require(name)
        if tool.enabled != enabled:
            tool.enabled = enabled
            self._changed()

    def on_change(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener()`` after every change; returns a function that unsubscribes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def page(self, codec: Codec, cursor: str | None, finish: Callable[[dict[str, Any]], dict[str, Any]]) -> bytes:
        """The encoded ``tools/list`` result for ``cursor`` in ``codec``'s version.

        ``finish`` completes the result for the wire (result type, cache hints, server info).
        :class:`InvalidCursor` for a cursor this registry cannot have produced.
        """
        key = (codec.version, cursor)
        page = self._pages.get(key)
        if page is None:
            page = self._pages[key] = orjson.dumps(finish(self._render(codec, cursor)))
        return page

    def _render(self, codec: Codec, cursor: str | None) -> dict[str, Any]:
        tools = [tool for tool in self._tools.values() if tool.enabled]
        start = 0 if cursor is None else _decode_cursor(cursor, len(tools))
        end = len(tools) if self.page_size is None else start + self.page_size
        result: dict[str, Any] = {"tools": [codec.tool(tool.definition) for tool in tools[start:end]]}
        if end < len(tools):
            result["nextCursor"] = base64.urlsafe_b64encode(f"tools:{end}".encode()).decode()
        return result

    def _require(self, name: str) -> Tool:
        tool = self._tools.get(name)
        if tool is None:
            raise KeyError(f"no tool named {name!r}")
        return tool

    def _changed(self) -> None:
        self._pages.clear()
        for listener in list(self._listeners):
            listener()


def _decode_cursor(cursor: Any, total: int) -> int:
    try:
        kind, _, offset = base64.urlsafe_b64decode(cursor.encode()).decode().partition(":")
        position = int(offset)
    except (ValueError, AttributeError, UnicodeError):
        raise InvalidCursor(f"invalid cursor {cursor!r}: pass back a nextCursor from an earlier page") from None
    if kind != "tools" or not 0 < position <= total:
        raise InvalidCursor(f"invalid cursor {cursor!r}: pass back a nextCursor from an earlier page")
    return position
