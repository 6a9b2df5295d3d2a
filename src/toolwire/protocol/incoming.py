"""What the connection hands the application: the typed events of messages received.

A :class:`Request` to answer (parsed once: method, id, params, version, the client's
capabilities), a :class:`Cancelled` request, a :class:`Response` to a request the server
sent; an :class:`~toolwire.protocol.outgoing.Answer` the connection made itself (an error,
or a handshake's result) is the fourth kind of :data:`Event`. The mirror of
:mod:`.outgoing`. Nothing here fails: the connection checked the messages before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .outgoing import Answer

if TYPE_CHECKING:
    from .codec import Codec

RequestId = str | int


class Request:
    """A request for the application to answer.

    ``codec`` renders results for the version this request speaks; ``capabilities`` are the
    client capabilities that apply to it (from its own ``_meta`` when modern, from the
    handshake when legacy); ``log_level`` is the minimum level to send log messages at, or
    ``None`` for none at all; ``auth``: the :class:`~toolwire.auth.Identity` of its caller,
    when the transport verified one; ``task``: the task it was answered with, once it
    became one (its work then goes on after the answer); ``claim``: the part of the
    extension that took the call over, if one did; ``target``: what the request
    names (the tool of a ``tools/call``...), once the server looked it up (``None``
    before, or when it names nothing known), so that checks and dispatch that follow
    read it instead of looking it up again.

    The request is parsed once: method, id, params, the version (``codec.version``) and
    the client's capabilities are read here, and everything after reads them from it.
    """

    __slots__ = (
        "auth",
        "batch",
        "cancelled",
        "capabilities",
        "claim",
        "client_info",
        "codec",
        "id",
        "log_level",
        "meta",
        "method",
        "params",
        "target",
        "task",
    )

    def __init__(
        self,
        id: RequestId,
        method: str,
        params: dict[str, Any],
        meta: Any,
        codec: Codec,
        capabilities: dict[str, Any],
        client_info: Any,
        log_level: str | None,
    ) -> None:
        self.id = id
        self.method = method
        self.params = params
        self.codec = codec
        self.capabilities = capabilities
        self.client_info = client_info
        self.log_level = log_level
        #: The request's ``_meta`` as sent (anything; usually absent: ``None``).
        self.meta = meta
        self.cancelled = False
        self.batch: Batch | None = None
        #: The caller's verified identity, set by a transport that authenticates (HTTP).
        self.auth: Any = None
        #: The task this call became (a :class:`~toolwire.tasks.manager.LiveTask`), if any.
        self.task: Any = None
        #: The extension's part in this call, when one took it over (a task's, say).
        self.claim: Any = None
        #: What the request names (a tool, prompt, resource), once looked up.
        self.target: Any = None

    @property
    def progress_token(self) -> Any:
        """The token the client asked progress notifications with, or ``None``."""
        meta = self.meta
        return meta.get("progressToken") if type(meta) is dict else None

    def __repr__(self) -> str:
        return f"Request({self.id!r}, {self.method!r}, {self.codec.version})"


class Cancelled:
    """The peer cancelled ``request``; its work should stop. ``flush``, when set, is to be
    written: the rest of a batch that was only waiting for the cancelled request."""

    __slots__ = ("flush", "reason", "request")

    def __init__(self, request: Request, reason: str | None) -> None:
        self.request = request
        self.reason = reason
        self.flush: Answer | None = None


class Response:
    """The peer's answer to a request we sent: exactly one of ``result`` and ``error``."""

    __slots__ = ("error", "id", "result")

    def __init__(self, id: RequestId, result: Any, error: dict[str, Any] | None) -> None:
        self.id = id
        self.result = result
        self.error = error


Event = Answer | Request | Cancelled | Response


class Batch:
    """Answers to a 2025-03-26 batch, held until every request in it has one."""

    __slots__ = ("answers", "pending")

    def __init__(self) -> None:
        self.pending = 0
        self.answers: list[dict[str, Any]] = []
