"""A server with limits and a guard of its own, for the guards' tests."""

import asyncio
import time
from typing import Any

from toolwire import Server
from toolwire.guards import Call, Next, refusal


async def no_secrets(call: Call, next: Next) -> dict[str, Any]:
    """Refuses any call whose arguments mention "secret"; marks what it let through."""
    if call.arguments is not None and "secret" in str(call.arguments):
        return refusal(f"{call.subject} was refused: it mentions a secret")
    result = await next(call)
    if call.method == "tools/call" and not result.get("isError"):
        result = {**result, "content": [*result["content"], {"type": "text", "text": f"[guarded {call.version}]"}]}
    return result


server = Server("guarded", timeout=1.0, max_concurrency=4, guards=[no_secrets])


@server.tool(timeout=0.5)
async def slow(seconds: float) -> str:
    """Sleep for ``seconds`` (cancelled after half a second)."""
    await asyncio.sleep(seconds)
    return "woke up"


@server.tool(timeout=0.5)
def slow_sync(seconds: float) -> str:
    """Sleep on a worker thread."""
    time.sleep(seconds)
    return "woke up"


@server.tool(max_concurrency=1)
async def single(seconds: float) -> str:
    """One at a time."""
    await asyncio.sleep(seconds)
    return "done"


@server.tool
async def echo(text: str) -> str:
    """Echo."""
    return text


@server.tool
async def own_task() -> str:
    """Uses what needs a task from its first line: asyncio.timeout, current_task()."""
    task = asyncio.current_task()
    async with asyncio.timeout(5):
        await asyncio.sleep(0)
    return "own task" if task is not None and task is asyncio.current_task() else "no task"


@server.tool
async def forever() -> str:
    """Runs past the server's timeout."""
    await asyncio.sleep(3600)
    return "never"


@server.resource("note://slow")
async def slow_note() -> str:
    await asyncio.sleep(3600)
    return "never"
