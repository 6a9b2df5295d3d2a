"""The raw floor: the least a Python MCP server over stdio can do per message.

A blocking loop over stdin lines with orjson: no asyncio, no validation, no framework. It
answers what the benchmark sends toolwire: ``initialize`` (legacy result shape),
``server/discover``, ``tools/list`` (encoded once at start-up) and ``tools/call`` of ``echo`` /
``echo_sync`` / ``echo_inline``, which return their text. Notifications are read and ignored. Every response
is written (and so flushed: stdout is written with ``os.write``) as soon as it is made.

``echo_sync`` makes its answer on a worker thread, as a server must for a plain function
that may block: the least such a hand-off can cost, one call at a time, with no event loop
(the reading thread releases one lock to wake the worker, and waits on another for its
answer). It measures what two thread wake-ups cost on the machine.

    python benchmarks/floor_server.py [--tools N]

``--tools N`` advertises N more tools ``tool_0`` ... ``tool_{N-1}``, byte for byte the
definitions ``benchmarks/echo_server.py`` registers with ``BENCH_TOOLS=N``.
"""

import os
import sys
import threading
from collections.abc import Callable

import orjson


class Worker:
    """A thread that runs one job at a time for the reading thread, which waits for it."""

    def __init__(self) -> None:
        self.go, self.done = threading.Lock(), threading.Lock()
        self.go.acquire()
        self.done.acquire()
        self.job: Callable[[], bytes] = bytes
        self.answer = b""
        threading.Thread(target=self._work, daemon=True).start()

    def _work(self) -> None:
        while True:
            self.go.acquire()
            self.answer = self.job()
            self.done.release()

    def run(self, job: Callable[[], bytes]) -> bytes:
        self.job = job
        self.go.release()
        self.done.acquire()
        return self.answer


def tool_definitions(extra: int) -> list[dict[str, object]]:
    """The tools toolwire lists for ``echo_server.py`` (same JSON, same order)."""
    text_schema = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    tools: list[dict[str, object]] = [
        {"name": "echo", "description": "Echo the text back.", "inputSchema": text_schema},
        {
            "name": "echo_sync",
            "description": "Echo the text back (sync: runs on a worker thread).",
            "inputSchema": text_schema,
        },
        {
            "name": "echo_inline",
            "description": "Echo the text back (sync, called on the event loop: it never blocks).",
            "inputSchema": text_schema,
        },
    ]
    for index in range(extra):
        schema = {
            "type": "object",
            "properties": {
                "city": {"type": "string"},
                "days": {"type": "integer", "default": 3},
                "metric": {"type": "boolean", "default": True},
            },
            "required": ["city"],
        }
        tools.append(
            {"name": f"tool_{index}", "description": f"Weather forecast {index} for a city.", "inputSchema": schema}
        )
    return tools


def main() -> None:
    extra = int(sys.argv[sys.argv.index("--tools") + 1]) if "--tools" in sys.argv else 0
    dumps = orjson.dumps
    loads = orjson.loads
    write = os.write
    info = {"name": "floor", "version": "0.1.0"}
    capabilities = {"tools": {"listChanged": True}}
    tools_list = dumps({"tools": tool_definitions(extra)})
    discover = dumps(
        {
            "supportedVersions": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
            "capabilities": capabilities,
            "ttlMs": 60000,
            "cacheScope": "public",
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": info},
        }
    )

    def send(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[write(1, view) :]

    worker = Worker()
    for line in sys.stdin.buffer:
        message = loads(line)
        id = message.get("id")
        if id is None:
            continue  # a notification
        method = message["method"]
        if method == "tools/call":
            params = message["params"]
            text = params["arguments"]["text"]
            answer = {"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}}
            if params["name"] == "echo_sync":
                send(worker.run(lambda answer=answer: dumps(answer) + b"\n"))  # type: ignore[misc]
            else:
                send(dumps(answer) + b"\n")
        elif method == "tools/list":
            send(b'{"jsonrpc":"2.0","id":' + dumps(id) + b',"result":' + tools_list + b"}\n")
        elif method == "initialize":
            version = message["params"].get("protocolVersion", "2025-11-25")
            result = {"protocolVersion": version, "capabilities": capabilities, "serverInfo": info}
            send(dumps({"jsonrpc": "2.0", "id": id, "result": result}) + b"\n")
        elif method == "server/discover":
            send(b'{"jsonrpc":"2.0","id":' + dumps(id) + b',"result":' + discover + b"}\n")
        else:
            error = {"code": -32601, "message": f"Method not found: {method}"}
            send(dumps({"jsonrpc": "2.0", "id": id, "error": error}) + b"\n")


if __name__ == "__main__":
    main()
