"""The client: connect to any MCP server (a command over stdio, or a toolwire Server in
memory), discover its tools and call them, in either protocol era."""

from .client import Client, fingerprint
from .errors import (
    ClientError,
    ConnectionClosed,
    OutputSchemaMismatch,
    ProtocolViolation,
    RequestTimeout,
    ServerError,
    ToolCallFailed,
    ToolChanged,
    VersionMismatch,
)
from .types import (
    AudioContent,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    ToolInfo,
    UnknownContent,
)

__all__ = [
    "AudioContent",
    "CallToolResult",
    "Client",
    "ClientError",
    "ConnectionClosed",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "OutputSchemaMismatch",
    "ProtocolViolation",
    "RequestTimeout",
    "ResourceLink",
    "ServerError",
    "TextContent",
    "ToolCallFailed",
    "ToolChanged",
    "ToolInfo",
    "UnknownContent",
    "VersionMismatch",
    "fingerprint",
]
