"""The sans-IO connection on its own: framing, handshake, eras, ids, cancellation, batches."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from toolwire.protocol.codec import codec_for, object_output_schema
from toolwire.protocol.connection import ServerConnection
from toolwire.protocol.errors import ProtocolError
from toolwire.protocol.identity import ServerIdentity
from toolwire.protocol.incoming import Cancelled, Request, Response
from toolwire.protocol.outgoing import Answer, Notification, Outgoing, ServerRequest

IDENTITY = ServerIdentity({"name": "unit", "version": "0"}, {"tools": {"listChanged": True}}, "hi")


def line(message: Any) -> bytes:
    return orjson.dumps(message) + b"\n"


def initialized(version: str = "2025-11-25", **options: Any) -> ServerConnection:
    connection = ServerConnection(IDENTITY, **options)
    [answer] = connection.receive_data(
        line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": version}})
    )
    assert isinstance(answer, Answer) and answer.code is None
    return connection


def decode(event: Any) -> Any:
    assert isinstance(event, Outgoing)
    return orjson.loads(event.data)


def test_messages_split_across_reads_and_several_per_read() -> None:
    connection = initialized()
    data = line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}) + line(
        {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    )
    events: list[Any] = []
    for i in range(0, len(data), 5):
        events += connection.receive_data(data[i : i + 5])
    assert isinstance(events[0], Request) and events[0].method == "tools/list"
    assert decode(events[1]) == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_blank_lines_and_crlf_are_tolerated() -> None:
    connection = initialized()
    events = connection.receive_data(
        b"\n\r\n  \n" + orjson.dumps({"jsonrpc": "2.0", "id": 3, "method": "ping"}) + b"\r\n"
    )
    assert [decode(e)["id"] for e in events] == [3]


def test_an_oversized_line_streamed_without_newline_is_refused_once_then_skipped() -> None:
    connection = initialized(max_message_bytes=100)
    events = connection.receive_data(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * 150)
    assert decode(events[0])["error"]["code"] == -32600
    assert connection.receive_data(b"b" * 500) == []  # still the same message: no second error
    events = connection.receive_data(b'"}}\n' + line({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
    assert [decode(e)["id"] for e in events] == [2]


def test_responses_are_rendered_for_the_requests_version() -> None:
    connection = initialized("2025-06-18")
    [request] = connection.receive_data(
        line({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "x"}})
    )
    assert decode(connection.respond(request, {"content": []})) == {
        "jsonrpc": "2.0",
        "id": "a",
        "result": {"content": []},
    }
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    [modern] = connection.receive_data(
        line({"jsonrpc": "2.0", "id": "b", "method": "tools/call", "params": {"_meta": meta}})
    )
    result = decode(connection.respond(modern, {"content": []}))["result"]
    assert (
        result["resultType"] == "complete" and result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "unit"
    )


def test_answers_are_sent_once_and_ids_are_free_again_afterwards() -> None:
    connection = initialized()
    message = line({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})
    [request] = connection.receive_data(message)
    assert connection.respond(request, {"tools": []}) is not None
    assert connection.respond(request, {"tools": []}) is None
    [again] = connection.receive_data(message)
    assert isinstance(again, Request)


def test_cancellation_drops_everything_sent_for_the_request_afterwards() -> None:
    connection = initialized()
    [request] = connection.receive_data(
        line({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"_meta": {"progressToken": "t"}}})
    )
    assert request.progress_token == "t"
    [cancelled] = connection.receive_data(
        line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9, "reason": "stop"}})
    )
    assert isinstance(cancelled, Cancelled) and cancelled.request is request and cancelled.reason == "stop"
    assert connection.notify(request, "notifications/progress", {}) is None
    assert connection.respond(request, {"content": []}) is None
    # unknown, repeated or malformed cancellations are ignored
    for params in ({"requestId": 9}, {"requestId": 77}, {"requestId": [1]}, {}):
        assert (
            connection.receive_data(line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params}))
            == []
        )


@pytest.mark.parametrize("answer", ["respond", "respond_text", "respond_raw", "respond_error"])
def test_a_late_answer_to_a_cancelled_request_leaves_the_request_that_reused_its_id_in_flight(answer: str) -> None:
    # a client cancels request 9 and sends a new request 9; the first's work ends afterwards
    connection = initialized()
    call = line({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "slow"}})
    [first] = connection.receive_data(call)
    connection.receive_data(
        line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}})
    )
    [second] = connection.receive_data(call)
    late = {
        "respond": lambda request: connection.respond(request, {"content": []}),
        "respond_text": lambda request: connection.respond_text(request, "late"),
        "respond_raw": lambda request: connection.respond_raw(request, b'{"content":[]}'),
        "respond_error": lambda request: connection.respond_error(request, ProtocolError(-32603, "late")),
    }[answer]
    assert late(first) is None
    assert connection.in_flight == {9: second}
    assert decode(connection.respond_text(second, "on time"))["result"]["content"][0]["text"] == "on time"
    assert connection.in_flight == {}


def test_batch_answer_waits_for_every_request_and_cancelled_ones_are_left_out() -> None:
    connection = initialized("2025-03-26")
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call"},
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
    ]
    first, second = connection.receive_data(line(batch))
    assert connection.respond(first, {"content": []}) is None  # the batch is not complete yet
    [cancelled] = connection.receive_data(
        line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
    )
    answers = decode(cancelled.flush)
    assert sorted(a["id"] for a in answers) == [1, 3]
    assert connection.respond(second, {"content": []}) is None


def test_server_requests_and_their_answers() -> None:
    connection = initialized()
    asked = connection.send_request("elicitation/create", {"message": "?"})
    assert isinstance(asked, ServerRequest) and asked.method == "elicitation/create"
    id = asked.id
    assert decode(asked)["method"] == "elicitation/create"
    [response] = connection.receive_data(line({"jsonrpc": "2.0", "id": id, "result": {"action": "cancel"}}))
    assert isinstance(response, Response) and response.result == {"action": "cancel"} and response.error is None
    # an answer to nothing we asked is dropped
    assert connection.receive_data(line({"jsonrpc": "2.0", "id": 999, "result": {}})) == []


def test_notifications_initialized_is_recorded() -> None:
    connection = initialized()
    assert not connection.initialized
    connection.receive_data(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    assert connection.initialized


@pytest.mark.parametrize(
    ("schema", "wrapped"),
    [
        ({"type": "object", "properties": {}}, False),
        ({"type": "integer"}, True),
        ({"type": "array", "items": {"$ref": "#/$defs/P"}, "$defs": {"P": {"type": "object"}}}, True),
    ],
)
def test_output_schemas_are_objects_for_legacy_versions(schema: dict[str, Any], wrapped: bool) -> None:
    rendered = object_output_schema(schema)
    assert rendered["type"] == "object"
    if wrapped:
        assert rendered["required"] == ["result"]
        assert "$defs" not in rendered["properties"]["result"]
        assert ("$defs" in rendered) == ("$defs" in schema)
    else:
        assert rendered is schema


def test_codec_leaves_fields_out_per_version() -> None:
    tool = {
        "name": "t",
        "title": "T",
        "description": "d",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "string"},
        "annotations": {"readOnlyHint": True},
        "icons": [{"src": "https://x/i.png"}],
        "_meta": {"k": 1},
    }
    assert set(codec_for("2024-11-05").tool(tool)) == {"name", "description", "inputSchema"}
    assert codec_for("2025-03-26").tool(tool)["annotations"] == {"title": "T", "readOnlyHint": True}
    assert codec_for("2025-06-18").tool(tool)["outputSchema"]["properties"]["result"] == {"type": "string"}
    assert codec_for("2026-07-28").tool(tool) == tool


def test_outgoing_messages_say_what_they_are() -> None:
    connection = initialized()
    [request] = connection.receive_data(line({"jsonrpc": "2.0", "id": "a", "method": "tools/call"}))
    answer = connection.respond(request, {"content": []})
    assert isinstance(answer, Answer) and answer.final and answer.id == "a" and answer.code is None
    assert not answer.batch and answer.data.endswith(b"\n")
    [request] = connection.receive_data(line({"jsonrpc": "2.0", "id": 5, "method": "tools/call"}))
    error = connection.respond_error(request, ProtocolError(-32602, "Invalid params: no"))
    assert isinstance(error, Answer) and error.id == 5 and error.code == -32602
    assert decode(error)["error"] == {"code": -32602, "message": "Invalid params: no"}
    [refused] = connection.receive_data(b"{not json\n")
    assert isinstance(refused, Answer) and refused.id is None and refused.code == -32700
    [request] = connection.receive_data(line({"jsonrpc": "2.0", "id": 6, "method": "tools/call"}))
    notice = connection.notify(request, "notifications/progress", {"progress": 1})
    assert isinstance(notice, Notification) and not notice.final and notice.method == "notifications/progress"


def test_a_batch_is_answered_with_one_answer_marked_as_a_batch() -> None:
    connection = initialized("2025-03-26")
    first, second = connection.receive_data(
        line([{"jsonrpc": "2.0", "id": 1, "method": "tools/call"}, {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}])
    )
    assert connection.respond(first, {"content": []}) is None
    answer = connection.respond_error(second, ProtocolError(-32602, "Invalid params: no"))
    assert isinstance(answer, Answer) and answer.batch and answer.id is None and answer.code is None
    assert [item["id"] for item in decode(answer)] == [1, 2]


def test_a_transport_cancels_a_request_by_calling_the_connection() -> None:
    connection = initialized()
    [request] = connection.receive_data(line({"jsonrpc": "2.0", "id": 4, "method": "tools/call"}))
    cancelled = connection.cancel(4, "the client went away")
    assert (
        isinstance(cancelled, Cancelled) and cancelled.request is request and cancelled.reason == "the client went away"
    )
    assert connection.cancel(4) is None  # no longer in flight
    assert connection.respond(request, {"content": []}) is None


def test_adopting_a_version_serves_requests_without_a_handshake() -> None:
    connection = ServerConnection(IDENTITY)
    connection.adopt("2025-06-18", {}, None)
    [request] = connection.receive_data(line({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
    assert isinstance(request, Request) and request.codec.version == "2025-06-18"


TEXTS = ("echo", "", 'quotes " and \\ backslashes, é, \u2028, \U0001f600, a\nnewline')


def _requests(connection: ServerConnection, version: str, ids: list[Any]) -> list[Request]:
    meta = {"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": {}}
    params = {"name": "echo", "_meta": meta} if version == "2026-07-28" else {"name": "echo"}
    events = connection.receive_data(
        b"".join(line({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}) for id in ids)
    )
    assert all(type(event) is Request for event in events)
    return events


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("terminator", [b"\n", b""])
def test_a_text_answer_is_the_same_bytes_as_the_result_it_stands_for(version: str, terminator: bytes) -> None:
    written, made = ServerConnection(IDENTITY, terminator=terminator), ServerConnection(IDENTITY, terminator=terminator)
    for connection in (written, made):
        if version != "2026-07-28":
            connection.adopt(version, {}, None)
    ids: list[Any] = [1, 'x"y', -7, 2**40]
    for text in TEXTS:
        for as_text, as_result in zip(_requests(written, version, ids), _requests(made, version, ids), strict=True):
            answer = written.respond_text(as_text, text)
            expected = made.respond(as_result, {"content": [{"type": "text", "text": text}]})
            assert answer is not None and expected is not None
            assert (answer.data, answer.id, answer.code) == (expected.data, expected.id, expected.code)


def test_a_text_answer_keeps_the_rules_of_answers() -> None:
    connection = initialized("2025-03-26")
    [request] = _requests(connection, "2025-03-26", [1])
    with pytest.raises(TypeError):  # a lone surrogate: JSON cannot carry it
        connection.respond_text(request, "\ud800")
    assert 1 in connection.in_flight  # still unanswered, for the error answer
    assert connection.respond_text(request, "once") is not None
    assert connection.respond_text(request, "twice") is None  # answered already
    [cancelled] = _requests(connection, "2025-03-26", [2])
    connection.cancel(2)
    assert connection.respond_text(cancelled, "late") is None
    [first, second] = connection.receive_data(
        line([{"jsonrpc": "2.0", "id": n, "method": "tools/call"} for n in (3, 4)])
    )
    assert connection.respond_text(first, "a") is None  # the batch waits for its other request
    batch = connection.respond_text(second, "b")
    assert batch is not None and batch.batch
    assert orjson.loads(batch.data) == [
        {"jsonrpc": "2.0", "id": n, "result": {"content": [{"type": "text", "text": text}]}}
        for n, text in ((3, "a"), (4, "b"))
    ]
