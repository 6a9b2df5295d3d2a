"""The toolwire demo: the seed example server, driven end to end over stdio.

Starts ``toolwire run examples/seed_server.py`` as a child process, exactly as a desktop MCP
client would, and talks to it in plain JSON-RPC over its stdin and stdout: the handshake,
tool discovery, calls, structured output, progress notifications, an execution error, a
protocol error, and the 2026-07-28 era on the same process. No network and no keys: the
weather tools talk to a local stand-in for the weather API.

    python examples/demo.py            # or: ./scripts/demo.sh
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from weather_stub import WeatherStub

HERE = Path(__file__).resolve().parent
BOLD, DIM, GREEN, RED, CYAN, RESET = (
    ("\033[1m", "\033[2m", "\033[32m", "\033[31m", "\033[36m", "\033[0m") if sys.stdout.isatty() else ("",) * 6
)
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "toolwire-demo", "version": "1"},
}


class Server:
    """The server process and a minimal JSON-RPC client for it."""

    def __init__(self, env: dict[str, str]) -> None:
        command = [sys.executable, "-m", "toolwire", "run", str(HERE / "seed_server.py")]
        print(f"{DIM}$ {' '.join(command[2:])}{RESET}")
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, **env}, bufsize=0
        )
        self.next_id = 0
        self.shown_progress = -1

    def request(self, method: str, params: dict[str, Any] | None = None, show: bool = True) -> dict[str, Any]:
        self.next_id += 1
        self.shown_progress = -1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        if show:
            print(f"{CYAN}→ {json.dumps(message, ensure_ascii=False)}{RESET}")
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        while True:
            answer = json.loads(self.process.stdout.readline())
            if answer.get("id") == self.next_id:
                return answer  # type: ignore[no-any-return]
            if answer.get("method") == "notifications/progress":
                self.show_progress(answer["params"])

    def show_progress(self, params: dict[str, Any]) -> None:
        """A bar for every tenth of the way (the server sends many more notifications)."""
        done = params["progress"] / params["total"]
        if int(done * 10) > self.shown_progress or done == 1:
            self.shown_progress = int(done * 10)
            bar = "#" * int(30 * done)
            print(f"  {DIM}progress [{bar:<30}] {params.get('message', '')}{RESET}")

    def notify(self, method: str) -> None:
        assert self.process.stdin
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")

    def call(self, name: str, arguments: dict[str, Any], **meta: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if meta:
            params["_meta"] = meta
        return self.request("tools/call", params)

    def close(self) -> int:
        assert self.process.stdin
        self.process.stdin.close()
        return self.process.wait(10)


def heading(text: str) -> None:
    print(f"\n{BOLD}== {text}{RESET}")


def show(answer: dict[str, Any]) -> None:
    if "error" in answer:
        error = answer["error"]
        print(f"{RED}← protocol error {error['code']}: {error['message']}{RESET}")
        return
    result = answer["result"]
    colour = RED if result.get("isError") else GREEN
    label = "execution error (isError)" if result.get("isError") else "result"
    for block in result.get("content", []):
        text = block.get("text", f"<{block['type']} block>")
        print(f"{colour}← {label}: {text}{RESET}")
    if "structuredContent" in result:
        pretty = json.dumps(result["structuredContent"], indent=2, ensure_ascii=False)
        print(f"{colour}← structuredContent:{RESET}\n{pretty}")


def make_workspace(root: Path) -> None:
    """A small project for the file tools to work on."""
    shutil.copytree(HERE / "sample_data", root, dirs_exist_ok=True)
    (root / "big.log").write_text("".join(f"line {i}: all systems nominal\n" for i in range(200_000)))


def main() -> None:
    with tempfile.TemporaryDirectory() as workspace, WeatherStub() as weather:
        root = Path(workspace) / "project"
        make_workspace(root)
        env = {
            "TOOLWIRE_WEATHER_URL": weather.url,
            "TOOLWIRE_GEOCODING_URL": weather.url,
            "TOOLWIRE_EXAMPLES_ROOT": str(root),
            "TOOLWIRE_EXAMPLES_DB": str(Path(workspace) / "records.sqlite3"),
        }
        heading("Start the seed example server over stdio")
        server = Server(env)

        heading("Handshake (legacy era, protocol 2025-11-25)")
        client = {"name": "toolwire-demo", "version": "1"}
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}
        init = server.request("initialize", hello)
        info = init["result"]["serverInfo"]
        print(f"{GREEN}← {info['name']} {info['version']}, protocol {init['result']['protocolVersion']}{RESET}")
        server.notify("notifications/initialized")

        heading("Discovery: tools/list")
        tools = server.request("tools/list")["result"]["tools"]
        for tool in tools:
            hints = tool.get("annotations", {})
            flags = [name.removesuffix("Hint") for name, value in hints.items() if value is True]
            params = ", ".join(tool["inputSchema"].get("properties", {}))
            print(f"  {BOLD}{tool['name']}{RESET}({params})  {DIM}{' '.join(flags)}{RESET}")
            if tool.get("description"):
                print(f"      {tool['description'].splitlines()[0]}")

        heading("Calls")
        show(server.call("calculator", {"operation": "multiply", "a": 6, "b": 7}))
        show(server.call("text_analyzer", {"text": "Tools let models act on the world."}))
        show(server.call("search_codebase", {"pattern": "def ", "fileType": ".py", "maxResults": 3}))

        heading("Structured output (outputSchema + structuredContent)")
        show(server.call("get_weather_data", {"location": "Paris"}))

        heading("Progress notifications")
        show(server.call("process_large_file", {"path": "big.log"}, progressToken="demo-progress"))

        heading("An execution error the model can read")
        show(server.call("calculator", {"operation": "divide", "a": 1, "b": 0}))
        show(server.call("get_file_content", {"path": "../../etc/passwd"}))

        heading("Invalid arguments and unknown tools")
        show(server.call("search_codebase", {"pattern": "x", "maxResults": 500}))
        show(server.call("invalid_tool_name", {}))

        heading("The 2026-07-28 era on the same process: no handshake, _meta on every request")
        discovered = server.request("server/discover", {"_meta": MODERN_META})["result"]
        print(f"{GREEN}← supportedVersions: {', '.join(discovered['supportedVersions'])}{RESET}")
        answer = server.call("get_weather_data", {"location": "Beijing"}, **MODERN_META)
        print(f"{GREEN}← resultType: {answer['result']['resultType']}{RESET}")
        show(answer)

        heading("Shut down: close stdin")
        print(f"server exited with code {server.close()}")


if __name__ == "__main__":
    main()
