"""JSON-RPC and MCP error codes, and the exception that carries one.

Every refusal the protocol layer makes is a :class:`ProtocolError`; the connection turns it
into an error response with the request's id (or ``null`` when the id could not be read).
"""

from __future__ import annotations

from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

#: 2025-11-25 and earlier: a resource that does not exist.
RESOURCE_NOT_FOUND = -32002
#: 2026-07-28: an HTTP header disagrees with the body.
HEADER_MISMATCH = -32020
#: 2026-07-28: the request needs a capability the client did not declare.
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
#: 2026-07-28: the requested protocol version is not served here.
UNSUPPORTED_PROTOCOL_VERSION = -32022
#: The codes only a server of the 2026-07-28 era answers with: a client that gets one knows
#: that it reached such a server (whose request it could not take as sent).
MODERN_ERRORS = frozenset({HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION})


class ProtocolError(Exception):
    """A JSON-RPC error to send back: ``code``, a one-sentence ``message``, optional ``data``."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def __repr__(self) -> str:
        return f"ProtocolError({self.code}, {self.message!r})"


def exception_text(exc: BaseException) -> str:
    """``Type: message`` of an unexpected exception, fit to tell a client: an ``OSError`` by
    its reason alone, since its file names are paths on the server (the log keeps them)."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{type(exc).__name__}: {exc.strerror}"
    return f"{type(exc).__name__}: {exc}"
