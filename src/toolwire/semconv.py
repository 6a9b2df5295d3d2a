"""OpenTelemetry's semantic conventions for MCP: the names that the server's telemetry
(:mod:`toolwire.guards.telemetry`) and the client's (:mod:`toolwire.client.telemetry`) give
their spans and attributes. Plain data: importing it imports nothing."""

from __future__ import annotations

from typing import Any

#: The instrumentation scope of toolwire's tracers and meters.
SCOPE = "toolwire"


def span_name(method: str, target: str | None) -> str:
    """``{method} {target}``, or the method alone."""
    return f"{method} {target}" if target else method


def request_attributes(method: str, target: str | None) -> dict[str, Any]:
    """The semantic conventions' attributes naming what a request is about."""
    attributes: dict[str, Any] = {"mcp.method.name": method}
    if target is None:
        return attributes
    if method == "tools/call":
        attributes["gen_ai.tool.name"] = target
        attributes["gen_ai.operation.name"] = "execute_tool"
    elif method == "prompts/get":
        attributes["gen_ai.prompt.name"] = target
    elif method.startswith("resources/"):
        attributes["mcp.resource.uri"] = target
    return attributes
