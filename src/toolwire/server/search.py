"""The search transform: a server with many tools lists two instead of all of them.

``server.expose_search()`` (or ``Server(tool_search=True)``) makes ``tools/list`` answer
with ``search_tools`` and ``call_tool`` only, for clients that send every listed definition
to their model and cannot load them on demand. The model asks ``search_tools`` for what it
needs (a request in words: ranked by :mod:`toolwire.discovery`, the ``search`` extra) and
gets those tools' definitions, then runs one through ``call_tool`` (``name``,
``arguments``). The tools themselves stay registered and callable by name, so clients that
know them lose nothing. What ``search_tools`` finds and ``call_tool`` runs passes the
check lists and calls pass (enabled, the caller's scopes, visibility rules of the server,
the caller and the session); and, both being the model's tools, a tool MCP Apps reserves
for its view (``visibility: ["app"]``) is neither found nor run. On a server with guards, a
``call_tool`` of such a tool passes them as a ``tools/call`` of the tool it runs: the audit,
limits, timeouts and policies see that tool and its arguments, as for a direct call.

The index is built (and the ranking library imported: serving starts without it) at the
first search, and again after the tool set changes. Without the
``search`` extra, :meth:`~toolwire.Server.expose_search` raises
:class:`~toolwire.extras.ExtraMissing` saying what to install.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..apps.visibility import visible_to_model
from ..catalog import Catalog
from ..discovery import MAX_QUERY_CHARS
from ..guards.seam import Call, Next, Result
from ..protocol.codec import Codec
from ..tools.results import error_result
from ..tools.tool import Tool
from ..tools.validation import ArgumentsInvalid

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ..auth.identity import Identity
    from ..discovery import ToolIndex
    from ..protocol.incoming import Request
    from .context import Context
    from .server import Server
    from .session import ServerSession

SEARCH_TOOL = "search_tools"
CALL_TOOL = "call_tool"

_SEARCH_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "maxLength": MAX_QUERY_CHARS, "description": "What the tool should do, in words."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50, "description": "How many tools at most."},
    },
    "required": ["query"],
}
_CALL_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The name of a tool search_tools returned."},
        "arguments": {"type": "object", "description": "Its arguments, as its inputSchema says."},
    },
    "required": ["name"],
}


class ToolSearch:
    """``search_tools`` and ``call_tool`` for ``server`` (see the module's documentation);
    ``limit``: how many tools a search returns unless it asks for fewer or more; ``only_for``:
    whether a caller (``None``: anonymous) is listed the two tools instead of every tool
    (default: every caller is)."""

    def __init__(
        self, server: Server, limit: int = 5, only_for: Callable[[Identity | None], bool] | None = None
    ) -> None:
        from ..extras import require

        require("search", "the search transform")  # refused now, imported at the first search
        self._server = server
        self.limit = limit
        self.only_for = only_for
        self._index: ToolIndex | None = None
        search = Tool.from_schema(
            SEARCH_TOOL,
            _SEARCH_SCHEMA,
            self._search,
            description=f"Find this server's tools for a task: returns the definitions of the best {limit}.",
            annotations={"readOnlyHint": True},
        )
        call = Tool.from_schema(
            CALL_TOOL,
            _CALL_SCHEMA,
            self._call,
            description="Run one of the tools search_tools found, by its name, with its arguments.",
        )
        #: What ``tools/list`` shows instead of the registry.
        self.listed: Catalog[Tool] = Catalog("tools", "tool", Codec.tool, server.registry.page_size)
        for tool in (search, call):
            server.add_tool(tool)
            self.listed.add(tool.name, tool)
        server.registry.on_change(self._forget)

    def shows(self, caller: Identity | None) -> bool:
        """Whether ``tools/list`` shows ``caller`` the two tools (else every tool, these two too)."""
        return self.only_for is None or self.only_for(caller)

    def _forget(self) -> None:
        self._index = None

    def _visible(self, session: ServerSession, request: Request, name: str) -> Tool | None:
        """The tool ``name`` if the model calling in ``request`` may see and run it:
        not one of ours, allowed to the caller as ``tools/list`` and ``tools/call`` allow
        it (:meth:`Visibility.allows <toolwire.server.visibility.Visibility.allows>`), and
        for the model (MCP Apps: a tool only its view may call is not)."""
        tool = self._server.registry.by_key.get(name)
        if tool is None or name in (SEARCH_TOOL, CALL_TOOL):
            return None
        if not self._server.visibility.allows(session, request, "tools", name, tool):
            return None
        return tool if visible_to_model(tool.definition.get("_meta")) else None

    def _search(self, arguments: dict[str, Any], context: Context) -> dict[str, Any]:
        from ..client.types import ToolInfo
        from ..discovery import ToolIndex

        if self._index is None:
            tools = [tool for tool in self._server.registry.enabled() if tool.name not in (SEARCH_TOOL, CALL_TOOL)]
            self._index = ToolIndex([("", ToolInfo.from_dict(tool.definition)) for tool in tools])
        limit = arguments.get("limit", self.limit)
        codec = context.request.codec
        found = []
        for match in self._index.search(arguments["query"], len(self._index.entries)):
            tool = self._visible(context._session, context.request, match.name)
            if tool is not None:
                found.append(codec.tool(tool.definition))
                if len(found) == limit:
                    break
        return {"content": [{"type": "text", "text": describe_found(found)}], "structuredContent": {"tools": found}}

    async def _call(self, arguments: dict[str, Any], context: Context) -> dict[str, Any]:
        name = arguments["name"]
        tool = self._visible(context._session, context.request, name)
        if tool is None:
            return error_result(f"Unknown tool: {name} (search_tools lists the tools there are)")
        return await self._run(context._session, context.request, tool, arguments.get("arguments", {}))

    async def _run(
        self, session: ServerSession, request: Request, tool: Tool, arguments: dict[str, Any]
    ) -> dict[str, Any]:
        """What ``call_tool`` answers for ``tool`` run with ``arguments``: arguments that break
        its schema are a tool error saying so."""
        from .calls import run_tool

        try:
            valid = tool.validate_arguments(arguments)
        except ArgumentsInvalid as exc:
            return error_result(str(exc))
        result: dict[str, Any] = await run_tool(session, request, tool, valid)
        if tool.wrap_structured and "structuredContent" in result:
            result = {**result, "structuredContent": {"result": result["structuredContent"]}}
        return result

    def routed(self, guarded: Next) -> Next:
        """``guarded`` (the server's guards, composed) where a ``call_tool`` of a tool the
        caller may run passes as a ``tools/call`` of that tool: the guards (audit, limits,
        timeouts, policies) see the tool it runs and its arguments, as for a direct call.
        Other requests, and a ``call_tool`` naming no such tool, pass as they are."""

        def handle(call: Call) -> Awaitable[Result]:
            if call.name != CALL_TOOL or call.method != "tools/call":
                return guarded(call)
            return self._routed(call, guarded)

        return handle

    async def _routed(self, call: Call, guarded: Next) -> Result:
        arguments = call.arguments or {}
        name, given = arguments.get("name"), arguments.get("arguments", {})
        session: ServerSession = call.session  # type: ignore[assignment]
        request = call.request
        tool = self._visible(session, request, name) if isinstance(name, str) else None
        if tool is None or not isinstance(given, dict):
            return await guarded(call)  # call_tool itself says what is wrong
        inner = Call(session, request, name, given, lambda: self._run(session, request, tool, given), tool)
        return await guarded(inner)


def describe_found(tools: list[dict[str, Any]]) -> str:
    """The tools found, as text for models that read no structured content."""
    import orjson

    if not tools:
        return "No tool matches: try other words."
    return orjson.dumps(tools).decode()
