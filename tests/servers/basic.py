"""A server for the stdio end-to-end tests."""

import asyncio
import sys
from dataclasses import dataclass

from toolwire import Context, Server, ToolError

server = Server("stdio-test", "1.2.3")


@dataclass
class Stats:
    characters: int
    words: int


@server.tool
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool
def analyze(text: str) -> Stats:
    """Count characters and words."""
    return Stats(len(text), len(text.split()))


@server.tool
async def countdown(n: int, ctx: Context) -> str:
    """Count down, reporting progress."""
    for i in range(n):
        ctx.report_progress(i + 1, n, f"{n - i - 1} left")
        await asyncio.sleep(0.01)
    return "liftoff"


@server.tool
async def sleepy(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@server.tool
def noisy() -> str:
    print("this goes to stderr, not the protocol stream")
    sys.stdout.write("so does this\n")
    sys.stdout.flush()
    return "quiet"


@server.tool
def broken() -> str:
    raise ToolError("the external API is down")


other = Server("another")
