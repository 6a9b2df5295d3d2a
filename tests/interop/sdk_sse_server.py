"""An MCP server of the official Python SDK that speaks only the 2024-11-05 HTTP+SSE transport.

python tests/interop/sdk_sse_server.py PORT      # GET /sse for the stream, POST /messages/
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("sdk-sse", version="1.0.0", log_level="CRITICAL")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Report progress for each step."""
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps)
    return f"counted {steps}"


if __name__ == "__main__":
    server.run(transport="sse", host="127.0.0.1", port=int(sys.argv[1]))
