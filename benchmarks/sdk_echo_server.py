"""The official MCP SDK's server for ``instructions.py --peers``: an ``async def echo``.

    python benchmarks/sdk_echo_server.py              # stdio, in the era the client opens with
    python benchmarks/sdk_echo_server.py --http PORT  # http://127.0.0.1:PORT/mcp, under uvicorn

The SDK's ``MCPServer``, served as its documentation shows: ``run()`` over stdio, and its own
Starlette application (``streamable_http_app``) under uvicorn (httptools and uvloop, as
toolwire's HTTP floor). Only critical records are logged.
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench", log_level="CRITICAL")


@server.tool()
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    if "--http" in sys.argv:
        import uvicorn

        port = int(sys.argv[sys.argv.index("--http") + 1])
        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=port, log_level="critical")
    else:
        server.run()
