"""A deliberately plain JSON-RPC client over a real stdio pipe, independent of toolwire.

Tests use it to talk to servers the way any MCP client would: spawn the process, write
newline-delimited JSON to its stdin, read its stdout. It shares no code with toolwire, so a
bug in toolwire's framing or encoding cannot hide itself.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from typing import Any

MODERN = "2026-07-28"


def toolwire_command(target: str) -> list[str]:
    """The command line that serves ``target`` (``FILE[:OBJECT]``) over stdio."""
    return [sys.executable, "-m", "toolwire", "run", target]


def modern_meta(capabilities: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """The per-request ``_meta`` of a 2026-07-28 request."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        "io.modelcontextprotocol/clientInfo": {"name": "rawclient", "version": "1"},
    }
    meta.update(extra)
    return meta


class RawClient:
    """A server process and the lines it writes. Use as a context manager."""

    def __init__(self, command: list[str], env: dict[str, str] | None = None, cwd: str | None = None) -> None:
        full_env = {**os.environ, **(env or {})}
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=full_env,
            cwd=cwd,
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr_lines: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()
        self._next_id = 0

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def _pump_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr_lines.append(line.decode(errors="replace"))

    def send_raw(self, data: bytes) -> None:
        """Write bytes as they are (a newline is not added)."""
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def receive(self, timeout: float = 10.0) -> Any:
        """The next message; ``AssertionError`` if the server closed stdout or wrote no JSON."""
        line = self._lines.get(timeout=timeout)
        assert line is not None, f"server closed stdout; stderr: {''.join(self.stderr_lines)[-2000:]}"
        return json.loads(line)

    def next_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = 10.0) -> dict[str, Any]:
        """Send a request; return its response, keeping notifications in ``self.notifications``."""
        id = self.next_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.wait_for(id, timeout)

    def wait_for(self, id: Any, timeout: float = 10.0) -> dict[str, Any]:
        while True:
            message = self.receive(timeout)
            if message.get("id") == id and ("result" in message or "error" in message):
                return message  # type: ignore[no-any-return]
            self.notifications.append(message)

    notifications: list[Any]

    def initialize(self, version: str = "2025-11-25", capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        """The legacy handshake: initialize, then notifications/initialized."""
        self.notifications = []
        answer = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": {"name": "rawclient", "version": "1"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def close(self, timeout: float = 10.0) -> int:
        """Close stdin and wait for the process to exit; returns its exit code."""
        if self.process.stdin and not self.process.stdin.closed:
            self.process.stdin.close()
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise

    def __enter__(self) -> RawClient:
        self.notifications = []
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.close()
        finally:
            if self.process.poll() is None:
                self.process.kill()
            for stream in (self.process.stdout, self.process.stderr):
                if stream:
                    stream.close()
