"""The dispatch table: one route per method, era rules beside it, open to new methods."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.helpers import LEGACY, MODERN, open_peer
from toolwire import Server
from toolwire.protocol.connection import LEGACY_ONLY_METHODS, MODERN_ONLY_METHODS
from toolwire.protocol.incoming import Request
from toolwire.server.dispatch import Dispatch
from toolwire.server.methods import STANDARD
from toolwire.server.session import ServerSession


def test_the_standard_table_holds_every_method_with_the_connections_era_rules() -> None:
    assert {
        "initialize",
        "ping",
        "logging/setLevel",
        "server/discover",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "subscriptions/listen",
    } == set(STANDARD.routes)
    assert STANDARD.legacy_only == LEGACY_ONLY_METHODS
    assert STANDARD.modern_only == MODERN_ONLY_METHODS


def test_the_tasks_methods_are_the_tasks_extensions_added_with_the_first_task_tool() -> None:
    server = Server("jobs")
    server.add_tool(lambda: None, name="quick")
    assert "tasks/get" not in server.dispatch and not server.extensions
    server.add_tool(lambda: None, name="slow", task=True)
    assert list(server.extensions) == ["io.modelcontextprotocol/tasks"]
    tasks = {method for method in server.dispatch.routes if method.startswith("tasks/")}
    assert tasks == {"tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update"}
    assert server.dispatch.legacy_only == LEGACY_ONLY_METHODS  # the routes refuse other versions themselves


def test_a_server_copies_the_table_so_registering_changes_it_alone() -> None:
    first, second = Server("a"), Server("b")
    first.dispatch.register("x/echo", lambda session, request: None)
    assert "x/echo" in first.dispatch and "x/echo" not in second.dispatch and "x/echo" not in STANDARD


def test_eras_are_checked_when_registering() -> None:
    with pytest.raises(ValueError):
        Dispatch().register("x/echo", None, eras={"future"})


def _echo(session: ServerSession, request: Request) -> None:
    session.send(session.connection.respond(request, {"echoed": request.params.get("text")}), request.id)


@pytest.mark.parametrize("version", [LEGACY[-1], MODERN])
async def test_a_registered_method_is_answered_in_both_eras(version: str) -> None:
    server = Server("open")
    server.dispatch.register("x/echo", _echo)
    peer = await open_peer(server, version)
    try:
        answer = await peer.request("x/echo", {"text": "hi"})
    finally:
        await peer.connection.close()
    assert answer["result"]["echoed"] == "hi"


async def test_a_method_of_one_era_is_not_found_in_the_other() -> None:
    server = Server("open")
    server.dispatch.register("x/echo", _echo, eras={"modern"})
    peer = await open_peer(server, LEGACY[-1])
    try:
        answer = await peer.request("x/echo", {"text": "hi"})
    finally:
        await peer.connection.close()
    assert answer["error"]["code"] == -32601


@pytest.mark.parametrize(("declared", "expected"), [({}, -32021), ({"extensions": {"x/ext": {}}}, None)])
async def test_a_method_that_requires_an_extension_refuses_requests_that_do_not_declare_it(
    declared: dict[str, Any], expected: int | None
) -> None:
    server = Server("open")
    server.dispatch.register("x/echo", _echo, requires="x/ext")
    peer = await open_peer(server, MODERN, declared)
    try:
        answer = await peer.request("x/echo", {"text": "hi"})
    finally:
        await peer.connection.close()
    if expected is None:
        assert answer["result"]["echoed"] == "hi"
    else:
        assert answer["error"]["code"] == expected
        assert answer["error"]["data"] == {"requiredCapabilities": {"extensions": {"x/ext": {}}}}


async def test_a_method_offered_by_a_capability_the_server_lacks_is_not_found() -> None:
    server = Server("open")
    server.dispatch.register("x/echo", _echo, offered_by="widgets")
    peer = await open_peer(server, MODERN)
    try:
        answer = await peer.request("x/echo", {"text": "hi"})
    finally:
        await peer.connection.close()
    assert answer["error"] == {"code": -32601, "message": "Method not found: this server offers no widgets"}
