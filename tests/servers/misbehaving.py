"""A bare legacy-only MCP server over stdio that misbehaves on request, for client tests.

    python misbehaving.py MODE

Modes: ``legacy`` (a correct legacy-only server: server/discover is an unknown method),
``silent`` (unknown methods get no answer at all), ``old`` (answers initialize with
2024-11-05), ``future`` (answers initialize with a version from the future), ``garbage``
(writes a line that is not JSON instead of answering tools/call), ``crash`` (exits with code
3 on tools/call, after a word on stderr), ``wrong-id`` (answers tools/call with another id),
``loop`` (tools/list pages never end), ``bad-output`` (structured content breaking its own
outputSchema), ``no-output`` (no structured content despite an outputSchema), ``pages``
(three pages of tools), ``nameless`` (lists a tool without a name), ``endless`` (every
paged list, ``resources/directory/read`` and ``skills/list`` too, hands out a new cursor forever).
"""

import json
import sys

MODE = sys.argv[1]
#: What ``endless`` declares, so that the client sends its skills requests at all.
SKILLS = {"endless": {"extensions": {"io.modelcontextprotocol/skills": {"directoryRead": True}}}}
TOOL = {
    "name": "measure",
    "description": "Measure something.",
    "inputSchema": {"type": "object", "properties": {"x": {"type": "number"}}},
    "outputSchema": {"type": "object", "properties": {"size": {"type": "number"}}, "required": ["size"]},
}


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method, id, params = message.get("method"), message.get("id"), message.get("params") or {}
    if id is None:
        continue
    if method == "initialize":
        version = {"old": "2024-11-05", "future": "2099-01-01"}.get(MODE, params.get("protocolVersion"))
        send(
            {
                "jsonrpc": "2.0",
                "id": id,
                "result": {
                    "protocolVersion": version,
                    "capabilities": {"tools": {}, **SKILLS.get(MODE, {})},
                    "serverInfo": {"name": "misbehaving", "version": "0"},
                },
            }
        )
    elif method == "tools/list":
        cursor = params.get("cursor")
        result: dict = {"tools": [TOOL]}
        if MODE == "nameless":
            result = {"tools": [{"description": "who am I?", "annotations": "not an object"}]}
        elif MODE == "loop":
            result["nextCursor"] = "again"
        elif MODE == "endless":
            result["nextCursor"] = str(int(cursor or 0) + 1)
        elif MODE == "pages":
            page = int(cursor or 0)
            result = {"tools": [{**TOOL, "name": f"measure{page}"}]}
            if page < 2:
                result["nextCursor"] = str(page + 1)
        send({"jsonrpc": "2.0", "id": id, "result": result})
    elif method in ("resources/directory/read", "skills/list") and MODE == "endless":
        page = int(params.get("cursor") or 0)
        key = "skills" if method == "skills/list" else "resources"
        send({"jsonrpc": "2.0", "id": id, "result": {key: [], "nextCursor": str(page + 1)}})
    elif method == "tools/call":
        if MODE == "garbage":
            sys.stdout.write("Traceback (most recent call last): oops\n")
            sys.stdout.flush()
        elif MODE == "crash":
            sys.stderr.write("fatal: the database is gone\n")
            sys.exit(3)
        elif MODE == "wrong-id":
            send({"jsonrpc": "2.0", "id": 9999, "result": {"content": []}})
        elif MODE == "bad-output":
            send({"jsonrpc": "2.0", "id": id, "result": {"content": [], "structuredContent": {"size": "big"}}})
        elif MODE == "no-output":
            send({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "size 1"}]}})
        else:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": id,
                    "result": {"content": [{"type": "text", "text": "ok"}], "structuredContent": {"size": 1}},
                }
            )
    elif MODE != "silent":
        send({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": f"Method not found: {method}"}})
