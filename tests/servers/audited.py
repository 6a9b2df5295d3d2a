"""A server that audits every call to the file named by $AUDIT_FILE (with the durability
$AUDIT_DURABILITY, "flush" by default), for the audit tests."""

import asyncio
import os

from toolwire import Context, Server
from toolwire.guards import Audit, FileSink

sink = FileSink(os.environ["AUDIT_FILE"], durability=os.environ.get("AUDIT_DURABILITY", "flush"))
server = Server("audited", guards=[Audit(sink)])


@server.tool
async def slow(seconds: float, note: str = "") -> str:
    """Sleep."""
    await asyncio.sleep(seconds)
    return "done"


@server.tool
async def hold(ctx: Context) -> str:
    """Say it runs (a progress notification), then wait a minute."""
    ctx.report_progress(0)
    await asyncio.sleep(60)
    return "done"


@server.tool
def leak(password: str) -> str:
    """Fail with the password in the exception's message."""
    raise RuntimeError(f"could not log in with password {password} and key sk-ant-abcdefghijklmnopqrstuvwx")
