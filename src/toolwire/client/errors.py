"""What can go wrong for a client, as exceptions that say what happened.

Every error a :class:`~toolwire.client.Client` raises is a :class:`ClientError`. A server's
own JSON-RPC error is a :class:`ServerError` carrying its code, message and data; problems
found on this side (a server that exited, wrote garbage, answered an id nobody asked, took
too long, or broke its own output schema) have their own classes, so no problem ever shows
up as a hang.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import ToolwireError

if TYPE_CHECKING:
    from .types import CallToolResult


class ClientError(ToolwireError):
    """Base of every error the client raises."""


class ServerError(ClientError):
    """The server answered with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (error {code})")
        self.code = code
        self.message = message
        self.data = data


class ConnectionClosed(ClientError):
    """The server went away (exited, crashed, closed its output) before answering."""


class ProtocolViolation(ClientError):
    """The server sent something MCP does not allow: a line that is not JSON, an answer to an
    id no request has, a result of an unknown type."""


class RequestTimeout(ClientError):
    """No answer within the timeout (the request was cancelled on the server)."""


class ToolCallFailed(ClientError):
    """A tool answered with an execution error (``isError``), and the call asked to raise."""

    def __init__(self, result: CallToolResult) -> None:
        super().__init__(result.text or "the tool reported an error")
        self.result = result


class OutputSchemaMismatch(ClientError):
    """A successful result lacks the ``structuredContent`` its tool's ``outputSchema`` promises,
    or has one that does not match it."""


class ToolChanged(ClientError):
    """A tool's definition changed since it was approved (pinned): its description, schemas,
    annotations or title now differ. Approve it again to call it."""

    def __init__(self, name: str, fields: list[str]) -> None:
        super().__init__(f"tool {name!r} changed since it was approved: {', '.join(fields)}")
        self.name = name
        self.fields = fields


class VersionMismatch(ClientError):
    """The server speaks no protocol version this client does."""


#: The error code of a request that needed authorization which could not be had (an HTTP
#: server's OAuth, see :class:`toolwire.auth.OAuth`); the message says why.
AUTHORIZATION_FAILED = -32050
