"""Timeouts and concurrency limits: ``Server(timeout=, max_concurrency=)`` and the same
keywords on ``@server.tool``.

A call that runs past its timeout is cancelled (its server-side task, and the client's
request is answered) and the model reads an execution error saying so and after how long; a
resource read or prompt past the server's timeout is a ``-32603`` error. A sync tool's worker
thread cannot be stopped: it runs on until it returns, and its result is dropped.

A tool call beyond a concurrency limit (the tool's own, or the server's for all tools) waits
for a slot for at most ``queue_timeout`` seconds, then is refused with an execution error
naming the limit.
"""

from __future__ import annotations

import asyncio

from ..protocol.errors import INTERNAL_ERROR, ProtocolError
from .seam import Call, Next, Result, refusal


class Limits:
    """The guard behind the ``timeout`` and ``max_concurrency`` options (the server adds it
    when any is set; give one of your own, in ``guards``, for another ``queue_timeout``:
    it then applies the tools' limits in its place)."""

    #: Tells the server that this guard applies the tools' own limits.
    applies_tool_limits = True

    def __init__(
        self, timeout: float | None = None, max_concurrency: int | None = None, queue_timeout: float = 30.0
    ) -> None:
        self.timeout = timeout
        self.max_concurrency = max_concurrency
        self.queue_timeout = queue_timeout
        self._all = asyncio.Semaphore(max_concurrency) if max_concurrency is not None else None
        self._each: dict[str, asyncio.Semaphore] = {}
        self._watch: _Watch | None = None

    async def __call__(self, call: Call, next: Next) -> Result:
        tool = call.tool
        timeout = tool.timeout if tool is not None and tool.timeout is not None else self.timeout
        if call.method != "tools/call" or (self._all is None and (tool is None or tool.max_concurrency is None)):
            return await self._timed(call, next, timeout)
        held: list[asyncio.Semaphore] = []
        try:
            for slots, limit, whose in self._slots(call):
                if not await self._acquire(call, slots):
                    return refusal(
                        f"Tool '{call.name}' is busy: {limit} {whose} calls are already running and none finished "
                        f"within {self.queue_timeout:g} s. Try again later.",
                        "busy",
                    )
                held.append(slots)
            return await self._timed(call, next, timeout)
        finally:
            for slots in held:
                slots.release()

    def _watch_here(self) -> _Watch:
        """The deadlines' watch on the running event loop."""
        loop = asyncio.get_running_loop()
        if self._watch is None or self._watch.loop is not loop:
            self._watch = _Watch(loop)
        return self._watch

    def _slots(self, call: Call) -> list[tuple[asyncio.Semaphore, int, str]]:
        found = []
        tool = call.tool
        if tool is not None and tool.max_concurrency is not None:
            slots = self._each.get(tool.name)
            if slots is None:
                slots = self._each[tool.name] = asyncio.Semaphore(tool.max_concurrency)
            found.append((slots, tool.max_concurrency, "of its"))
        if self._all is not None and self.max_concurrency is not None:
            found.append((self._all, self.max_concurrency, "of the server's"))
        return found

    async def _acquire(self, call: Call, slots: asyncio.Semaphore) -> bool:
        if not slots.locked():
            await slots.acquire()
            return True
        deadline = Deadline(call, self.queue_timeout, self._watch_here())
        try:
            await slots.acquire()
        except asyncio.CancelledError:
            if not deadline.absorb():
                raise
            return False
        finally:
            deadline.cancel()
        return True

    async def _timed(self, call: Call, next: Next, timeout: float | None) -> Result:
        if timeout is None:
            return await next(call)
        deadline = Deadline(call, timeout, self._watch_here())
        try:
            return await next(call)
        except asyncio.CancelledError:
            if not deadline.absorb():
                raise
        finally:
            deadline.cancel()
        if call.method == "tools/call":
            return refusal(f"Tool '{call.name}' timed out after {timeout:g} s and was cancelled.", "timeout")
        raise ProtocolError(INTERNAL_ERROR, f"Internal error: {call.subject} timed out after {timeout:g} s")


class Deadline:
    """Cancels a call's task ``seconds`` from now. Unlike ``asyncio.timeout`` it may start
    while the call still runs eagerly, before it is a task (as every call starts): if the
    call finishes first, nothing happens. Deadlines share one timer (see :class:`_Watch`): starting
    and ending one costs two dict operations."""

    __slots__ = ("_call", "_entries", "fired")

    def __init__(self, call: Call, seconds: float, watch: _Watch) -> None:
        self.fired = False
        self._call = call
        self._entries = watch.add(self, seconds)

    def fire(self) -> None:
        task = self._call.session.task_of(self._call.request_id)
        if task is not None and not task.done():
            self.fired = True
            task.cancel()

    def absorb(self) -> bool:
        """In an ``except CancelledError``: whether the cancellation was this deadline's
        alone (it is then taken back, and the caller goes on)."""
        if not self.fired:
            return False
        task = asyncio.current_task()
        return task is None or task.uncancel() == 0

    def cancel(self) -> None:
        self._entries.pop(self, None)


class _Watch:
    """The deadlines of one event loop, behind one timer. Deadlines of the same length end
    in the order they start, so each length keeps an insertion-ordered dict of them (due
    times) and the timer is set for the earliest first entry; it is not moved when a
    deadline ends early, and when it fires it ends what is due and is set again if any
    deadline is left."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._lengths: dict[float, dict[Deadline, float]] = {}
        self._timer: asyncio.TimerHandle | None = None

    def add(self, deadline: Deadline, seconds: float) -> dict[Deadline, float]:
        entries = self._lengths.get(seconds)
        if entries is None:
            entries = self._lengths[seconds] = {}
        due = self.loop.time() + seconds
        entries[deadline] = due
        if self._timer is None or due < self._timer.when():
            self._arm(due)
        return entries

    def _arm(self, due: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self.loop.call_at(due, self._check)

    def _check(self) -> None:
        self._timer = None
        now = self.loop.time()
        expired: list[Deadline] = []
        next_due: float | None = None
        for entries in self._lengths.values():
            due_now = []
            for deadline, due in entries.items():
                if due > now:
                    next_due = due if next_due is None else min(next_due, due)
                    break
                due_now.append(deadline)
            for deadline in due_now:
                del entries[deadline]
            expired += due_now
        for deadline in expired:
            deadline.fire()
        if next_due is not None:
            self._arm(next_due)
