"""Plain-function tools for the worker-lane tests: fast, blocking, failing, inline."""

from __future__ import annotations

import threading
import time

from toolwire import Server

server = Server("sync-tools")


@server.tool
def where() -> str:
    """The name of the thread the tool runs on."""
    return threading.current_thread().name


@server.tool(inline=True)
def where_inline() -> str:
    """The name of the thread an inline tool runs on."""
    return threading.current_thread().name


@server.tool
def nap(seconds: float) -> str:
    """Block for a while (as a tool doing blocking I/O would)."""
    time.sleep(seconds)
    return f"slept {seconds}"


@server.tool
def fail(text: str) -> str:
    """Raise, for the error path."""
    raise ValueError(f"no {text}")


@server.tool
async def ping() -> str:
    """An async tool: answers at once."""
    return "pong"
