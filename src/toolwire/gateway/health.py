"""Each upstream's life in the gateway: started, served, restarted.

An :class:`UpstreamRunner` starts its upstream (a fresh proxy, connected), mounts it in the
gateway's server under its namespace, and waits. When the upstream's connection ends (its
process exits, its server goes away) the mount is taken out at once, so its tools, resources
and prompts disappear from the lists (clients get ``list_changed``); the runner then starts
it again after a delay that doubles after each failure (``BACKOFF_FIRST`` up to
``BACKOFF_MOST`` seconds; back to the first once an upstream stayed up ``STABLE`` seconds),
and mounts it again when it is back. An upstream that cannot start is retried the same way;
its error is kept in :attr:`UpstreamRunner.error` and logged once per change. Nothing an
upstream does reaches another: each runs in a task of its own and each failure is caught
where it happens. A call of a tool whose upstream is not up (a client's list may be older
than its ``list_changed``) gets a tool error saying so (:func:`explain_down`), rather than
"Unknown tool".
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from ..guards.seam import Call, Guard, Next, Result, refusal
from ..logs import get_logger
from ..protocol.errors import ProtocolError
from .upstreams import upstream_proxy

if TYPE_CHECKING:
    from ..server.server import Server
    from .config import UpstreamConfig

log = get_logger("toolwire.gateway")

BACKOFF_FIRST = 0.5
BACKOFF_MOST = 30.0
#: Seconds an upstream must stay up for its next failure to be retried after BACKOFF_FIRST again.
STABLE = 60.0


class UpstreamRunner:
    """Runs one upstream for the gateway's ``server`` (see the module). ``state``:
    ``"stopped"`` (not started yet, or stopped), ``"starting"``, ``"up"`` or ``"down"``
    (failed or ended: restarting after a delay); ``error``: why it is down; ``version``: the
    protocol version the upstream speaks with the gateway while it is up."""

    def __init__(self, config: UpstreamConfig, server: Server, separator: str) -> None:
        self.config = config
        self.server = server
        self.separator = separator
        self.state = "stopped"
        self.error: str | None = None
        self.version: str | None = None
        self.restarts = 0
        self._task: asyncio.Task[None] | None = None
        self._settled = asyncio.Event()  # the first attempt ended (up, or failed)
        self._mounted: Server | None = None

    @property
    def name(self) -> str:
        return self.config.name

    def start(self) -> None:
        """Start running the upstream in the background (nothing if it runs already)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"upstream {self.name}")

    async def started(self) -> None:
        """Wait until the first attempt to start it has ended (it is up, or it failed)."""
        self.start()
        await self._settled.wait()

    async def stop(self) -> None:
        """Stop the upstream and take it out of the gateway's server."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.state = "stopped"

    async def _run(self) -> None:
        delay = BACKOFF_FIRST
        while True:
            began = time.monotonic()
            self.state = "starting"
            ended = await self._serve_once()
            if ended is not None and time.monotonic() - began >= STABLE:
                delay = BACKOFF_FIRST
            self.state = "down"
            self._settled.set()
            await asyncio.sleep(delay)
            delay = min(delay * 2, BACKOFF_MOST)
            self.restarts += 1

    async def _serve_once(self) -> str | None:
        """Start, mount and serve the upstream until its connection ends: why it ended, or
        ``None`` if it did not start (``error`` says why)."""
        loop = asyncio.get_running_loop()
        closed = asyncio.Event()
        reasons: list[str] = []

        def on_closed(reason: str) -> None:
            reasons.append(reason)
            loop.call_soon_threadsafe(closed.set)

        try:
            proxy = upstream_proxy(self.config, on_closed)
            await proxy.start()
        except Exception as exc:
            self._failed(str(exc))
            return None
        try:
            try:
                self.server.mount(proxy, self.config.namespace, separator=self.separator, strict=False)
            except ValueError as exc:
                self._failed(f"cannot be served: {exc}")
                return None
            self._mounted = proxy
            self.state, self.error, self.version = "up", None, proxy.lifespan_state.version
            self._settled.set()
            log.info("upstream %r is up", self.name)
            await closed.wait()
            reason = reasons[0] if reasons else "its connection ended"
            self.error = f"stopped: {reason}"
            log.warning("upstream %r stopped (%s): restarting it", self.name, reason)
            return reason
        finally:
            self._unmount()
            await proxy.stop()

    def _unmount(self) -> None:
        if self._mounted is not None:
            self._mounted, self.version = None, None
            self.server.unmount(self.config.namespace)

    def _failed(self, error: str) -> None:
        if error != self.error:
            log.warning("upstream %r cannot start: %s", self.name, error)
        self.error = error


def explain_down(runners: Callable[[], Iterable[UpstreamRunner]]) -> Guard:
    """A guard turning a call of an unknown tool whose namespace is an upstream that is not
    up (``runners()``: the gateway's) into a tool error naming the upstream and its state;
    every other call passes as it is."""

    async def explain(call: Call, next: Next) -> Result:
        try:
            return await next(call)
        except ProtocolError:
            if call.tool is not None or call.method != "tools/call" or not isinstance(call.name, str):
                raise
            runner = _serving(runners(), call.name)
            if runner is None or runner.state == "up":
                raise
            if runner.state == "down":
                said = f"the server {runner.name!r} is down ({runner.error}): the gateway is restarting it"
            else:
                said = f"the server {runner.name!r} is starting"
            return refusal(f"{said}; call {call.name!r} again in a moment", kind="unavailable")

    return explain


def _serving(runners: Iterable[UpstreamRunner], tool: str) -> UpstreamRunner | None:
    """The runner of the upstream whose namespace the name ``tool`` starts with, if any."""
    for runner in runners:
        if tool.startswith(runner.config.namespace + runner.separator):
            return runner
    return None
