"""A server that audits every call to the file named by $AUDIT_FILE, for the audit tests."""

import asyncio
import os

from toolwire import Server
from toolwire.guards import Audit, FileSink

server = Server("audited", guards=[Audit(FileSink(os.environ["AUDIT_FILE"]))])


@server.tool
async def slow(seconds: float, note: str = "") -> str:
    """Sleep."""
    await asyncio.sleep(seconds)
    return "done"


@server.tool
def leak(password: str) -> str:
    """Fail with the password in the exception's message."""
    raise RuntimeError(f"could not log in with password {password} and key sk-ant-abcdefghijklmnopqrstuvwx")
