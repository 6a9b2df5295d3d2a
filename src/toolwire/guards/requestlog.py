"""One log line per request that runs your code: ``toolwire run -v`` turns it on.

    server.use(RequestLog())      # logger "toolwire.requests", level INFO

Each line: the method and what it names, how it ended (``ok``, ``tool error``, ``error
-32602``, ``cancelled``, the exception's type) and how long it took:
``tools/call echo: ok in 0.4 ms``. Arguments are never logged.
"""

from __future__ import annotations

import asyncio
import logging
import time

from ..logs import get_logger
from ..protocol.errors import ProtocolError
from .seam import Call, Next, Result


class RequestLog:
    """The guard (see the module's description); ``level``: of the lines."""

    outermost = True

    def __init__(self, level: int = logging.INFO) -> None:
        self.level = level
        self.log = get_logger("toolwire.requests")

    async def __call__(self, call: Call, next: Next) -> Result:
        if not self.log.isEnabledFor(self.level):
            return await next(call)
        began = time.perf_counter()
        outcome = "error"
        try:
            result = await next(call)
            outcome = "tool error" if result.get("isError") else "ok"
            return result
        except ProtocolError as exc:
            outcome = f"error {exc.code}"
            raise
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        except Exception as exc:
            outcome = type(exc).__name__
            raise
        finally:
            took = (time.perf_counter() - began) * 1000
            self.log.log(self.level, "%s: %s in %.1f ms", call.subject, outcome, took)
