"""Plain functions run off the event loop, handed over and back in batches.

``run_sync(call)`` is what ``loop.run_in_executor(None, call)`` does for a tool, resource
or prompt written as a plain function, at a fraction of the cost under load. Each event
loop has one *lane*: a thread that runs the calls queued for it in order. The loop wakes
the lane only when it sleeps, and the lane wakes the loop once per batch of finished calls,
not once per call, so 64 calls arriving together cost two thread wake-ups instead of 128.

A function that blocks never holds up the others for long: a call that has waited
:data:`STALL` seconds behind a call still running moves to the loop's default executor
(a ``ThreadPoolExecutor`` unless the application set its own), as do the calls that
arrive while the lane is stuck. A call cancelled before it starts never runs. Whatever a
function raises reaches its awaiting caller unchanged.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import functools
import threading
import time
from collections.abc import Callable
from typing import Any

#: Seconds a call may wait behind a running one before it moves to the default executor.
STALL = 0.002
#: Seconds an idle lane waits for work before its thread ends (the next call starts another).
IDLE = 10.0

#: Each running loop's lane; a lane whose thread ends idle removes itself (and so lets go of the loop).
_lanes: dict[asyncio.AbstractEventLoop, _Lane] = {}


def run_sync(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> asyncio.Future[Any]:
    """``fn(*args, **kwargs)`` on the running loop's lane, in a copy of the caller's context
    (as ``asyncio.to_thread`` does); the future gets its result or exception."""
    return run_sync_on(None, fn, *args, **kwargs)


def run_sync_on(
    loop: asyncio.AbstractEventLoop | None, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
) -> asyncio.Future[Any]:
    """:func:`run_sync` on ``loop``, the running loop, given by a caller that has it at hand
    (looking it up makes a ``getpid()`` system call on Python 3.11); ``None``: look it up."""
    if loop is None:
        loop = asyncio.get_running_loop()
    lane = _lanes.get(loop) or _Lane(loop)
    return lane.submit(functools.partial(contextvars.copy_context().run, fn, *args, **kwargs))


class _Lane:
    """One loop's worker thread and its queue (see the module's docstring)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._queue: collections.deque[tuple[Callable[[], Any], asyncio.Future[Any]]] = collections.deque()
        self._done: collections.deque[tuple[asyncio.Future[Any], Any, BaseException | None]] = collections.deque()
        self._mutex = threading.Lock()  # guards the queue's hand-over, _sleeping and _thread
        self._wake = threading.Lock()  # held while the lane sleeps; released to wake it
        self._wake.acquire()
        self._sleeping = False
        self._thread: threading.Thread | None = None
        self._posted = False  # a delivery of finished calls is scheduled on the loop
        self._started = 0.0  # when the running call started (0.0: none running)
        self._watching = False

    def submit(self, call: Callable[[], Any]) -> asyncio.Future[Any]:
        """Queue ``call`` (or, when the lane is stuck in a call, hand it to the default executor)."""
        future = self.loop.create_future()
        started = self._started
        if started and time.monotonic() - started > STALL:
            self._overflow(call, future)
            return future
        with self._mutex:
            self._queue.append((call, future))
            busy = not self._sleeping
            if self._sleeping:
                self._sleeping = False
                self._wake.release()
            elif self._thread is None:
                self._thread = threading.Thread(target=self._work, name="toolwire-sync", daemon=True)
                self._thread.start()
                _lanes[self.loop] = self
                busy = False
        if busy and not self._watching:
            self._watching = True
            self.loop.call_later(STALL, self._watch)
        return future

    def _overflow(self, call: Callable[[], Any], future: asyncio.Future[Any]) -> None:
        """Run ``call`` in the loop's default executor, its outcome into ``future``."""
        if future.cancelled():
            return
        running = self.loop.run_in_executor(None, call)
        running.add_done_callback(functools.partial(_transfer, future))
        future.add_done_callback(functools.partial(_cancel_if_cancelled, running))

    def _watch(self) -> None:
        """On the loop: move what waits behind a stalled call to the default executor."""
        self._watching = False
        if not self._queue:
            return
        started = self._started
        if started and time.monotonic() - started > STALL:
            with self._mutex:
                waiting = list(self._queue)
                self._queue.clear()
            for call, future in waiting:
                self._overflow(call, future)
        else:
            self._watching = True
            self.loop.call_later(STALL, self._watch)

    def _work(self) -> None:
        """The lane thread: run queued calls, post their outcomes, sleep when there are none,
        and end after :data:`IDLE` seconds without work (or once the loop is closed)."""
        queue, done = self._queue, self._done
        while True:
            with self._mutex:
                item = queue.popleft() if queue else None
                self._sleeping = item is None
            if item is None:
                if self._wake.acquire(timeout=IDLE):
                    continue
                with self._mutex:
                    if not self._sleeping:  # woken just as the wait ended
                        self._wake.acquire()
                        continue
                    self._end()
                return
            call, future = item
            if future.cancelled():
                continue
            self._started = time.monotonic()
            try:
                done.append((future, call(), None))
            except BaseException as exc:
                done.append((future, None, exc))
            self._started = 0.0
            if not self._posted:
                self._posted = True
                try:
                    self.loop.call_soon_threadsafe(self._deliver)
                except RuntimeError:  # the loop is closed: nobody waits for these any more
                    with self._mutex:
                        self._end()
                    return

    def _end(self) -> None:
        """The thread ends (with the mutex held): the next call starts another."""
        self._sleeping = False
        self._thread = None
        if _lanes.get(self.loop) is self:
            del _lanes[self.loop]

    def _deliver(self) -> None:
        """On the loop: hand every finished call's outcome to its future."""
        self._posted = False
        done = self._done
        while done:
            future, result, error = done.popleft()
            if future.cancelled():
                continue
            if error is None:
                future.set_result(result)
            else:
                future.set_exception(error)


def _transfer(future: asyncio.Future[Any], running: asyncio.Future[Any]) -> None:
    if future.cancelled():
        return
    if running.cancelled():
        future.cancel()
    elif (error := running.exception()) is not None:
        future.set_exception(error)
    else:
        future.set_result(running.result())


def _cancel_if_cancelled(running: asyncio.Future[Any], future: asyncio.Future[Any]) -> None:
    if future.cancelled():
        running.cancel()
