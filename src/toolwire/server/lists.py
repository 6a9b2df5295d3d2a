"""The list methods (``tools/list``, ``resources/list``, ``resources/templates/list``,
``prompts/list``): handlers of the dispatch table, each answering at once from its
catalog's page, encoded once per version, page, set of granted scopes and visibility rules
(:mod:`.visibility`).

Guards marked :func:`~toolwire.guards.lists_too` see each list request and its page (as a
dict), which they may filter; then the answer is encoded anew.

A ``cursor`` that is not a string, or that the catalog did not hand out, is ``-32602``. A
server with a low-level list handler for tools answers ``tools/list`` from it instead, in a
task of its own (its errors are the handler's ``ProtocolError``), showing what the visibility
rules allow (:meth:`~.visibility.Visibility.allows`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from ..catalog import Catalog, InvalidCursor
from ..guards.seam import Call, Next, run_guarded
from ..protocol.errors import INVALID_PARAMS, ProtocolError
from ..protocol.incoming import Request
from ..protocol.outgoing import Answer

if TYPE_CHECKING:
    from .session import ServerSession


def list_tools(session: ServerSession, request: Request) -> None:
    if session.server.raw_list_handler is not None:
        cursor = request.params.get("cursor")
        if cursor is not None and type(cursor) is not str:
            return session.fail(request, ProtocolError(INVALID_PARAMS, 'Invalid params: "cursor" must be a string'))
        session.start(request, _list_raw(session, request, cursor))
        return None
    search = session.server.tool_search
    if search is None:
        return list_page(session, request, session.server.registry)
    private = search.only_for is not None  # the list then depends on the caller
    if search.shows(session.caller(request)):  # the search transform lists its two tools instead
        return list_page(session, request, search.listed, private)
    return list_page(session, request, session.server.registry, private)


def list_resources(session: ServerSession, request: Request) -> None:
    list_page(session, request, session.server.resources)


def list_templates(session: ServerSession, request: Request) -> None:
    list_page(session, request, session.server.resource_templates)


def list_prompts(session: ServerSession, request: Request) -> None:
    list_page(session, request, session.server.prompts)


def list_page(session: ServerSession, request: Request, catalog: Catalog[Any], private: bool = False) -> None:
    """Answer a list request with ``catalog``'s page for the request's cursor (encoded once
    per version and page); ``private``: the page is the caller's alone (not to be cached
    for others)."""
    cursor = request.params.get("cursor")
    if cursor is not None and type(cursor) is not str:
        return session.fail(request, ProtocolError(INVALID_PARAMS, 'Invalid params: "cursor" must be a string'))
    codec = request.codec
    identity = session.server.identity
    caller = session.caller(request)
    granted = caller.scopes if caller is not None else None
    cache_scope = "private" if private or (granted is not None and catalog.gated) else identity.cache_scope
    rules = None
    visibility = session.server.visibility
    if visibility.active:  # rules by tag, caller or session (see .visibility)
        rules = visibility.rules_for(session, request)
        if rules is not visibility.everyone.rules:
            cache_scope = "private"

    def finish(result: dict[str, Any]) -> dict[str, Any]:
        codec.cacheable(result, identity.ttl_ms, cache_scope)
        return codec.finish(result, identity.info)

    try:
        page = catalog.page(codec, cursor, finish, granted, rules)
    except InvalidCursor as exc:
        return session.fail(request, ProtocolError(INVALID_PARAMS, f"Invalid params: {exc}"))
    guarded = session.server.list_guarded
    if guarded is not None:
        session.start(request, _guarded_page(session, request, guarded, page))
        return None
    session.send(session.connection.respond_raw(request, page), request.id)
    return None


async def _guarded_page(session: ServerSession, request: Request, guarded: Next, page: bytes) -> Answer | None:
    """Answer a list request with what the guards that see lists make of its ``page`` (a
    guard's ``ProtocolError`` is the answer; another exception is ``-32603``)."""
    call = Call(session, request, None, None, lambda: _decoded(page))
    try:
        result = await run_guarded(guarded, call)
    except ProtocolError as exc:
        return session.connection.respond_error(request, exc)
    return session.connection.respond(request, result)


async def _decoded(page: bytes) -> dict[str, Any]:
    result: dict[str, Any] = orjson.loads(page)
    return result


async def _list_raw(session: ServerSession, request: Request, cursor: str | None) -> Answer | None:
    codec = request.codec
    try:
        tools, next_cursor = await session.server.list_raw_tools(cursor)
    except ProtocolError as exc:
        return session.connection.respond_error(request, exc)
    allows = session.server.visibility.allows
    shown = [tool for tool in tools if allows(session, request, "tools", tool.name, tool)]
    result: dict[str, Any] = {"tools": [codec.tool(tool.definition) for tool in shown]}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    identity = session.server.identity
    return session.connection.respond(request, codec.cacheable(result, identity.ttl_ms, identity.cache_scope))
