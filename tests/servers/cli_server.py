"""A server for the command line tests: typed parameters, media, links, progress without a total."""

import asyncio
from typing import Any

from toolwire import Context, Server, audio, embedded_resource, image, resource_link, text

server = Server("cli-test", "0.9")

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00" * 8


@server.tool
def kinds(
    count: int, flag: bool, items: list[int], name: str, note: str | None = "none", extra: Any = None
) -> dict[str, Any]:
    """Say what each argument arrived as: its Python type and value."""
    given = {"count": count, "flag": flag, "items": items, "name": name, "note": note, "extra": extra}
    return {key: [type(value).__name__, value] for key, value in given.items()}


@server.tool
def media() -> Any:
    """A caption, an image and a sound."""
    return [text("a picture and a sound"), image(PNG), audio(WAV, "audio/wav")]


@server.tool
def links() -> Any:
    """A resource link and two embedded resources, text and binary."""
    return [
        resource_link("file:///reports/q3.pdf", "q3.pdf", title="Q3 report"),
        embedded_resource("memo://today", text="remember the milk", mime_type="text/plain"),
        embedded_resource("blob://bytes", blob=b"\x00\x01\x02", mime_type="application/octet-stream"),
    ]


@server.tool
async def steps(n: int, ctx: Context) -> str:
    """Report progress without a total, n times."""
    for i in range(n):
        ctx.report_progress(i + 1, message=f"step {i + 1}")
        await asyncio.sleep(0.01)
    return "walked"


@server.tool
async def stall(ctx: Context) -> str:
    """Report progress once, then take a minute."""
    ctx.report_progress(1, message="stalling")
    await asyncio.sleep(60)
    return "done"


@server.tool
def escape() -> str:
    """Text with terminal control sequences in it: a window title, a bell."""
    return "\x1b]0;owned\x07plain\ttext"


@server.tool
def numbers() -> list[int]:
    """A value that is not an object: legacy versions send it wrapped in {"result": ...}."""
    return [1, 2, 3]


@server.tool
def framed() -> Any:
    """A text and the same text wrapped as structured content, as some frameworks send it."""
    from toolwire import ToolResult

    return ToolResult([text("just this")], structured={"result": "just this"})


@server.tool
def pictured() -> list[Any]:
    """Content blocks that are also the structured content (media inside)."""
    return [text("a picture"), image(PNG)]
