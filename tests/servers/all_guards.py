"""A server with every built-in guard on, auditing to the file named by $AUDIT_FILE, for the
tests that run the guards over real transports in both eras."""

import asyncio
import os

from toolwire import Server
from toolwire.guards import Audit, FileSink, RateLimit, SizeCaps

server = Server(
    "all-guards",
    guards=[
        Audit(FileSink(os.environ["AUDIT_FILE"])),
        SizeCaps(max_argument_bytes=200, max_result_bytes=300),
        RateLimit("3/minute", burst=3, tools={"limited"}),
    ],
    timeout=0.5,
)


@server.tool
async def echo(text: str) -> str:
    """Echo the text."""
    return text


@server.tool
async def repeat(text: str, times: int) -> str:
    """The text, ``times`` times."""
    return text * times


@server.tool
async def limited() -> str:
    """May be called three times a minute."""
    return "allowed"


@server.tool
async def stall() -> str:
    """Never ends on its own."""
    await asyncio.sleep(60)
    return "never"
