"""The host: hands MCP servers' tools to a language model, with a person in the loop.

    from toolwire.host import Host
    from toolwire.host.providers import OpenAIProvider

    provider = OpenAIProvider("deepseek-chat", base_url="https://api.deepseek.com", api_key=KEY)
    async with Host(["examples/seed_server.py"], provider=provider) as host:
        conversation = host.conversation(system="You are a helpful assistant.")
        async for event in conversation.send("4 加 4 等于多少"):
            if isinstance(event, ApprovalNeeded):
                event.allow()
        print(conversation.text)

:class:`Host` connects to the servers (:mod:`.servers`) and keeps their tools in one
namespace (:mod:`.naming`); :class:`Conversation` runs the loop (:mod:`.conversation`) and
reports it as events (:mod:`.events`); :class:`ApprovalPolicy` decides which calls run,
which are asked about and which are refused (:mod:`.approval`); providers speak to model
APIs (:mod:`.providers`). With many tools, :class:`ToolDeferral` shows the model a few and
lets it find the others (:mod:`.deferral`). In code mode the model writes a program that
calls the tools, run in a sandbox within :class:`SandboxLimits` (:mod:`.code_mode`).
"""

from .approval import ApprovalPolicy, Approvals, Change, Verdict
from .conversation import Conversation
from .deferral import ToolDeferral
from .events import (
    ApprovalNeeded,
    Done,
    ElicitationNeeded,
    Event,
    ExposedTool,
    Failed,
    SamplingNeeded,
    TextDelta,
    ToolCallDecided,
    ToolCallProposed,
    ToolProgress,
    ToolResult,
    ToolsChanged,
    ToolsLoaded,
)
from .host import Host, HostServer
from .model import ModelError, ModelRequest, ModelTurn, Provider, ToolCallRequest, ToolSpec, Usage
from .sandbox import SandboxLimits, SandboxUnavailable
from .servers import ConfigError, ServerSpec, load_config

__all__ = [
    "ApprovalNeeded",
    "ApprovalPolicy",
    "Approvals",
    "Change",
    "ConfigError",
    "Conversation",
    "Done",
    "ElicitationNeeded",
    "Event",
    "ExposedTool",
    "Failed",
    "Host",
    "HostServer",
    "ModelError",
    "ModelRequest",
    "ModelTurn",
    "Provider",
    "SamplingNeeded",
    "SandboxLimits",
    "SandboxUnavailable",
    "ServerSpec",
    "TextDelta",
    "ToolCallDecided",
    "ToolCallProposed",
    "ToolCallRequest",
    "ToolDeferral",
    "ToolProgress",
    "ToolResult",
    "ToolSpec",
    "ToolsChanged",
    "ToolsLoaded",
    "Usage",
    "Verdict",
    "load_config",
]
