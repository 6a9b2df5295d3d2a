"""A stdio MCP server that misbehaves as an upstream of the gateway: tool names MCP does not
allow or that read like others, as many tools as asked, results as large as asked. It speaks
JSON-RPC itself, so that it can send what a toolwire server would not.

    python hostile.py [EXTRA_TOOLS]

Its tools: ``a/b`` and ``has space`` (names MCP does not allow), ``d\u0435lete_file`` (a
Cyrillic e), ``delete_fiIe`` (a capital I), a name of 128 characters (allowed, but not once
prefixed), ``ok`` (answers ``ok``), ``huge`` (answers ``bytes`` characters of text), and
``EXTRA_TOOLS`` more (``tool_00001``...). ``changed`` adds a tool (``added_1``, ``added_2``...)
and sends ``notifications/tools/list_changed``.
"""

import os
import sys

import orjson

LONG = "x" * 128
NAMES = ["a/b", "has space", "d\u0435lete_file", "delete_fiIe", LONG, "ok", "huge", "changed"]
EXTRA = int(sys.argv[1]) if len(sys.argv) > 1 else 0
SCHEMA = {"type": "object", "properties": {"bytes": {"type": "integer"}}}


def write(message: dict[str, object]) -> None:
    data = orjson.dumps({"jsonrpc": "2.0", **message}) + b"\n"
    while data:
        data = data[os.write(1, data) :]


def text(value: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": value}]}


names = NAMES + [f"tool_{number:05d}" for number in range(1, EXTRA + 1)]
for line in sys.stdin.buffer:
    message = orjson.loads(line)
    method, ident = message.get("method"), message.get("id")
    if method == "initialize":
        info = {"name": "hostile", "version": "1"}
        capabilities = {"tools": {"listChanged": True}}
        write(
            {"id": ident, "result": {"protocolVersion": "2025-11-25", "capabilities": capabilities, "serverInfo": info}}
        )
    elif method == "tools/list":
        write({"id": ident, "result": {"tools": [{"name": name, "inputSchema": SCHEMA} for name in names]}})
    elif method == "tools/call":
        name = message["params"]["name"]
        if name == "huge":
            write({"id": ident, "result": text("y" * int(message["params"]["arguments"]["bytes"]))})
        elif name == "changed":
            names.append(f"added_{len(names) - len(NAMES) - EXTRA + 1}")
            write({"method": "notifications/tools/list_changed"})
            write({"id": ident, "result": text("changed")})
        else:
            write({"id": ident, "result": text(name)})
    elif ident is not None:
        write({"id": ident, "error": {"code": -32601, "message": "Method not found"}})
