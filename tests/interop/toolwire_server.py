"""A toolwire server for the official MCP SDK's client to talk to (tests/project/test_interop.py).

Served with ``python -m toolwire run tests/interop/toolwire_server.py``. Tools, resources and
prompts are listed three to a page, so a client must follow ``nextCursor`` to see them all.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from toolwire import (
    Content,
    Context,
    PromptResult,
    ResourceNotFound,
    Server,
    ToolError,
    annotations,
    assistant_message,
    audio,
    embedded_resource,
    image,
    resource_link,
    text,
    user_message,
)

server = Server(
    "toolwire-interop", "4.5.6", title="Toolwire Interop", instructions="Tools for interop tests.", page_size=3
)

#: A 1x1 PNG and the smallest WAV header: real magic numbers, so MIME types are detected.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "


@dataclass
class Stats:
    characters: int
    words: int


@dataclass
class Seats:
    count: int
    name: str


@server.tool(
    title="Echo",
    read_only=True,
    idempotent=True,
    icons=[{"src": "https://example.com/echo.png", "mimeType": "image/png"}],
)
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers (structured output: an integer)."""
    return a + b


@server.tool
def analyze(text: str) -> Stats:
    """Count characters and words (structured output: an object)."""
    return Stats(len(text), len(text.split()))


@server.tool
def primes(limit: int) -> list[int]:
    """The primes below ``limit`` (structured output: an array)."""
    return [n for n in range(2, limit) if all(n % d for d in range(2, n))]


@server.tool
async def countdown(n: int, ctx: Context) -> str:
    """Count down, reporting progress at each step."""
    for i in range(n):
        await ctx.report_progress(i + 1, n, f"{n - i - 1} left")
    return "liftoff"


@server.tool
def broken() -> str:
    """Always fails with a tool execution error."""
    raise ToolError("the external API is down")


@server.tool
async def book(flight: str, ctx: Context) -> str:
    """Book seats, asking the user how many (elicitation)."""
    answer = await ctx.elicit(f"How many seats on {flight}?", Seats)
    if not answer.accepted:
        return f"booking {answer.action}"
    return f"booked {answer.data.count} for {answer.data.name} on {flight}"


@server.tool
async def summarize(text: str, ctx: Context) -> str:
    """Summarize with the client's model (sampling)."""
    reply = await ctx.sample(f"Summarize: {text}", max_tokens=50, system_prompt="Be brief.")
    return f"summary: {reply['content']['text']}"


@server.tool
def media() -> list[Content]:
    """One block of every content type."""
    return [
        text("caption", annotations=annotations(audience=["user"], priority=0.5)),
        image(PNG),
        audio(WAV),
        resource_link("file:///logs/app.log", "app.log", mime_type="text/plain"),
        embedded_resource("mem://note", text="a note", mime_type="text/plain"),
    ]


@server.tool
def blocks() -> list:
    """Annotated with a bare ``list``, so it lists an outputSchema, yet it returns content blocks."""
    return [text("first"), text("second")]


@server.tool
async def slow(seconds: float, marker: str) -> str:
    """Sleep; if cancelled first, write ``cancelled`` to the file ``marker``."""
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        Path(marker).write_text("cancelled")
        raise
    return "done"


@server.tool
async def chatty(ctx: Context) -> str:
    """Log at info and debug level."""
    await ctx.info("hello from toolwire")
    await ctx.debug("too quiet")
    return "said"


@server.tool
def secret() -> str:
    """Hidden until ``unlock`` is called."""
    return "psst"


server.disable_tool("secret")


@server.tool
def unlock() -> str:
    """Show the tool ``secret`` (the tool list changes)."""
    server.enable_tool("secret")
    return "unlocked"


BOOKS = {1: "Dune", 2: "Emma", 3: "Ulysses", 10: "Beloved"}


@server.resource("interop://readme", title="Read me", mime_type="text/markdown")
def readme() -> str:
    """How to use the interop server."""
    return "# Interop\nRead books by id."


@server.resource("interop://logo")
def logo() -> bytes:
    """A 1x1 PNG (its MIME type detected from the bytes)."""
    return PNG


@server.resource("interop://config")
def config() -> dict[str, int]:
    return {"books": len(BOOKS)}


@server.resource("interop://notes", mime_type="text/plain")
def notes() -> str:
    return "a note"


@server.resource(
    "interop://books/{id}", name="book", mime_type="text/plain", complete={"id": [str(key) for key in BOOKS]}
)
def book_title(id: int) -> str:
    """A book's title by its id."""
    if id not in BOOKS:
        raise ResourceNotFound(f"interop://books/{id}")
    return BOOKS[id]


@server.prompt(title="Review code", complete={"language": ["python", "rust", "typescript"]})
def review(code: str, language: str = "python") -> list:
    """Ask for a code review.

    Args:
        code: The code to review
        language: The language it is written in
    """
    return [user_message(f"Review this {language} code:\n{code}"), assistant_message("Here is my review:")]


@server.prompt
def cover() -> PromptResult:
    """Show an image and an embedded resource."""
    note = embedded_resource("interop://notes", text="a note", mime_type="text/plain")
    return PromptResult([user_message(image(PNG)), user_message(note), "What is this?"], description="A cover")


@server.tool
def touch(uri: str) -> str:
    """Announce that the resource at ``uri`` changed."""
    server.resource_updated(uri)
    return "touched"
