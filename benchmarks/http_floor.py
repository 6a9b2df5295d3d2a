"""The raw floor over HTTP: the least a Python MCP server can do per Streamable HTTP request.

A bare ASGI application with orjson: no framework, no validation, no session table. It
answers what the benchmark sends toolwire, on any path:

- ``initialize``: the legacy result, with an ``Mcp-Session-Id`` header;
- notifications (``notifications/initialized``): 202, and ``DELETE``: 200;
- ``tools/call`` of any tool: ``{"content":[{"type":"text","text":TEXT}]}`` as JSON, or, when
  the call carries a ``progressToken``, as an SSE stream of the progress notification and
  the result (both events in one write). A 2026-07-28 request (``_meta`` with a protocol
  version) gets ``resultType`` and the server's info in ``_meta``, as toolwire answers it.

    python benchmarks/http_floor.py PORT [--runner uvicorn|granian|toolwire]

Served like toolwire's app: uvicorn (httptools, uvloop, one process) or granian (one worker).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import orjson

META_VERSION = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO = {"name": "bench", "version": "0.1.0"}
INITIALIZE_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {"listChanged": True}, "logging": {}},
    "serverInfo": SERVER_INFO,
}
MODERN_META = {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
SESSION = [(b"mcp-session-id", b"floor-session-0123456789abcdefghij")]
JSON = (b"content-type", b"application/json")
SSE = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache, no-transform")]
EMPTY = [(b"content-length", b"0")]


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            kind = (await receive())["type"]
            if kind == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif kind == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    body = b""
    while True:
        event = await receive()
        body += event.get("body", b"")
        if not event.get("more_body"):
            break
    if scope["method"] != "POST":
        await send({"type": "http.response.start", "status": 200, "headers": EMPTY})
        await send({"type": "http.response.body", "body": b""})
        return
    message = orjson.loads(body)
    if "id" not in message:
        await send({"type": "http.response.start", "status": 202, "headers": EMPTY})
        await send({"type": "http.response.body", "body": b""})
        return
    params = message.get("params") or {}
    meta = params.get("_meta") or {}
    headers: list[tuple[bytes, bytes]] = []
    if message["method"] == "initialize":
        result = INITIALIZE_RESULT
        headers = SESSION
    else:
        result = {"content": [{"type": "text", "text": params["arguments"]["text"]}]}
        if META_VERSION in meta:
            result["resultType"] = "complete"
            result["_meta"] = MODERN_META
    answer = orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
    token = meta.get("progressToken")
    if token is None:
        length = (b"content-length", b"%d" % len(answer))
        await send({"type": "http.response.start", "status": 200, "headers": [JSON, length, *headers]})
        await send({"type": "http.response.body", "body": answer})
        return
    progress = orjson.dumps(
        {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": token, "progress": 1, "total": 1},
        }
    )
    stream = b"event: message\ndata: " + progress + b"\n\nevent: message\ndata: " + answer + b"\n\n"
    await send({"type": "http.response.start", "status": 200, "headers": SSE})
    await send({"type": "http.response.body", "body": stream})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("port", type=int)
    parser.add_argument("--runner", choices=("uvicorn", "granian", "toolwire"), default="uvicorn")
    args = parser.parse_args()
    if args.runner == "toolwire":  # toolwire's own HTTP server, with nothing of toolwire's application
        import socket

        import uvloop

        from toolwire.transports.http import wire

        listener = socket.create_server(("127.0.0.1", args.port), backlog=2048)
        uvloop.run(wire.serve(app, listener))
    elif args.runner == "uvicorn":  # as toolwire's run_http calls it
        import uvicorn

        uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", lifespan="on", access_log=False)
    else:
        from granian.constants import Interfaces
        from granian.server import Server as Granian

        Granian(
            "http_floor:app",
            address="127.0.0.1",
            port=args.port,
            interface=Interfaces.ASGI,
            log_level="warning",
            working_dir=Path(__file__).resolve().parent,
        ).serve()


if __name__ == "__main__":
    main()
