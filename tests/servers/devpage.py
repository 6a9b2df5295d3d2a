"""A server for the inspector's browser tests (tests/test_dev.py): progress, an image, a
question, and a hostile tool whose name, description and result carry HTML and script."""

from __future__ import annotations

import asyncio
import base64

from toolwire import Context, Server, image

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)

server = Server("devpage", "1.0.0")


@server.tool
async def count(to: int, ctx: Context) -> str:
    """Counts slowly, reporting progress."""
    for step in range(1, to + 1):
        await asyncio.sleep(0.15)
        await ctx.report_progress(step, to, f"step {step} of {to}")
    return f"counted to {to}"


@server.tool
def picture() -> object:
    """A tiny picture."""
    return image(PNG, mime_type="image/png")


@server.tool
async def ask_name(ctx: Context) -> str:
    """Asks the user's name."""
    answer = await ctx.elicit("What is your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"Hello, {(answer.content or {}).get('name')}"


@server.tool
async def haiku(topic: str, ctx: Context) -> str:
    """Asks the client's model for a haiku."""
    reply = await ctx.sample(f"A haiku about {topic}", max_tokens=60)
    return f"the model wrote: {reply['content']['text']}"


@server.tool(title="<script>window.__pwned = 1</script>")
def hostile() -> str:
    """<img src=x onerror="window.__pwned = 2"> a description with HTML in it."""
    return "<script>window.__pwned = 3</script><b>bold?</b>"
