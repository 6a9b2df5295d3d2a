"""The raw floor over stdio for ``instructions.py``: a bare asyncio + uvloop JSON-RPC loop.

asyncio's streams on stdin and stdout (uvloop's pipe transports), orjson, no validation, no
session, no framework: a line read, its answer written, the next line. It answers what the
benchmark sends toolwire: ``initialize`` (the legacy result), ``server/discover``, and
``tools/call`` of any tool with ``{"content":[{"type":"text","text":TEXT}]}``; a 2026-07-28
call (``_meta`` with a protocol version) gets ``resultType`` and the server's info in
``_meta``, as toolwire answers it. Notifications are read and ignored. It exits at end of
input.

    python benchmarks/stdio_floor.py
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import orjson
import uvloop
from http_floor import INITIALIZE_RESULT, META_VERSION, MODERN_META

DISCOVER_RESULT = {
    "supportedVersions": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
    "capabilities": INITIALIZE_RESULT["capabilities"],
    "resultType": "complete",
    "_meta": MODERN_META,
}


def answer(line: bytes) -> bytes:
    """The answer to one line (``b""`` for a notification)."""
    message = orjson.loads(line)
    if "id" not in message:
        return b""
    method = message["method"]
    params = message.get("params") or {}
    result: dict[str, Any]
    if method == "tools/call":
        result = {"content": [{"type": "text", "text": params["arguments"]["text"]}]}
        if META_VERSION in (params.get("_meta") or {}):
            result["resultType"] = "complete"
            result["_meta"] = MODERN_META
    elif method == "initialize":
        result = INITIALIZE_RESULT
    elif method == "server/discover":
        result = DISCOVER_RESULT
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        return orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}) + b"\n"
    return orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + b"\n"


async def serve() -> None:
    """Read stdin a line at a time; write each answer as it is made (the transport sends what
    the pipe takes at once)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    transport, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout.buffer)
    while line := await reader.readline():
        data = answer(line)
        if data:
            transport.write(data)
    transport.close()


if __name__ == "__main__":
    uvloop.run(serve())
