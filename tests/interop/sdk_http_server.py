"""The official Python SDK's ``MCPServer`` of ``sdk_server.py``, served over Streamable HTTP.

    python tests/interop/sdk_http_server.py PORT      # http://127.0.0.1:PORT/mcp

The SDK's own Starlette application (``streamable_http_app``) under uvicorn, on 127.0.0.1;
it serves both eras: ``initialize`` sessions and 2026-07-28 requests.
"""

from __future__ import annotations

import sys
from pathlib import Path

import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sdk_server import server

if __name__ == "__main__":
    uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="critical")
