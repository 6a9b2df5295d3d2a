"""The 2026-07-28 ``x-mcp-header`` annotations of listed tools, as the HTTP transport keeps them:
the headers each tool's calls carry, and the tools whose annotations are invalid left out."""

from __future__ import annotations

from typing import Any

import orjson

from ..logs import get_logger
from ..protocol import http_headers

log = get_logger("toolwire.client")


def screen_tools(data: bytes, listing: set[Any], tool_headers: dict[str, dict[str, tuple[str, ...]]]) -> bytes:
    """A ``tools/list`` answer without the tools whose ``x-mcp-header`` annotations are
    invalid; records the valid ones' for the headers of later calls."""
    try:
        message = orjson.loads(data)
    except orjson.JSONDecodeError:
        return data
    if not isinstance(message, dict) or message.get("id") not in listing:
        return data
    listing.discard(message.get("id"))
    result = message.get("result")
    if not isinstance(result, dict) or not isinstance(result.get("tools"), list) or b"x-mcp-header" not in data:
        return data
    tools = result["tools"]
    kept = []
    for tool in tools:
        name = tool.get("name") if isinstance(tool, dict) else None
        try:
            tool_headers[str(name)] = http_headers.header_parameters(tool.get("inputSchema"))
        except http_headers.InvalidHeaderAnnotation as exc:
            log.warning("left out tool %r: %s", name, exc)
            continue
        kept.append(tool)
    result["tools"] = kept
    return orjson.dumps(message)
