"""Existing HTTP APIs as MCP servers: an OpenAPI document (or an ASGI app's) becomes tools,
resources and templates."""

from .operation import Body, Operation, Parameter, Skipped

__all__ = ["Body", "Operation", "Parameter", "Skipped"]
