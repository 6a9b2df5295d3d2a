"""An upstream for the gateway's tests: a tool for each thing the gateway relays (progress,
questions, sampling, cancellation, list changes, tasks), and one that never answers."""

import asyncio
import os

from toolwire import Context, Server

server = Server("relay", "1.0.0")
cancelled = asyncio.Event()


@server.tool
async def count(to: int, ctx: Context) -> str:
    """Count, reporting progress at each step."""
    for step in range(1, to + 1):
        await ctx.report_progress(step, to)
    return f"counted to {to}"


@server.tool
async def ask(ctx: Context) -> str:
    """Ask the caller's user for a name."""
    answer = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"hello {(answer.content or {}).get('name')}"


@server.tool
async def think(ctx: Context) -> str:
    """Ask the caller's model."""
    reply = await ctx.sample("Say something", max_tokens=20)
    return f"the model said {reply['content']['text']}"


@server.tool
async def block(ctx: Context) -> str:
    """Report progress once, then wait until cancelled (or forever)."""
    await ctx.report_progress(1, None, "waiting")
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        cancelled.set()
        raise
    return "never"


@server.tool
async def was_cancelled() -> str:
    """Answers once a call of ``block`` was cancelled."""
    await cancelled.wait()
    return "block was cancelled"


@server.tool
def grow(name: str) -> str:
    """Add a tool called ``name`` (the tool list changes)."""
    server.add_tool(lambda: name, name=name)
    return f"added {name}"


@server.tool(task=True)
async def report(topic: str) -> str:
    """A tool that runs as a task."""
    return f"report on {topic}"


@server.tool
def pid() -> int:
    """The process id of this server."""
    return os.getpid()
