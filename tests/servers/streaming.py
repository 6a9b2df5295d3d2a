"""A server for the Streamable HTTP tests: tools that stream progress, pause between steps,
end their connection early, ask the client things, log, run until cancelled, and mirror a
parameter into an ``Mcp-Param-Region`` header.

Served with ``toolwire run tests/servers/streaming.py --http PORT``; the tests that inspect
the server's state load it in their own process.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from toolwire import Context, Server

server = Server("streaming", "2.0.0")


@server.tool
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool
def add(a: int, b: int) -> int:
    return a + b


@server.tool
async def countdown(n: int, ctx: Context) -> str:
    """Report ``n`` progress steps at once, then answer."""
    for i in range(n):
        ctx.report_progress(i + 1, n, f"{n - i - 1} left")
    return "liftoff"


@server.tool
async def steps(n: int, delay: float, ctx: Context, marker: str = "") -> str:
    """Report ``n`` progress steps, ``delay`` seconds apart, then answer. The file ``marker``
    says the steps are over (the tests wait for it rather than for a time)."""
    for i in range(n):
        ctx.report_progress(i + 1, n)
        await asyncio.sleep(delay)
    if marker:
        Path(marker).touch()
    return f"{n} steps"


@server.tool
async def polled(ctx: Context) -> str:
    """Report a step, end the response's connection (not its stream), report another, answer."""
    ctx.report_progress(1, 2, "before")
    ctx.close_stream()
    await asyncio.sleep(0.3)
    ctx.report_progress(2, 2, "after")
    return "polled"


@server.tool
async def slow(seconds: float, marker: str = "") -> str:
    """Sleep; if cancelled first, write ``cancelled`` to the file ``marker``. The file
    ``marker.started`` says the call began (the tests wait for it rather than for a time)."""
    if marker:
        Path(marker + ".started").touch()
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        if marker:
            Path(marker).write_text("cancelled")
        raise
    return "done"


@server.tool
async def ask(ctx: Context) -> str:
    """Ask the user's name (elicitation)."""
    answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    if not answer.accepted or answer.content is None:
        return f"no name ({answer.action})"
    return f"Hello, {answer.content['name']}!"


@server.tool
async def summarize(text: str, ctx: Context) -> str:
    """Ask the client's model (sampling)."""
    reply = await ctx.sample(f"Summarize: {text}", max_tokens=20)
    return f"summary: {reply['content']['text']}"


@server.tool
async def chatty(ctx: Context) -> str:
    """Log at info and at debug level."""
    await ctx.info("hello over HTTP")
    await ctx.debug("too quiet")
    return "said"


@server.tool
def toggle() -> str:
    """Add the tool ``extra``, or remove it if it is there (the tool list changes)."""
    if "extra" in server.registry:
        server.remove_tool("extra")
        return "removed"
    server.add_tool(lambda: "extra", name="extra")
    return "added"


@server.raw_tool(
    "regional",
    input_schema={
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "query": {"type": "string"},
        },
        "required": ["query"],
    },
)
def regional(arguments: dict[str, Any]) -> str:
    """Run a query in a region (mirrored into the Mcp-Param-Region header)."""
    return f"{arguments.get('region', 'anywhere')}: {arguments['query']}"


@server.resource("streaming://note", mime_type="text/plain")
def note() -> str:
    return "a note"


@server.resource("streaming://notes/{name}", mime_type="text/plain")
def named_note(name: str) -> str:
    return f"note {name}"


@server.prompt
def greeting(name: str) -> str:
    """Greet someone."""
    return f"Say hello to {name}."
