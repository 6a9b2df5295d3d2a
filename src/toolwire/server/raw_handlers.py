"""The low-level tool handlers of a :class:`~toolwire.Server`: ``tools/list`` and
``tools/call`` taken over by functions of the user's, for tools defined by data rather
than by decorated functions. :class:`RawHandlers` is a part of ``Server``; its methods
are the server's.

Errors: a listed tool without a ``call_tool_handler`` to call it is ``-32602``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..protocol.errors import INVALID_PARAMS, ProtocolError
from ..tools.tool import Tool

F = TypeVar("F", bound=Callable[..., Any])


class RawHandlers:
    """The low-level handler methods of :class:`~toolwire.Server` (see the module)."""

    raw_list_handler: Callable[..., Any] | None
    raw_call_handler: Callable[..., Any] | None
    _raw_tools: dict[str, Tool]

    def list_tools_handler(self, fn: F) -> F:
        """Take over ``tools/list``: ``fn()`` or ``fn(cursor)`` returns tool definitions (dicts
        or :class:`Tool`), or ``{"tools": [...], "nextCursor": ...}``. Calls are still
        validated against the schemas it lists."""
        self.raw_list_handler = fn
        return fn

    def call_tool_handler(self, fn: F) -> F:
        """Take over ``tools/call`` for tools not registered otherwise: ``fn(name, arguments)``
        (or ``fn(name, arguments, context)``) returns a value, content blocks or a result dict."""
        self.raw_call_handler = fn
        return fn

    async def list_raw_tools(self, cursor: str | None) -> tuple[list[Tool], str | None]:
        """The low-level list handler's tools (as :class:`Tool`, for rendering and validation)."""
        assert self.raw_list_handler is not None
        handler = self.raw_list_handler
        code = getattr(getattr(handler, "__func__", handler), "__code__", None)
        takes_cursor = code is not None and code.co_argcount - hasattr(handler, "__func__") >= 1
        listed = handler(cursor) if takes_cursor else handler()
        if hasattr(listed, "__await__"):
            listed = await listed
        next_cursor = None
        if isinstance(listed, dict):
            next_cursor = listed.get("nextCursor")
            listed = listed.get("tools", [])
        tools = [item if isinstance(item, Tool) else self._raw_definition(item) for item in listed]
        self._raw_tools.update((tool.name, tool) for tool in tools)
        return tools, next_cursor

    def known_raw_tool(self, name: str) -> Tool | None:
        """The low-level tool ``name`` if its definition was already listed, else ``None``."""
        return self._raw_tools.get(name)

    async def find_raw_tool(self, name: str) -> Tool | None:
        """The tool ``name`` as the low-level handlers define it, or ``None``."""
        tool = self._raw_tools.get(name)
        if tool is None and self.raw_list_handler is not None:
            cursor: str | None = None
            for _ in range(1000):  # every page, with a cap against endless cursors
                _, cursor = await self.list_raw_tools(cursor)
                if cursor is None or name in self._raw_tools:
                    break
            tool = self._raw_tools.get(name)
        return tool

    def _raw_definition(self, definition: dict[str, Any]) -> Tool:
        call = self.raw_call_handler
        if call is None:
            raise ProtocolError(INVALID_PARAMS, "tools are listed by a handler but no call_tool_handler is set")
        name = definition.get("name", "")
        wants_context = getattr(getattr(call, "__code__", None), "co_argcount", 2) >= 3

        async def handler(arguments: dict[str, Any], context: Any = None) -> Any:
            value = call(name, arguments, context) if wants_context else call(name, arguments)
            if hasattr(value, "__await__"):
                value = await value
            return value

        return Tool.from_schema(
            name,
            definition.get("inputSchema", {"type": "object"}),
            handler,
            output_schema=definition.get("outputSchema"),
            description=definition.get("description"),
            title=definition.get("title"),
            annotations=definition.get("annotations"),
            icons=definition.get("icons"),
            meta=definition.get("_meta"),
        )
