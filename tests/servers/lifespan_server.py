"""A server with a lifespan, for tests/server/test_lifespan.py: it notes "opened" and "closed" in the
file ``LIFESPAN_LOG`` names, and fails to start when ``LIFESPAN_FAIL`` is set."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any

from toolwire import Context, Server


def note(word: str) -> None:
    log = os.environ.get("LIFESPAN_LOG")
    if log:
        with open(log, "a") as file:
            file.write(word + "\n")


async def lifespan(server: Server) -> AsyncIterator[dict[str, Any]]:
    if os.environ.get("LIFESPAN_FAIL"):
        raise RuntimeError("no database to connect to")
    note("opened")
    try:
        yield {"greeting": "hello from the lifespan", "server": server.name}
    finally:
        note("closed")


server = Server("lifespan", lifespan=lifespan)


@server.tool
def state(ctx: Context) -> str:
    """What the lifespan yielded."""
    return f"{ctx.lifespan['greeting']} of {ctx.lifespan['server']}"
