"""The client: connect to any MCP server (a command over stdio, or a toolwire Server in
memory), discover its tools and call them, read its resources and get its prompts, in
either protocol era."""

from .client import Client
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
from .pinning import fingerprint
from .skills import LoadedSkill, SkillEntry, SkillFile, SkillVerificationFailed
from .tasks import TaskCancelled, TaskHandle, TaskInfo
from .types import (
    AudioContent,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    PromptInfo,
    PromptMessage,
    ResourceContents,
    ResourceInfo,
    ResourceLink,
    ResourceTemplateInfo,
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
    "GetPromptResult",
    "ImageContent",
    "LoadedSkill",
    "OutputSchemaMismatch",
    "PromptInfo",
    "PromptMessage",
    "ProtocolViolation",
    "RequestTimeout",
    "ResourceContents",
    "ResourceInfo",
    "ResourceLink",
    "ResourceTemplateInfo",
    "ServerError",
    "SkillEntry",
    "SkillFile",
    "SkillVerificationFailed",
    "TaskCancelled",
    "TaskHandle",
    "TaskInfo",
    "TextContent",
    "ToolCallFailed",
    "ToolChanged",
    "ToolInfo",
    "UnknownContent",
    "VersionMismatch",
    "fingerprint",
]
