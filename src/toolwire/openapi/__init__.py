"""Existing HTTP APIs as MCP servers: an OpenAPI document (or an ASGI app's) becomes tools,
resources and templates."""

from .document import OpenAPIError, load_document
from .mapping import MappedDocument, map_document
from .operation import Body, Operation, Parameter, Skipped
from .routes import Override, RouteMap
from .server import from_asgi, from_openapi

__all__ = [
    "Body",
    "MappedDocument",
    "OpenAPIError",
    "Operation",
    "Override",
    "Parameter",
    "RouteMap",
    "Skipped",
    "from_asgi",
    "from_openapi",
    "load_document",
    "map_document",
]
