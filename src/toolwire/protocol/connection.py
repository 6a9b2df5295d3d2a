"""The server side of one MCP connection, free of I/O.

Theory of operation
-------------------
A transport feeds the bytes it reads to :meth:`ServerConnection.receive_data` (a stream of
newline-delimited messages, as on stdio) or :meth:`ServerConnection.receive_message` (one
whole message, as in an HTTP body). Each call returns a list of *events*
(:mod:`toolwire.protocol.incoming`):

* :class:`~toolwire.protocol.outgoing.Answer` — an answer to write to the peer now (an
  error, the ``initialize`` answer, ``ping``'s, ...);
* :class:`Request` — a request the application must answer, later, with :meth:`respond`,
  :meth:`respond_raw` or :meth:`respond_error`;
* :class:`Cancelled` — the peer cancelled a request still in flight: stop its work; whatever
  is sent for it from now on is dropped here;
* :class:`Response` — the peer answered a request we sent with :meth:`send_request`.

Whatever the connection produces for the peer says what it is (see
:mod:`toolwire.protocol.outgoing`): :meth:`respond` and the rest return an
:class:`Answer`, a :class:`Notification` or a :class:`ServerRequest`, each with its bytes.

The connection owns everything that is protocol rather than application: framing and size
limits, JSON-RPC validation, the legacy ``initialize`` handshake and version negotiation,
modern per-request ``_meta`` checks, ``ping``, ``logging/setLevel``, in-flight id
bookkeeping, cancellation and 2025-03-26 batches. It never blocks, never awaits and never
looks at a clock; one process may hold many connections (one per stdio pipe or HTTP session).

Both eras live on one connection: a request whose ``_meta`` names a protocol version is
served statelessly in that version; any other request is served in the version the
``initialize`` handshake chose, and refused before the handshake. What the server says
about itself in the handshake and in ``server/discover`` is its
:class:`~toolwire.protocol.identity.ServerIdentity`.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from .codec import LOG_SEVERITY, MODERN_CODECS, Codec, codec_for
from .errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    ProtocolError,
)
from .identity import ServerIdentity
from .incoming import Batch, Cancelled, Event, Request, RequestId, Response
from .outgoing import Answer, Notification, ServerRequest
from .versions import (
    LEGACY_VERSIONS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    MODERN_VERSIONS,
    SUPPORTED_VERSIONS,
    negotiate_legacy,
)

#: Methods that exist in one era only; the other era gets ``-32601``. These are the
#: standard methods' rules; a server passes those of its dispatch table (which may hold
#: more methods) to each connection it makes.
MODERN_ONLY_METHODS = frozenset({"server/discover", "subscriptions/listen"})
LEGACY_ONLY_METHODS = frozenset(
    {
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
    }
)

#: Answered in any state, without ``_meta``: they open or probe a legacy session.
_HANDSHAKE_METHODS: Final = frozenset({"initialize", "ping"})

#: orjson's two, bound once (Final: the compiled build calls them without looking them up).
_loads: Final = orjson.loads
_dumps: Final = orjson.dumps

DEFAULT_MAX_MESSAGE_BYTES = 4 * 1024 * 1024
_NOT_DECODED: Final[Any] = object()
#: ``[`` as bytes hold it (see :func:`too_deep`).
_OPEN_SQUARE: Final = ord("[")
DEFAULT_MAX_DEPTH = 64
#: A ``tools/call`` answer of one text block in pieces (see :meth:`ServerConnection.respond_text`):
#: its start, and what comes between its id and its text (its end after the text is the
#: server identity's :meth:`~.identity.ServerIdentity.text_end`).
_TEXT_ANSWER: Final = (b'{"jsonrpc":"2.0","id":', b',"result":{"content":[{"type":"text","text":')


class ServerConnection:
    """Protocol state of one server connection (a stdio pipe pair or an HTTP session).

    ``terminator`` ends every message written (``b"\\n"`` for stdio); ``max_message_bytes``
    and ``max_depth`` bound what a peer may send: larger or deeper messages are refused with
    ``-32600`` and the connection goes on. ``legacy_only`` and ``modern_only``: the methods
    that exist in one era only (the server's dispatch table says which), refused with
    ``-32601`` in the other.
    """

    def __init__(
        self,
        identity: ServerIdentity,
        *,
        terminator: bytes = b"\n",
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        max_depth: int = DEFAULT_MAX_DEPTH,
        legacy_only: frozenset[str] = LEGACY_ONLY_METHODS,
        modern_only: frozenset[str] = MODERN_ONLY_METHODS,
    ) -> None:
        if terminator not in (b"\n", b""):
            raise ValueError('terminator must be b"\\n" (streams) or b"" (whole messages)')
        self.identity = identity
        self.terminator = terminator
        self._encoding = orjson.OPT_APPEND_NEWLINE if terminator else 0
        self.max_message_bytes = max_message_bytes
        self.max_depth = max_depth
        self.legacy_only = legacy_only
        self.modern_only = modern_only
        #: Methods whose requests need the connection's own handling, by era (see :meth:`receive_line`).
        self._legacy_own = modern_only | _HANDSHAKE_METHODS | {"logging/setLevel"}
        self._modern_own = legacy_only | {"server/discover"}
        #: The codec the handshake chose, or ``None`` before (and without) one.
        self.legacy: Codec | None = None
        self.client_capabilities: dict[str, Any] = {}
        self.client_info: Any = None
        self.initialized = False
        self.log_level = "info"
        self.in_flight: dict[RequestId, Request] = {}
        self._buffer = bytearray()
        self._discarding = False
        self._next_request_id = 0
        self._awaiting: set[RequestId] = set()

    # -- input -----------------------------------------------------------------------------

    def receive_data(self, data: bytes) -> list[Event]:
        """Feed bytes from a newline-delimited stream; returns the events they complete."""
        lines = data.split(b"\n")  # in C: the whole lines, then the start of one still to come
        tail = lines.pop()
        buffer = self._buffer
        events: list[Event] = []
        if lines:
            if buffer:  # the line began in earlier reads
                buffer += lines[0]
                lines[0] = bytes(buffer)
                buffer.clear()
            if self._discarding:  # the end of a message too large: dropped with it
                self._discarding = False
                del lines[0]
            limit = self.max_message_bytes
            for line in lines:
                if len(line) > limit:
                    events.append(self._too_large(len(line)))
                else:
                    self._parse(line, events, blank_ok=True)
        if self._discarding:
            return events
        buffer += tail
        if len(buffer) > self.max_message_bytes:
            events.append(self._too_large(len(buffer)))
            self._discarding = True
            buffer.clear()
        return events

    def whole_lines(self, data: bytes) -> list[bytes] | None:
        """``data``'s lines, when it ends a line and no line began in an earlier read: each
        line then goes to :meth:`receive_line`, which makes of it what :meth:`receive_data`
        would. ``None`` otherwise: feed ``data`` to :meth:`receive_data`."""
        if data[-1:] != b"\n" or self._buffer or self._discarding:
            return None
        lines = data.split(b"\n")
        lines.pop()  # the empty rest after the last newline
        return lines

    def receive_line(self, line: bytes) -> Request | list[Event]:
        """One whole line of the stream (see :meth:`whole_lines`): the request it puts in
        flight, when it is a request that passes every check and needs nothing of the
        connection's own (no handshake, no log level, no discovery); else the events the
        line makes. Either way what :meth:`receive_data` would make of it: this is a
        stream's hot path, the checks of :meth:`_receive` that a plain request passes, in
        one place; anything else takes the general way."""
        size = len(line)
        if size > self.max_message_bytes:
            return [self._too_large(size)]
        try:
            message = _loads(line)
        except orjson.JSONDecodeError:
            message = _NOT_DECODED  # the general way says why (or nothing, for a blank line)
        else:
            depth = self.max_depth
            # too_deep's first filter, inlined: a line holding no `[` nests too deep only when long
            filtered = size > 2 * depth and (_OPEN_SQUARE in line or size >= 5 * depth + 2)
            if filtered and too_deep(line, message, depth):
                message = _NOT_DECODED  # the general way refuses it
        if type(message) is dict and message.get("jsonrpc") == "2.0":
            method = message.get("method")
            params = message.get("params")
            id = message.get("id")
            if type(method) is str and type(params) is dict and (type(id) is int or type(id) is str):
                meta = params.get("_meta")
                version = meta.get(META_PROTOCOL_VERSION) if type(meta) is dict else None
                request: Request
                if version is None:  # _receive's legacy request, for a method the connection does not answer itself
                    codec = self.legacy
                    if codec is not None and method not in self._legacy_own and id not in self.in_flight:
                        request = Request(
                            id, method, params, meta, codec, self.client_capabilities, self.client_info, self.log_level
                        )
                        self.in_flight[id] = request
                        return request
                elif type(version) is str:  # _modern_request's request, without a log level
                    codec = MODERN_CODECS.get(version)
                    if (
                        codec is not None
                        and method not in self._modern_own
                        and meta.get(META_LOG_LEVEL) is None  # type: ignore[union-attr]
                        and id not in self.in_flight
                    ):
                        capabilities = meta.get(META_CLIENT_CAPABILITIES)  # type: ignore[union-attr]
                        if type(capabilities) is dict:
                            client_info = meta.get(META_CLIENT_INFO)  # type: ignore[union-attr]
                            request = Request(id, method, params, meta, codec, capabilities, client_info, None)
                            self.in_flight[id] = request
                            return request
        events: list[Event] = []
        self._parse(line, events, blank_ok=True, decoded=message)  # the general way, its checks in full
        return events

    def receive_message(self, data: bytes | str, decoded: Any = _NOT_DECODED) -> list[Event]:
        """Feed one whole message (a JSON-RPC object, or a batch array where allowed).
        ``decoded``: the message already decoded from ``data`` and its depth checked against
        the limit (a transport that had to look inside it first), so that neither is done twice."""
        if len(data) > self.max_message_bytes:
            return [self._too_large(len(data))]
        events: list[Event] = []
        self._parse(data, events, blank_ok=False, decoded=decoded)
        return events

    def _parse(self, data: bytes | str, events: list[Event], blank_ok: bool, decoded: Any = _NOT_DECODED) -> None:
        """Add the events of one message to ``events``."""
        try:
            message = _loads(data) if decoded is _NOT_DECODED else decoded
        except orjson.JSONDecodeError as invalid:
            if not (blank_ok and not data.strip()):  # blank lines between messages are tolerated
                events.append(self._error(None, PARSE_ERROR, f"Parse error: the message is not valid JSON ({invalid})"))
            return
        if decoded is _NOT_DECODED and len(data) > 2 * self.max_depth and too_deep(data, message, self.max_depth):
            problem = f"Invalid Request: JSON nested deeper than {self.max_depth} levels"
            events.append(self._error(_id_of(message), INVALID_REQUEST, problem))
            return
        try:
            if type(message) is list:
                events += self._receive_batch(message)
                return
            event = self._receive(message, None)
        except ProtocolError as exc:
            event = self._error(_id_of(message), exc.code, exc.message, exc.data)
        except Exception as unexpected:  # a check we lack must cost this message only, never the stream
            problem = f"Internal error: the message could not be handled ({type(unexpected).__name__}: {unexpected})"
            event = self._error(_id_of(message), INTERNAL_ERROR, problem)
        if event is not None:
            events.append(event)

    def _receive_batch(self, messages: list[Any]) -> list[Event]:
        codec = self.legacy
        if codec is None or not codec.batches:
            version = codec.version if codec else "this connection's protocol version"
            return [
                self._error(
                    None,
                    INVALID_REQUEST,
                    f"Invalid Request: batches are not allowed in {version}",
                )
            ]
        if not messages:
            return [self._error(None, INVALID_REQUEST, "Invalid Request: empty batch")]
        batch = Batch()
        events: list[Event] = []
        for message in messages:
            try:
                event = self._receive(message, batch)
            except ProtocolError as exc:
                batch.answers.append(_error_message(_id_of(message), exc.code, exc.message, exc.data))
                continue
            if isinstance(event, Request):
                event.batch = batch
                batch.pending += 1
                events.append(event)
            elif type(event) is Answer:
                batch.answers.append(_loads(event.data))
            elif event is not None:
                events.append(event)
        if batch.pending == 0 and batch.answers:
            events.append(self._batch_answer(batch.answers))
        return events

    def _receive(self, message: Any, batch: Batch | None) -> Event | None:
        """The event one message makes (a request is then in flight); ``ProtocolError`` for
        a message the specification refuses."""
        if type(message) is not dict:
            raise ProtocolError(INVALID_REQUEST, "Invalid Request: a message must be a JSON object")
        if message.get("jsonrpc") != "2.0":
            raise ProtocolError(INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
        method = message.get("method")
        if method is None:
            return self._receive_response(message)
        if type(method) is not str:
            raise ProtocolError(INVALID_REQUEST, 'Invalid Request: "method" must be a string')
        params = message.get("params")
        if params is None:
            params = {}
        elif type(params) is not dict:
            if "id" not in message:
                return None  # a notification is never answered, not even with an error
            raise ProtocolError(INVALID_PARAMS, 'Invalid params: "params" must be an object')
        if "id" not in message:
            return self._receive_notification(method, params)
        id = message["id"]
        if type(id) is not str and type(id) is not int:
            raise ProtocolError(INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer')
        if id in self.in_flight:
            raise ProtocolError(
                INVALID_REQUEST,
                f"Invalid Request: id {id!r} is already used by a request in flight",
            )
        meta = params.get("_meta")
        version = meta.get(META_PROTOCOL_VERSION) if type(meta) is dict else None
        if version is not None:
            return self._modern_request(id, method, params, meta, version)  # type: ignore[arg-type]
        if method in _HANDSHAKE_METHODS:
            if method == "ping":
                return self._result(id, {})
            if batch is not None:
                raise ProtocolError(INVALID_REQUEST, "Invalid Request: initialize must not be batched")
            return self._initialize(id, params)
        codec = self.legacy
        if codec is None:
            raise ProtocolError(
                INVALID_PARAMS,
                f"Invalid params: {method!r} needs either an initialize handshake first (protocol "
                f"2025-11-25 and earlier) or _meta[{META_PROTOCOL_VERSION!r}] on the request (2026-07-28)",
            )
        if method in self.modern_only:
            raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method} does not exist in {codec.version}")
        if method == "logging/setLevel":
            self.log_level = _log_level(params.get("level"))
            return self._result(id, {})
        request = Request(id, method, params, meta, codec, self.client_capabilities, self.client_info, self.log_level)
        self.in_flight[id] = request
        return request

    def _modern_request(
        self,
        id: RequestId,
        method: str,
        params: dict[str, Any],
        meta: dict[str, Any],
        version: Any,
    ) -> Request | Answer:
        if version not in MODERN_VERSIONS:
            hint = " (a legacy version: open with initialize instead)" if version in LEGACY_VERSIONS else ""
            raise ProtocolError(
                UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version: {version!r}{hint}",
                {"supported": list(SUPPORTED_VERSIONS), "requested": version if type(version) is str else str(version)},
            )
        capabilities = meta.get(META_CLIENT_CAPABILITIES)
        if type(capabilities) is not dict:
            raise ProtocolError(
                INVALID_PARAMS,
                f"Invalid params: _meta[{META_CLIENT_CAPABILITIES!r}] must be an object",
            )
        level = meta.get(META_LOG_LEVEL)
        if level is not None:
            level = _log_level(level)
        if method in self.legacy_only:
            raise ProtocolError(METHOD_NOT_FOUND, f"Method not found: {method} does not exist in {version}")
        codec = codec_for(version)
        if method == "server/discover":
            return self._result(id, self._discover(codec))
        request = Request(id, method, params, meta, codec, capabilities, meta.get(META_CLIENT_INFO), level)
        self.in_flight[id] = request
        return request

    def _initialize(self, id: RequestId, params: dict[str, Any]) -> Answer:
        if self.legacy is not None:
            raise ProtocolError(INVALID_REQUEST, "Invalid Request: this connection is already initialized")
        capabilities = params.get("capabilities", {})
        if type(capabilities) is not dict:
            raise ProtocolError(INVALID_PARAMS, 'Invalid params: "capabilities" must be an object')
        codec = self.legacy = codec_for(negotiate_legacy(params.get("protocolVersion")))
        self.client_capabilities = capabilities
        self.client_info = params.get("clientInfo")
        identity = self.identity
        result: dict[str, Any] = {
            "protocolVersion": codec.version,
            "capabilities": identity.capabilities_in(codec),
            "serverInfo": identity.info,
        }
        if identity.instructions:
            result["instructions"] = identity.instructions
        return self._result(id, result)

    def adopt(self, version: str, capabilities: dict[str, Any], client_info: Any) -> None:
        """Take up a session whose ``initialize`` another process answered (a replica): as if
        this connection had. ``KeyError`` for a version not served here."""
        self.legacy = codec_for(version)
        self.client_capabilities = capabilities
        self.client_info = client_info
        self.initialized = True

    def _discover(self, codec: Codec) -> dict[str, Any]:
        identity = self.identity
        result: dict[str, Any] = {
            "supportedVersions": list(SUPPORTED_VERSIONS),
            "capabilities": identity.capabilities_in(codec),
        }
        if identity.instructions:
            result["instructions"] = identity.instructions
        codec.cacheable(result, identity.ttl_ms, identity.cache_scope)
        return codec.finish(result, identity.info)

    def _receive_notification(self, method: str, params: dict[str, Any]) -> Event | None:
        if method == "notifications/cancelled":
            id = params.get("requestId")
            if type(id) is not str and type(id) is not int:
                return None
            reason = params.get("reason")
            return self.cancel(id, reason if type(reason) is str else None)
        if method == "notifications/initialized":
            self.initialized = True
        return None  # other notifications carry nothing the protocol layer acts on

    def cancel(self, id: RequestId, reason: str | None = None) -> Cancelled | None:
        """Cancel request ``id`` as the peer's ``notifications/cancelled`` does (a transport
        whose client went away calls it): its event, or ``None`` when no such request is in
        flight (unknown or already answered)."""
        request = self.in_flight.pop(id, None)
        if request is None:
            return None  # unknown or finished: ignored, as the spec allows
        request.cancelled = True
        cancelled = Cancelled(request, reason)
        batch = request.batch
        if batch is not None:
            batch.pending -= 1
            if batch.pending == 0 and batch.answers:
                cancelled.flush = self._batch_answer(batch.answers)
        return cancelled

    def _receive_response(self, message: dict[str, Any]) -> Response | None:
        id = message.get("id")
        if ("result" in message) == ("error" in message) or id is None:
            raise ProtocolError(INVALID_REQUEST, "Invalid Request: neither a request, a notification nor a response")
        if type(id) is not int and type(id) is not str:
            raise ProtocolError(INVALID_REQUEST, 'Invalid Request: a response\'s "id" must be a string or an integer')
        if id not in self._awaiting:
            return None  # an answer to nothing we asked: dropped
        self._awaiting.discard(id)
        error = message.get("error")
        if error is not None and type(error) is not dict:
            error = {"code": INVALID_REQUEST, "message": "malformed error object"}
        return Response(id, message.get("result"), error)

    # -- output ----------------------------------------------------------------------------

    def respond(self, request: Request, result: dict[str, Any]) -> Answer | None:
        """The answer to ``request``, rendered for its version; ``None`` if nothing is to be
        sent (the request was cancelled, or is part of a batch still being answered).
        ``TypeError`` for a result JSON cannot carry (a set, bytes, an integer past 64 bits,
        nesting past orjson's depth): the request stays unanswered, for an error answer."""
        codec = request.codec
        if codec.modern:
            result = codec.finish(result, self.identity.info)
        message = {"jsonrpc": "2.0", "id": request.id, "result": result}
        data = _dumps(message, option=self._encoding)  # before the request counts as answered
        if request.batch is not None:
            return self._answer(request, message)
        if request.cancelled or self.in_flight.get(request.id) is not request:  # _answer's, inlined
            return None
        del self.in_flight[request.id]
        return Answer(data, request.id)

    def respond_text(self, request: Request, text: str) -> Answer | None:
        """:meth:`respond` with a tool's result of one text block, ``text``: the answer is
        written as bytes around the text's encoding, without the result's dictionaries (the
        same bytes). ``TypeError`` for a text JSON cannot carry (a lone surrogate), as there."""
        if request.batch is not None:
            return self.respond(request, {"content": [{"type": "text", "text": text}]})
        data = self.text_answer(request, text)
        return None if data is None else Answer(data, request.id)

    def text_answer(self, request: Request, text: str) -> bytes | None:
        """The bytes of :meth:`respond_text`'s answer to ``request``, which is not part of a
        batch; ``None`` and ``TypeError`` as there."""
        encoded = _dumps(text)  # before the request counts as answered
        identity = self.identity
        tail = identity.text_ends.get(request.codec.version) or identity.text_end(request.codec)
        if request.cancelled or self.in_flight.get(request.id) is not request:  # _answer's, inlined
            return None
        del self.in_flight[request.id]
        start, text_start = _TEXT_ANSWER  # joined: cheaper than a bytes template's `%`
        return b"".join((start, _dumps(request.id), text_start, encoded, tail, self.terminator))

    def respond_raw(self, request: Request, result_json: bytes) -> Answer | None:
        """Like :meth:`respond` with a result already finished and encoded (cached pages)."""
        if request.batch is not None:
            return self.respond(request, _loads(result_json))
        if request.cancelled or self.in_flight.get(request.id) is not request:
            return None
        del self.in_flight[request.id]
        return Answer(
            b'{"jsonrpc":"2.0","id":' + _dumps(request.id) + b',"result":' + result_json + b"}" + self.terminator,
            request.id,
        )

    def respond_error(self, request: Request, error: ProtocolError) -> Answer | None:
        """An error answer to ``request``; ``None`` as for :meth:`respond`."""
        return self._answer(request, _error_message(request.id, error.code, error.message, error.data), error.code)

    def notify(self, request: Request | None, method: str, params: dict[str, Any]) -> Notification | None:
        """A notification, on behalf of ``request`` when given (dropped once it was cancelled
        or answered: nothing more is sent for a finished request)."""
        if request is not None and (request.cancelled or request.id not in self.in_flight):
            return None
        return Notification(self._encode({"jsonrpc": "2.0", "method": method, "params": params}), method)

    def send_request(self, method: str, params: dict[str, Any]) -> ServerRequest:
        """A request to the client (legacy era only); its answer arrives as a :class:`Response`."""
        self._next_request_id += 1
        id = self._next_request_id
        self._awaiting.add(id)
        message = {"jsonrpc": "2.0", "id": id, "method": method, "params": params}
        return ServerRequest(self._encode(message), id, method)

    def forget_request(self, id: RequestId) -> None:
        """Stop waiting for the answer to a request we sent (it timed out or was abandoned)."""
        self._awaiting.discard(id)

    def wants_log(self, request: Request | None, level: str) -> bool:
        """Whether a log message at ``level`` may be sent for ``request``."""
        threshold = self.log_level if request is None else request.log_level
        return threshold is not None and LOG_SEVERITY[level] >= LOG_SEVERITY[threshold]

    def _answer(self, request: Request, message: dict[str, Any], code: int | None = None) -> Answer | None:
        if request.cancelled or self.in_flight.get(request.id) is not request:
            return None
        del self.in_flight[request.id]
        batch = request.batch
        if batch is None:
            return Answer(_dumps(message, option=self._encoding), request.id, code)
        batch.answers.append(message)
        batch.pending -= 1
        return self._batch_answer(batch.answers) if batch.pending == 0 else None

    def _batch_answer(self, answers: list[dict[str, Any]]) -> Answer:
        return Answer(self._encode(answers), None, None, True)

    def _encode(self, message: Any) -> bytes:
        return _dumps(message, option=self._encoding)

    def _result(self, id: RequestId, result: dict[str, Any]) -> Answer:
        return Answer(self._encode({"jsonrpc": "2.0", "id": id, "result": result}), id)

    def _error(self, id: Any, code: int, message: str, data: Any = None) -> Answer:
        return Answer(self._encode(_error_message(id, code, message, data)), id, code)

    def _too_large(self, size: int) -> Answer:
        return self._error(
            None,
            INVALID_REQUEST,
            f"Invalid Request: message of {size} bytes exceeds the limit of {self.max_message_bytes} bytes",
        )


def _error_message(id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": error}


def _id_of(message: Any) -> RequestId | None:
    """The id to answer an invalid message with: its own when readable, else ``None``."""
    if type(message) is dict:
        id = message.get("id")
        if type(id) is str or type(id) is int:
            return id
    return None


def _log_level(level: Any) -> str:
    if type(level) is not str or level not in LOG_SEVERITY:
        raise ProtocolError(
            INVALID_PARAMS,
            f"Invalid params: log level must be one of {', '.join(LOG_SEVERITY)}, not {level!r}",
        )
    return level


def too_deep(data: bytes | str, message: Any, limit: int) -> bool:
    """Whether ``message`` (decoded from ``data``) nests deeper than ``limit`` containers."""
    if len(data) <= 2 * limit:  # a list takes two bytes a level: `[` and `]`
        return False
    # fast, C-speed filters first: most messages are too short or hold too few brackets to
    # need the walk. Without a `[` only objects nest, and an object takes five bytes a level
    # (`{"":` and `}`), the innermost two: no need to count. For bytes the `[` is looked for
    # as an integer: that is memchr at once, where a bytes needle (`in`) is first tried as an
    # integer, raising and clearing a TypeError, and `find` parses its arguments as a tuple.
    if isinstance(data, str):
        if "[" not in data:
            return len(data) >= 5 * limit + 2 and data.count("{") > limit and _depth(message, limit)
        brackets = data.count("[") + data.count("{")
    else:
        if _OPEN_SQUARE not in data:
            return len(data) >= 5 * limit + 2 and data.count(b"{") > limit and _depth(message, limit)
        brackets = data.count(b"[") + data.count(b"{")
    return brackets > limit and _depth(message, limit)


def _depth(value: Any, limit: int) -> bool:
    """Whether ``value`` nests deeper than ``limit`` containers (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if type(item) is dict:
            stack += [(child, depth + 1) for child in item.values() if type(child) in (dict, list)]
        elif type(item) is list:
            stack += [(child, depth + 1) for child in item if type(child) in (dict, list)]
    return False
