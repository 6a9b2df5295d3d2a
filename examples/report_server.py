"""The deployment example's server (examples/deploy): a long tool that runs as a task, and a
quick one that does not.

Its replicas put the task calls on a queue and workers run them (docs/workers.md):

    toolwire run examples/report_server.py --http 0.0.0.0:8000 --redis URL --queue URL
    toolwire worker examples/report_server.py --redis URL --queue URL

- ``build_report``: a task (``task=True``); it reports its progress at each of its sections,
  and its report names the host that built it: a worker's, in queue mode.
- ``host``: a plain call, answered by the replica that received it.
"""

import asyncio
import socket

from toolwire import Context, Server, ToolError

server = Server("reports")


@server.tool(read_only=True, idempotent=True, open_world=False)
def host() -> str:
    """The name of the host that answers this call."""
    return socket.gethostname()


@server.tool(task=True, read_only=True, idempotent=True, open_world=False)
async def build_report(month: str, ctx: Context, sections: int = 3) -> str:
    """Builds the report of a month (YYYY-MM), section by section (1 to 20 sections)."""
    if not 1 <= sections <= 20:
        raise ToolError(f"sections must be between 1 and 20, not {sections}")
    for section in range(sections):
        await ctx.report_progress(section, sections, f"writing section {section + 1} of {sections}")
        await asyncio.sleep(0.1)  # the work of one section
    return f"Report for {month}: {sections} sections, built on {socket.gethostname()}"
