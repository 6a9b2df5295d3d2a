"""Tools that run as tasks on queue workers, for tests/tasks/test_workers.py. Each task tool
notes when it starts and ends, with its task id and process id, in the file ``QUEUED_LOG``
names (the tests wait on it), and a cancelled ``slow`` that it was; ``QUEUED_TTL``: the tasks' TTL in seconds;
``QUEUED_AUDIT``: a file the audit trail is written to; ``QUEUED_SPANS``: a file the
OpenTelemetry spans of the process are written to (with the Telemetry guard)."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from toolwire import Context, Server
from toolwire.guards import Audit, Telemetry


def _spans_to(path: str) -> None:
    """Record this process's spans in ``path``, a JSON line each (name, kind, ids, process)."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    class LineExporter(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            with open(path, "a") as out:
                for span in spans:
                    parent = span.parent.span_id if span.parent is not None else None
                    fields = {"name": span.name, "kind": span.kind.name, "pid": os.getpid(), "parent": parent}
                    out.write(json.dumps({**fields, "trace": span.context.trace_id, "span": span.context.span_id}))
                    out.write("\n")
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(LineExporter()))
    trace.set_tracer_provider(provider)


guards: list[Any] = []
if "QUEUED_AUDIT" in os.environ:
    guards.append(Audit(os.environ["QUEUED_AUDIT"]))
if "QUEUED_SPANS" in os.environ:
    _spans_to(os.environ["QUEUED_SPANS"])
    guards.append(Telemetry())
server = Server("queued", task_poll_interval=0.05, task_ttl=float(os.environ.get("QUEUED_TTL", "3600")), guards=guards)


def note(what: str, ctx: Context) -> None:
    with open(os.environ["QUEUED_LOG"], "a") as log:
        log.write(f"{what} {ctx.task_id} {os.getpid()}\n")


@server.tool(task=True)
async def slow(seconds: float, ctx: Context) -> str:
    """Sleeps in steps of 50 ms, reporting each; says which process ran it."""
    note("start", ctx)
    steps = max(1, round(seconds / 0.05))
    try:
        for step in range(1, steps + 1):
            await asyncio.sleep(seconds / steps)
            await ctx.report_progress(step, steps, f"step {step} of {steps}")
    except asyncio.CancelledError:
        note("cancelled", ctx)
        raise
    note("end", ctx)
    return f"slept in {os.getpid()}"


@server.tool(task=True, idempotent=False)
async def charge(seconds: float, ctx: Context) -> str:
    """As ``slow``, declared not idempotent: never run twice."""
    note("start", ctx)
    await asyncio.sleep(seconds)
    note("end", ctx)
    return "charged"


@server.tool(task=True)
async def ask_name(ctx: Context) -> str:
    """Asks the user's name."""
    note("start", ctx)
    answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"Hello, {(answer.content or {}).get('name')}" if answer.accepted else f"no name ({answer.action})"


@server.tool(task=True)
async def chatty(steps: int, ctx: Context) -> str:
    """Logs a line and reports progress at each step."""
    for step in range(1, steps + 1):
        await ctx.info(f"line {step}")
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return "chatted"


@server.tool(task=True)
def chatty_in_thread(steps: int, ctx: Context) -> str:
    """As ``chatty``, a plain function (run on a thread)."""
    for step in range(1, steps + 1):
        ctx.info(f"line {step}")
        ctx.report_progress(step, steps, f"step {step} of {steps}")
    return "chatted"


@server.tool(task=True)
async def whoami(ctx: Context) -> str:
    """The caller the tool sees: subject and scopes, or ``nobody``."""
    identity = ctx.identity
    return "nobody" if identity is None else f"{identity.subject} {' '.join(sorted(identity.scopes))}"


@server.tool
def plain() -> int:
    """Never a task: the process that answers."""
    return os.getpid()
