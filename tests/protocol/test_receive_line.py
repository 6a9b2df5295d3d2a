"""A stream's hot path (``ServerConnection.whole_lines`` and ``receive_line``) makes of every
line what ``receive_data`` makes of it: the same requests in flight, the same answers and
errors, for plain requests of both eras and for everything that needs the general way."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from toolwire import Server
from toolwire.protocol.connection import ServerConnection
from toolwire.protocol.incoming import Request

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
}
CALL = {"name": "echo", "arguments": {"text": "hi"}}


def line(message: Any) -> bytes:
    return orjson.dumps(message)


def request(id: Any, method: str = "tools/call", params: Any = CALL, **extra: Any) -> bytes:
    return line({"jsonrpc": "2.0", "id": id, "method": method, "params": params, **extra})


def deep(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = [value]
    return value


LINES = [
    request(1),
    request("a", params={**CALL, "_meta": {"progressToken": 7}}),
    request(2, params={**CALL, "_meta": MODERN_META}),
    request(3, "tools/list", {"_meta": MODERN_META}),
    request(4, "server/discover", {"_meta": MODERN_META}),
    request(5, params={**CALL, "_meta": {**MODERN_META, "io.modelcontextprotocol/logLevel": "debug"}}),
    request(6, params={**CALL, "_meta": {**MODERN_META, "io.modelcontextprotocol/logLevel": "loud"}}),
    request(7, params={**CALL, "_meta": {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "1999-01-01"}}),
    request(8, params={**CALL, "_meta": {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": []}}),
    request(9, "ping", {}),
    request(10, "logging/setLevel", {"level": "debug"}),
    request(11, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}),
    request(12, "subscriptions/listen", {}),
    request(13, "resources/subscribe", {"uri": "x:/", "_meta": MODERN_META}),
    request(1),  # in flight already
    request(True),
    request(None),
    request(14, params=[1]),
    request(15, params=None),
    request(16, params={**CALL, "_meta": "not an object"}),
    request(17, 42),
    line({"jsonrpc": "1.0", "id": 18, "method": "tools/call", "params": CALL}),
    line({"id": 19, "method": "tools/call", "params": CALL}),
    line({"jsonrpc": "2.0", "method": "tools/call", "params": CALL}),
    line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    line({"jsonrpc": "2.0", "id": 1, "result": {}}),
    line([orjson.loads(request(20)), orjson.loads(request(21))]),
    line([]),
    line("a string"),
    b"{not json",
    b"",
    b"   ",
    request(22, params={"name": "echo", "arguments": {"text": deep(70)}}),
    request(23, params={"name": "echo", "arguments": {"text": "x" * 2000}}),
]


def connection(initialized: bool, **options: Any) -> ServerConnection:
    made = Server("lines").connection()
    fresh = ServerConnection(made.identity, **options)
    if initialized:
        fresh.receive_data(request(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}) + b"\n")
    return fresh


def seen(events: Any) -> list[Any]:
    """What a list of events (or one request) says, comparable across connections."""
    if type(events) is Request:
        events = [events]
    said: list[Any] = []
    for event in events:
        if type(event) is Request:
            fields = ("id", "method", "params", "capabilities", "client_info", "log_level", "progress_token")
            said.append(("request", event.codec.version, *(getattr(event, name) for name in fields)))
        else:
            said.append((type(event).__name__, getattr(event, "data", None), getattr(event, "id", None)))
    return said


@pytest.mark.parametrize("initialized", [True, False], ids=["legacy session", "no handshake"])
def test_each_line_makes_what_receive_data_makes_of_it(initialized: bool) -> None:
    general, hot = connection(initialized), connection(initialized, max_message_bytes=1500)
    general.max_message_bytes = 1500
    for each in LINES:
        expected = seen(general.receive_data(each + b"\n"))
        assert seen(hot.receive_line(each)) == expected, each
        assert hot.in_flight.keys() == general.in_flight.keys()
        assert hot.log_level == general.log_level
        assert (hot.legacy and hot.legacy.version) == (general.legacy and general.legacy.version)


def test_a_plain_request_is_returned_alone_and_in_flight() -> None:
    hot = connection(True)
    made = hot.receive_line(request(1))
    assert type(made) is Request and hot.in_flight[1] is made
    modern = hot.receive_line(request(2, params={**CALL, "_meta": MODERN_META}))
    assert type(modern) is Request and modern.codec.version == "2026-07-28"
    assert modern.capabilities == {"sampling": {}}


def test_whole_lines_only_when_no_line_is_pending() -> None:
    hot = connection(True)
    assert hot.whole_lines(b"a\nb\n") == [b"a", b"b"]
    assert hot.whole_lines(b"\n") == [b""]
    assert hot.whole_lines(b"a\nb") is None  # ends inside a line
    assert hot.whole_lines(b"") is None
    hot.receive_data(b'{"jsonrpc":')  # a line begun
    assert hot.whole_lines(b"a\n") is None
    small = connection(True, max_message_bytes=10)
    small.receive_data(b"x" * 20)  # too large: the rest of its line is dropped
    assert small.whole_lines(b"a\n") is None
