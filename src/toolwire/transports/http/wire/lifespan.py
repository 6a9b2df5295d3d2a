"""The application's ASGI lifespan, run around serving."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

log = logging.getLogger("toolwire.http")


class Lifespan:
    """The application's ASGI lifespan: started before serving, shut down after."""

    def __init__(self, app: Any, state: dict[str, Any]) -> None:
        self._app = app
        self._state = state
        self._inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._started: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._stopped: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._task: asyncio.Task[None] | None = None
        self._supported = True

    async def start(self) -> None:
        """Run startup; ``RuntimeError`` with the application's message if it failed."""
        self._task = asyncio.get_running_loop().create_task(self._run())
        await self._inbox.put({"type": "lifespan.startup"})
        failure = await self._started
        if failure is not None:
            raise RuntimeError(failure)

    async def stop(self) -> None:
        if not self._supported or self._task is None or self._task.done():
            return
        await self._inbox.put({"type": "lifespan.shutdown"})
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stopped), 30)

    async def _run(self) -> None:
        scope = {"type": "lifespan", "asgi": {"version": "3.0", "spec_version": "2.0"}, "state": self._state}
        try:
            await self._app(scope, self._inbox.get, self._send)
        except BaseException as exc:
            if not self._started.done():  # an application without lifespan support
                self._supported = False
                self._started.set_result(None)
                if not isinstance(exc, Exception):
                    raise
            elif not isinstance(exc, Exception):
                raise
            else:
                log.exception("the application's lifespan failed")
        finally:
            for waiter in (self._started, self._stopped):
                if not waiter.done():
                    waiter.set_result(None)

    async def _send(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "lifespan.startup.complete":
            self._started.set_result(None)
        elif kind == "lifespan.startup.failed":
            self._started.set_result(message.get("message") or "the application failed to start")
        elif kind in ("lifespan.shutdown.complete", "lifespan.shutdown.failed") and not self._stopped.done():
            self._stopped.set_result(message.get("message"))
