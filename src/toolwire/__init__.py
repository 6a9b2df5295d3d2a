"""toolwire: the Model Context Protocol's tools (with resources, prompts and completion), fast
and correct in every protocol version.

    from toolwire import Server

    server = Server("weather")

    @server.tool
    def get_weather(location: str) -> str:
        "Current weather for a city."
        ...

    if __name__ == "__main__":
        server.run()

Names are imported on first use, so that ``import toolwire.protocol`` (the sans-IO core)
stays free of the event loop and the server, and ``toolwire.Client`` loads no server package.
"""

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "LATEST": "protocol.versions",
    "SUPPORTED_VERSIONS": "protocol.versions",
    "ProtocolError": "protocol.errors",
    "Completion": "completion",
    "Prompt": "prompts.prompt",
    "PromptResult": "prompts.prompt",
    "assistant_message": "prompts.prompt",
    "user_message": "prompts.prompt",
    "Resource": "resources.resource",
    "ResourceNotFound": "resources.resource",
    "ResourceTemplate": "resources.resource",
    "resource_contents": "resources.resource",
    "UriTemplate": "resources.uri_template",
    "Client": "client.client",
    "CapabilityMissing": "server.context",
    "ClientRequestFailed": "server.context",
    "Context": "server.context",
    "Elicitation": "server.context",
    "Extension": "server.extensions",
    "MethodCall": "server.extensions",
    "method": "server.extensions",
    "Server": "server.server",
    "Content": "tools.content",
    "annotations": "tools.content",
    "audio": "tools.content",
    "embedded_resource": "tools.content",
    "image": "tools.content",
    "resource_link": "tools.content",
    "text": "tools.content",
    "ToolError": "tools.results",
    "ToolwireError": "errors",
    "ToolResult": "tools.results",
    "Param": "tools.schema",
    "Tool": "tools.tool",
}

__all__ = [
    "CapabilityMissing",
    "Client",
    "ClientRequestFailed",
    "Completion",
    "Content",
    "Context",
    "Elicitation",
    "Extension",
    "LATEST",
    "MethodCall",
    "Param",
    "Prompt",
    "PromptResult",
    "ProtocolError",
    "Resource",
    "ResourceNotFound",
    "ResourceTemplate",
    "SUPPORTED_VERSIONS",
    "Server",
    "Tool",
    "ToolError",
    "ToolResult",
    "ToolwireError",
    "UriTemplate",
    "annotations",
    "assistant_message",
    "audio",
    "embedded_resource",
    "image",
    "method",
    "resource_contents",
    "resource_link",
    "text",
    "user_message",
]

if TYPE_CHECKING:
    from .client.client import Client
    from .completion import Completion
    from .errors import ToolwireError
    from .prompts.prompt import Prompt, PromptResult, assistant_message, user_message
    from .protocol.errors import ProtocolError
    from .protocol.versions import LATEST, SUPPORTED_VERSIONS
    from .resources.resource import Resource, ResourceNotFound, ResourceTemplate, resource_contents
    from .resources.uri_template import UriTemplate
    from .server.context import CapabilityMissing, ClientRequestFailed, Context, Elicitation
    from .server.extensions import Extension, MethodCall, method
    from .server.server import Server
    from .tools.content import Content, annotations, audio, embedded_resource, image, resource_link, text
    from .tools.results import ToolError, ToolResult
    from .tools.schema import Param
    from .tools.tool import Tool


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'toolwire' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return [*globals(), *__all__]
