"""Bad input: each gets the specification's error, and the server goes on serving everyone."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.helpers import MODERN, meta, open_peer
from toolwire import Server
from toolwire.protocol.connection import ServerConnection, too_deep
from toolwire.protocol.identity import ServerIdentity
from toolwire.protocol.incoming import Request
from toolwire.protocol.outgoing import Answer
from toolwire.transports.memory import MemoryConnection


def make_server(**options: Any) -> Server:
    server = Server("bad-input", **options)

    @server.tool
    async def echo(text: str) -> str:
        return text

    @server.tool
    async def slow(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "slow done"

    return server


async def error_for(data: bytes, version: str = "2025-11-25", **options: Any) -> dict[str, Any]:
    peer = await open_peer(make_server(**options), version)
    peer.connection.send_bytes(data)
    answer = await peer.connection.receive()
    assert (await peer.call("echo", {"text": "still here"}))["result"]["content"][0]["text"] == "still here"
    return answer  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("data", "code", "id"),
    [
        (b"{not json", -32700, None),
        (b"", -32700, None),
        (b"\xff\xfe\x00", -32700, None),
        (b"42", -32600, None),
        (b'"a string"', -32600, None),
        (b"null", -32600, None),
        (b'{"id": 1, "method": "tools/list"}', -32600, 1),
        (b'{"jsonrpc": "1.0", "id": 1, "method": "tools/list"}', -32600, 1),
        (b'{"jsonrpc": "2.0", "id": 1, "method": 5}', -32600, 1),
        (b'{"jsonrpc": "2.0", "id": true, "method": "tools/list"}', -32600, None),
        (b'{"jsonrpc": "2.0", "id": null, "method": "tools/list"}', -32600, None),
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}', -32600, None),
        (b'{"jsonrpc": "2.0", "id": {}, "method": "tools/list"}', -32600, None),
        (b'{"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": [1]}', -32602, 3),
        (b'{"jsonrpc": "2.0", "id": 4, "method": "no/such"}', -32601, 4),
        (b'{"jsonrpc": "2.0", "id": 5}', -32600, 5),
        (b"[]", -32600, None),
        (b'[{"jsonrpc": "2.0", "id": 6, "method": "ping"}]', -32600, None),
    ],
)
async def test_malformed_messages_get_the_prescribed_error(data: bytes, code: int, id: Any) -> None:
    answer = await error_for(data)
    assert answer["jsonrpc"] == "2.0"
    assert answer["id"] == id
    assert answer["error"]["code"] == code
    assert answer["error"]["message"]


async def test_oversized_and_deeply_nested_messages_are_refused() -> None:
    big = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "x" * 2000}},
        }
    )
    answer = await error_for(big.encode(), max_message_bytes=1000)
    assert answer["error"]["code"] == -32600 and "exceeds the limit of 1000 bytes" in answer["error"]["message"]
    deep = (
        '{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": '
        + "[" * 200
        + "]" * 200
        + "}}}"
    )
    answer = await error_for(deep.encode())
    assert answer["error"]["code"] == -32600 and answer["id"] == 9 and "nested deeper" in answer["error"]["message"]


async def test_bad_input_does_not_disturb_calls_in_flight() -> None:
    peer = await open_peer(make_server(), MODERN)
    slow_id = await peer.send("tools/call", {"name": "slow", "arguments": {"seconds": 0.2}})
    for data in (
        b"garbage",
        b"[1,2]",
        b'{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"nope","_meta":{}}}',
    ):
        peer.connection.send_bytes(data)
    errors = [await peer.connection.receive() for _ in range(3)]
    assert [e["error"]["code"] for e in errors] == [-32700, -32600, -32602]
    assert (await peer.answer(slow_id))["result"]["content"][0]["text"] == "slow done"


def identity() -> ServerIdentity:
    return ServerIdentity({"name": "fuzz", "version": "1"}, {"tools": {}}, None)


def assert_well_formed(event: Any) -> None:
    """Every byte string the connection emits is one JSON-RPC message (or batch of them)."""
    if isinstance(event, Answer):
        event = event.data
        assert event.endswith(b"\n") and event.count(b"\n") == 1
        message = orjson.loads(event)
        for item in message if isinstance(message, list) else [message]:
            assert item["jsonrpc"] == "2.0"
            if "error" in item:
                assert isinstance(item["error"]["code"], int) and isinstance(item["error"]["message"], str)
                assert item["id"] is None or type(item["id"]) in (str, int)
            else:
                assert "result" in item or "method" in item


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=8))
def test_arbitrary_bytes_never_crash_the_connection(chunks: list[bytes]) -> None:
    connection = ServerConnection(identity(), max_message_bytes=256)
    for chunk in chunks:
        for event in connection.receive_data(chunk):
            assert_well_formed(event)
    for event in connection.receive_data(b"\n"):
        assert_well_formed(event)
    # and it still answers properly afterwards
    events = connection.receive_data(b'\n{"jsonrpc":"2.0","id":"p","method":"ping"}\n')
    assert any(isinstance(e, Answer) and e.id == "p" and b'"id":"p"' in e.data for e in events)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)
methods = st.sampled_from(
    [
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "server/discover",
        "subscriptions/listen",
        "logging/setLevel",
        "notifications/cancelled",
        "notifications/initialized",
        "nope",
    ]
)


@st.composite
def messages(draw: st.DrawFn) -> Any:
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return draw(json_values)
    message: dict[str, Any] = {"jsonrpc": draw(st.sampled_from(["2.0", "2.0", "1.0"])), "method": draw(methods)}
    if draw(st.booleans()):
        message["id"] = draw(st.integers(-5, 5) | st.text(max_size=3) | st.none() | st.booleans())
    params = draw(
        st.dictionaries(
            st.sampled_from(["name", "arguments", "cursor", "level", "requestId", "protocolVersion", "_meta", "x"]),
            json_values,
            max_size=4,
        )
    )
    if kind == 2:
        params["_meta"] = draw(st.just(meta()) | json_values)
        params["name"] = draw(st.sampled_from(["echo", "slow", "zzz"]))
        params["arguments"] = draw(st.just({"text": "hi"}) | st.just({"seconds": 0}) | json_values)
    if kind == 3:
        return [message, draw(json_values)]
    message["params"] = params
    return message


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages(), min_size=1, max_size=6))
def test_arbitrary_json_messages_always_get_well_formed_answers(batch: list[Any]) -> None:
    async def scenario() -> None:
        connection = MemoryConnection(make_server())
        ids_seen = 0
        for message in batch:
            await connection.send(message)
            if isinstance(message, dict) and type(message.get("id")) in (int, str):
                ids_seen += 1
        await asyncio.sleep(0.01)
        while connection.pending():
            raw = await connection.receive()
            for item in raw if isinstance(raw, list) else [raw]:
                assert item["jsonrpc"] == "2.0"
                assert ("error" in item) or ("result" in item) or ("method" in item)
        # the session survives whatever it was sent
        await connection.send(
            {
                "jsonrpc": "2.0",
                "id": "final",
                "method": "tools/call",
                "params": {
                    "name": "echo",
                    "arguments": {"text": "ok"},
                    "_meta": meta(),
                },
            }
        )
        while True:
            answer = await connection.receive()
            if answer.get("id") == "final":
                break
        assert answer["result"]["content"][0]["text"] == "ok"
        await connection.close(grace=0.1)

    asyncio.run(scenario())


def test_connection_is_sans_io() -> None:
    """The protocol package imports no I/O, no event loop, no threads."""
    import subprocess
    import sys

    code = (
        "import sys; import toolwire.protocol.connection; "
        "bad = {'asyncio', 'socket', 'threading', 'selectors', 'subprocess'} & set(sys.modules); "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_request_objects_carry_the_era() -> None:
    connection = ServerConnection(identity())
    [request] = connection.receive_message(
        orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta({"sampling": {}})}})
    )
    assert isinstance(request, Request)
    assert request.codec.modern and request.capabilities == {"sampling": {}} and request.log_level is None


async def test_a_message_nested_too_deep_with_objects_alone_is_refused() -> None:
    limit = 64
    params = '{"":' * (limit - 1) + "{}" + "}" * (limit - 1)  # the message itself is one level
    deep = '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":' + params + "}"
    assert "[" not in deep and deep.count("{") == limit + 1
    answer = await error_for(deep.encode(), max_depth=limit)
    assert (
        answer["error"]["code"] == -32600
        and answer["id"] == 9
        and "nested deeper than 64" in answer["error"]["message"]
    )


def test_the_shortest_value_nested_too_deep_with_objects_alone_is_found() -> None:
    """Without a `[`, a message is measured by its length before its brackets are counted:
    five bytes a level (`{"":` and `}`), the innermost `{}`; the shortest one too deep is found."""
    limit = 64
    text = '{"":' * limit + "{}" + "}" * limit
    assert len(text) == 5 * limit + 2
    value = json.loads(text)
    assert too_deep(text, value, limit) and too_deep(text.encode(), value, limit)
    assert not too_deep(text, value, limit + 1) and not too_deep(text.encode(), value, limit + 1)


JSON_VALUES = st.recursive(
    st.none() | st.integers() | st.text(alphabet='[]{}a\\"'),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(alphabet="[{a", max_size=2), children, max_size=3)
    ),
    max_leaves=40,
)


def _nesting(value: Any) -> int:
    if type(value) is dict:
        return 1 + max(map(_nesting, value.values()), default=0)
    if type(value) is list:
        return 1 + max(map(_nesting, value), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(value=JSON_VALUES, limit=st.integers(min_value=1, max_value=8), spaced=st.booleans())
def test_too_deep_answers_as_the_nesting_does(value: Any, limit: int, spaced: bool) -> None:
    """The depth check's filters never change its answer, in bytes and in text alike."""
    text = json.dumps(value) if spaced else json.dumps(value, separators=(",", ":"))
    expected = _nesting(value) > limit
    assert too_deep(text, value, limit) is expected
    assert too_deep(text.encode(), value, limit) is expected
