"""A stdio "server" that misbehaves on purpose, for the client's hostile-peer tests.

    python hostile_peer.py MODE

It answers ``server/discover`` with an error (so the client falls back to ``initialize``) and
answers ``initialize``; then, by MODE:

* ``stall``: never reads again (its stdin pipe fills up) and never answers;
* ``huge-line``: answers the next request with one line of 100 MB;
* ``endless-line``: writes 10 MB with no newline, then sleeps;
* ``schema-bomb``: lists ``echo`` with an outputSchema whose ``allOf`` of two ``$ref`` s to the
  next level doubles the work of validating at each of 40 levels, and answers calls with
  structured content.
"""

import os
import sys
import time

import orjson

MODE = sys.argv[1]


def write(data: bytes) -> None:
    while data:
        data = data[os.write(1, data) :]


def answer(id: object, result: object) -> None:
    write(orjson.dumps({"jsonrpc": "2.0", "id": id, "result": result}) + b"\n")


for line in sys.stdin.buffer:
    message = orjson.loads(line)
    method = message.get("method")
    if method == "server/discover":
        error = {"code": -32601, "message": "Method not found"}
        write(orjson.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}) + b"\n")
    elif method == "initialize":
        info = {"name": "hostile-peer", "version": "1"}
        answer(message["id"], {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": info})
    elif method == "notifications/initialized":
        if MODE == "stall":
            time.sleep(3600)
        if MODE == "endless-line":
            write(b'{"jsonrpc": "2.0", "id": 2, "result": "' + b"x" * 10_000_000)
            time.sleep(3600)
    elif method == "tools/list" and MODE == "schema-bomb":
        levels = {f"l{n}": {"allOf": [{"$ref": f"#/$defs/l{n + 1}"}] * 2} for n in range(40)}
        levels["l40"] = {"type": "string"}
        schema = {"type": "object", "$defs": levels, "properties": {"x": {"$ref": "#/$defs/l0"}}}
        tool = {"name": "echo", "inputSchema": {"type": "object"}, "outputSchema": schema}
        answer(message["id"], {"tools": [tool]})
    elif method == "tools/call" and MODE == "schema-bomb":
        answer(message["id"], {"content": [], "structuredContent": {"x": "y"}})
    elif "id" in message and MODE == "huge-line":
        write(
            b'{"jsonrpc":"2.0","id":'
            + orjson.dumps(message["id"])
            + b',"result":{"x":"'
            + b"y" * 100_000_000
            + b'"}}\n'
        )
