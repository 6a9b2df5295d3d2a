"""toolwire: the Model Context Protocol's tools, fast and correct in every protocol version.

from toolwire import Server

server = Server("weather")

@server.tool
def get_weather(location: str) -> str:
    "Current weather for a city."
    ...

if __name__ == "__main__":
    server.run()
"""

from .protocol.errors import ProtocolError
from .protocol.versions import LATEST, SUPPORTED_VERSIONS
from .server.context import CapabilityMissing, ClientRequestFailed, Context, Elicitation
from .server.server import Server
from .tools.content import (
    Content,
    annotations,
    audio,
    embedded_resource,
    image,
    resource_link,
    text,
)
from .tools.results import ToolError, ToolResult
from .tools.schema import Param
from .tools.tool import Tool

__version__ = "0.1.0"

__all__ = [
    "LATEST",
    "SUPPORTED_VERSIONS",
    "CapabilityMissing",
    "ClientRequestFailed",
    "Content",
    "Context",
    "Elicitation",
    "Param",
    "ProtocolError",
    "Server",
    "Tool",
    "ToolError",
    "ToolResult",
    "annotations",
    "audio",
    "embedded_resource",
    "image",
    "resource_link",
    "text",
]
