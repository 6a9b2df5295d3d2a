"""What the connection sends: messages that say what they are, each with its encoded bytes.

Theory of operation
-------------------
Every message a :class:`~toolwire.protocol.connection.ServerConnection` produces for the
peer is one of three small objects, like h11's events:

* :class:`Answer` — the answer to request ``id``: a result (``code`` is ``None``) or an error
  (``code`` is its JSON-RPC code). It is final: nothing more is sent for that request.
  ``id`` is ``None`` for an error to a message whose id could not be read, and for the
  array that answers a 2025-03-26 batch (``batch`` is then true).
* :class:`Notification` — a notification (progress, log, list changed, ...).
* :class:`ServerRequest` — a request of the server's to the client (sampling, elicitation,
  roots), whose answer arrives as a :class:`~toolwire.protocol.connection.Response`.
* :class:`Relayed` — a notification or server request encoded elsewhere (by another replica
  of an HTTP server) and passed on as it is.

``data`` holds the message encoded once, exactly as it goes on the wire (with the stream's
terminator, when there is one). A transport that only moves bytes writes ``data``; one that
must know what a message is (HTTP: which answer ends a response, which status an error
gets) reads the object and never parses its own output again.

The objects are ``__slots__`` classes without ``__init__`` chains: making one costs about
what making a tuple does, once per message.
"""

from __future__ import annotations

from typing import ClassVar

RequestId = str | int


class Outgoing:
    """A message for the peer; ``data`` is its encoding on the wire."""

    __slots__ = ("data",)

    data: bytes
    #: Whether the message ends its request (an answer): nothing more is sent for it.
    final: ClassVar[bool] = False


class Answer(Outgoing):
    """The final answer to request ``id``: ``code`` is ``None`` for a result, else the
    JSON-RPC error code; ``batch``: the array answering a 2025-03-26 batch."""

    __slots__ = ("batch", "code", "id")

    def __init__(self, data: bytes, id: RequestId | None, code: int | None = None, batch: bool = False) -> None:
        self.data = data
        self.id = id
        self.code = code
        self.batch = batch

    final = True

    def __repr__(self) -> str:
        kind = "batch" if self.batch else ("result" if self.code is None else f"error {self.code}")
        return f"Answer({self.id!r}, {kind})"


class Notification(Outgoing):
    """A notification named ``method``."""

    __slots__ = ("method",)

    def __init__(self, data: bytes, method: str) -> None:
        self.data = data
        self.method = method

    def __repr__(self) -> str:
        return f"Notification({self.method!r})"


class ServerRequest(Outgoing):
    """A request of the server's, ``id`` (its answer is awaited), calling ``method``."""

    __slots__ = ("id", "method")

    def __init__(self, data: bytes, id: RequestId, method: str) -> None:
        self.data = data
        self.id = id
        self.method = method

    def __repr__(self) -> str:
        return f"ServerRequest({self.id!r}, {self.method!r})"


class Relayed(Outgoing):
    """A message another replica encoded, passed on for a stream held here: a notification or
    a server request, never an answer (answers go on their request's own stream). It is here,
    not with the replicas, because the compiled build's classes take no subclasses from
    modules that are not compiled (docs/performance.md, "The compiled build")."""

    __slots__ = ()

    def __init__(self, data: bytes) -> None:
        self.data = data
