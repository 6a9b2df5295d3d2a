"""FastMCP's server for ``instructions.py --peers`` (when ``fastmcp`` is installed): an
``async def echo``.

    python benchmarks/fastmcp_echo_server.py              # stdio
    python benchmarks/fastmcp_echo_server.py --http PORT  # http://127.0.0.1:PORT/mcp, under uvicorn

FastMCP served as its documentation shows: ``run()`` over stdio (no banner), and its own
Starlette application (``http_app()``) under uvicorn (httptools and uvloop, as toolwire's HTTP
floor and the official SDK's server are). Only critical records are logged.
"""

from __future__ import annotations

import logging
import sys

from fastmcp import FastMCP

logging.disable(logging.ERROR)
server = FastMCP("bench")


@server.tool
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    if "--http" in sys.argv:
        import uvicorn

        port = int(sys.argv[sys.argv.index("--http") + 1])
        uvicorn.run(server.http_app(), host="127.0.0.1", port=port, log_level="critical")
    else:
        server.run(show_banner=False)
