"""An older kind of server, by hand: it offers resources but has no resources/templates/list
(it answers "method not found", as some low-level servers do). Run as ``python old_resources.py``."""

import json
import sys

RESOURCES = [{"uri": "memo://one", "name": "one", "mimeType": "text/plain"}]

for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    if method == "initialize":
        result = {
            "protocolVersion": "2025-03-26",
            "capabilities": {"resources": {}},
            "serverInfo": {"name": "old-resources", "version": "1"},
        }
    elif method == "resources/list":
        result = {"resources": RESOURCES}
    else:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
