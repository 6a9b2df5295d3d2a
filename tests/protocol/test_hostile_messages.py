"""Hostile messages: every field of every message, of every method and both eras, replaced by a
value of another type. The connection never raises, a bad message costs only its own answer
(never an internal error), and the next message in the same read is served."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.helpers import meta
from toolwire import Server
from toolwire.protocol.connection import ServerConnection
from toolwire.protocol.identity import ServerIdentity
from toolwire.protocol.outgoing import Answer
from toolwire.server.session import ServerSession

LEGACY = "2025-11-25"


def hostile_server() -> Server:
    server = Server("hostile")

    @server.tool
    async def echo(text: str) -> str:
        return text

    @server.resource("note://one", mime_type="text/plain")
    def one() -> str:
        return "one"

    @server.resource("note://{name}")
    def note(name: str) -> str:
        return name

    @server.prompt
    def review(code: str) -> str:
        return f"review {code}"

    return server


#: A valid message of every kind a client sends: requests of both eras, notifications, and
#: answers to the server's own requests.
def templates() -> list[dict[str, Any]]:
    legacy_calls = [
        ("ping", {}),
        ("logging/setLevel", {"level": "debug"}),
        ("tools/list", {"cursor": "MA"}),
        ("tools/call", {"name": "echo", "arguments": {"text": "hi"}, "_meta": {"progressToken": 1}}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("resources/read", {"uri": "note://one"}),
        ("resources/subscribe", {"uri": "note://one"}),
        ("resources/unsubscribe", {"uri": "note://one"}),
        ("prompts/list", {}),
        ("prompts/get", {"name": "review", "arguments": {"code": "x"}}),
        (
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "code", "value": "x"}},
        ),
    ]
    modern_calls = [
        ("server/discover", {}),
        ("tools/list", {}),
        ("tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
        ("resources/read", {"uri": "note://x"}),
        ("prompts/get", {"name": "review", "arguments": {"code": "x"}}),
        ("subscriptions/listen", {"notifications": {"toolsListChanged": True}}),
    ]
    messages: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 7, "method": method, "params": params} for method, params in legacy_calls
    ]
    for method, params in modern_calls:
        full = {**params, "_meta": meta(io_modelcontextprotocol_logLevel="info")}
        full["_meta"]["io.modelcontextprotocol/logLevel"] = full["_meta"].pop("io_modelcontextprotocol_logLevel")
        messages.append({"jsonrpc": "2.0", "id": "m", "method": method, "params": full})
    messages += [
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "no"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": {}},
        {"jsonrpc": "2.0", "id": 1, "result": {"roots": []}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "no"}},
        {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}},
        },
    ]
    return messages


TEMPLATES = templates()

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8,
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a node of ``value`` (the root excluded)."""
    found = []
    if isinstance(value, dict):
        for key, child in value.items():
            found.append((*prefix, key))
            found += paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.append((*prefix, index))
            found += paths(child, (*prefix, index))
    return found


@st.composite
def hostile(draw: st.DrawFn) -> dict[str, Any]:
    """A valid message with one node replaced by an arbitrary value (or a key added)."""
    message = copy.deepcopy(draw(st.sampled_from(TEMPLATES)))
    path = draw(st.sampled_from(paths(message)))
    parent = message
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = draw(json_values)
    return message


def identity() -> ServerIdentity:
    return ServerIdentity({"name": "t", "version": "1"}, {"tools": {}, "logging": {}}, None)


PING = b'{"jsonrpc":"2.0","id":"after","method":"ping"}\n'
INITIALIZE = orjson.dumps(TEMPLATES[-1]) + b"\n"


@settings(max_examples=600, deadline=None)
@given(hostile(), st.booleans())
def test_the_connection_never_raises_and_serves_the_next_message(message: dict[str, Any], initialized: bool) -> None:
    connection = ServerConnection(identity())
    if initialized:
        connection.receive_data(INITIALIZE)
    connection._awaiting.add(1)  # as if the server had asked the client something
    events = connection.receive_data(orjson.dumps(message) + b"\n" + PING)
    answers = [orjson.loads(event.data) for event in events if isinstance(event, Answer)]
    assert answers and answers[-1] == {"jsonrpc": "2.0", "id": "after", "result": {}}
    for answer in answers:
        assert answer.get("error", {}).get("code") != -32603, answer


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile(), st.booleans())
def test_a_server_answers_every_hostile_message_precisely_and_goes_on(
    message: dict[str, Any], initialized: bool
) -> None:
    async def scenario() -> list[Any]:
        written: list[bytes] = []
        server = hostile_server()
        session = ServerSession(server, server.connection(), written.append)
        if initialized:
            session.feed(INITIALIZE)
        session.connection._awaiting.add(1)
        session.feed(orjson.dumps(message) + b"\n" + PING)
        for _ in range(20):
            await asyncio.sleep(0)
        await asyncio.sleep(0.01)
        await session.close(0.1)
        return [orjson.loads(line) for chunk in written for line in chunk.splitlines() if line.strip()]

    answers = asyncio.run(scenario())
    assert {"jsonrpc": "2.0", "id": "after", "result": {}} in answers
    for answer in answers:
        assert answer.get("error", {}).get("code") != -32603, (message, answer)


@settings(max_examples=300, deadline=None)
@given(st.lists(hostile(), min_size=1, max_size=3))
def test_hostile_messages_in_a_batch_cost_only_their_own_answers(batch: list[dict[str, Any]]) -> None:
    connection = ServerConnection(identity())
    opening = {**TEMPLATES[-1], "params": {**TEMPLATES[-1]["params"], "protocolVersion": "2025-03-26"}}
    connection.receive_data(orjson.dumps(opening) + b"\n")
    ping = {"jsonrpc": "2.0", "id": "in-batch", "method": "ping"}
    events = connection.receive_data(orjson.dumps([*batch, ping]) + b"\n" + PING)
    answers = [orjson.loads(event.data) for event in events if isinstance(event, Answer)]
    assert answers[-1] == {"jsonrpc": "2.0", "id": "after", "result": {}}
    flat = [item for answer in answers for item in (answer if isinstance(answer, list) else [answer])]
    assert not any(item.get("error", {}).get("code") == -32603 for item in flat), flat
