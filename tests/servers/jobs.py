"""Tools that run as tasks, for the task tests. ``TOOLWIRE_TASKS_DB`` names a SQLite file to
keep the tasks in (memory otherwise), waiting ``JOBS_SQLITE_TIMEOUT`` seconds for it when
another process holds it locked; ``JOBS_REDIS`` a Redis shared with other replicas, with
``JOBS_LEASE`` seconds of lease (see ``RedisTaskStore``)."""

from __future__ import annotations

import asyncio
import os
import time

from toolwire import Context, ProtocolError, Server, ToolError

server = Server("jobs", task_store=os.environ.get("TOOLWIRE_TASKS_DB"), task_poll_interval=0.05, page_size=3)
if "JOBS_SQLITE_TIMEOUT" in os.environ:
    from toolwire.stores.sqlite import SQLiteTaskStore

    server.use_task_store(
        SQLiteTaskStore(os.environ["TOOLWIRE_TASKS_DB"], timeout=float(os.environ["JOBS_SQLITE_TIMEOUT"]))
    )
if "JOBS_REDIS" in os.environ:
    from toolwire.stores.redis import RedisTaskStore

    server.use_redis(os.environ["JOBS_REDIS"])
    server.use_task_store(RedisTaskStore(os.environ["JOBS_REDIS"], lease=float(os.environ.get("JOBS_LEASE", "15"))))


@server.tool(task=True)
async def sleep(seconds: float, ctx: Context) -> str:
    """Sleeps in steps, reporting each."""
    steps = max(1, round(seconds / 0.05))
    for step in range(1, steps + 1):
        await asyncio.sleep(seconds / steps)
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"slept {seconds:g} s"


@server.tool(task="required")
def build(target: str, ctx: Context) -> dict[str, object]:
    """Builds ``target`` on a worker thread (a plain function), only ever as a task."""
    for _ in range(5):
        if ctx.is_cancelled:
            return {"target": target, "ok": False}
        time.sleep(0.01)
    return {"target": target, "ok": True}


@server.tool(task=True)
async def ask_name(ctx: Context) -> str:
    """Asks the user's name."""
    answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"Hello, {(answer.content or {}).get('name')}" if answer.accepted else f"no name ({answer.action})"


@server.tool(task=True)
async def two_questions(ctx: Context) -> str:
    """Asks two things at once."""
    first, second = await ctx.ask_all(
        ctx.elicit("First?", {"type": "object", "properties": {"value": {"type": "string"}}}),
        ctx.elicit("Second?", {"type": "object", "properties": {"value": {"type": "string"}}}),
    )
    return f"{(first.content or {}).get('value')}+{(second.content or {}).get('value')}"


@server.tool(task=True)
async def summarize(text: str, ctx: Context) -> str:
    """Asks the client's model."""
    reply = await ctx.sample(f"Summarize: {text}", max_tokens=20)
    return f"summary: {reply['content']['text']}"


@server.tool(task=True)
def broken() -> str:
    """Fails as a tool fails (an isError result)."""
    raise ToolError("it broke")


@server.tool(task=True)
async def protocol_failure() -> str:
    """Ends with a JSON-RPC error."""
    raise ProtocolError(-32603, "Internal error: the backend is down")


@server.tool
def grow() -> str:
    """Adds a tool to this process's server: its list changes."""
    name = f"grown_{len(server.registry.all())}"

    def grown() -> str:
        return "grown"

    server.add_tool(grown, name=name)
    return name


@server.tool
def whoami() -> int:
    """The process answering (to see which replica did)."""
    return os.getpid()


@server.tool
def quick(x: int) -> int:
    """Never a task."""
    return x * 2


@server.resource("jobs://counter")
def counter() -> str:
    """A resource the ``bump`` tool changes."""
    return "counter"


@server.tool
def bump() -> str:
    """Tells subscribers that ``jobs://counter`` changed, on this process."""
    server.resource_updated("jobs://counter")
    return "bumped"


@server.tool
async def chatter(ctx: Context) -> str:
    """Logs one debug and one warning line."""
    await ctx.debug("a debug line")
    await ctx.warning("a warning line")
    return "said"


if __name__ == "__main__":
    server.run()
