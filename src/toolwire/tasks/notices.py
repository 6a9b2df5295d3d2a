"""A worker's 2025-11-25 notifications about a task (progress, log messages), on their way to
the client through the task store: a worker's session has no client, so each is kept in the
stored task's ``notices``, in order, and whichever replica answers the client's next
``tasks/result`` or ``tasks/get`` takes them out and sends them (see :mod:`.methods`).
At most :data:`~.model.MAX_NOTICES` wait; those of a task that ended, or that the store
refused (logged), are lost."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..logs import get_logger
from .model import MAX_NOTICES, TaskRecord
from .store import TaskStore

if TYPE_CHECKING:
    from .manager import LiveTask

log = get_logger("toolwire.tasks")


def keep_notice(store: TaskStore, live: LiveTask, method: str, params: dict[str, Any]) -> None:
    """Keep one notification about ``live`` for its client (from any thread)."""
    notice = {"method": method, "params": params}
    try:
        here = asyncio.get_running_loop() is live.loop
    except RuntimeError:
        here = False
    if here:
        _queue(store, live, notice)
    else:
        live.loop.call_soon_threadsafe(_queue, store, live, notice)


def _queue(store: TaskStore, live: LiveTask, notice: dict[str, Any]) -> None:
    live.outbox.append(notice)
    if live.sending is None or live.sending.done():
        live.sending = live.loop.create_task(_store_notices(store, live))


async def _store_notices(store: TaskStore, live: LiveTask) -> None:
    """Add the outbox's notifications to the stored task, in order (one write for all that
    came meanwhile)."""
    while live.outbox:
        batch = live.outbox[:]
        del live.outbox[:]

        def keep(found: TaskRecord, batch: list[dict[str, Any]] = batch) -> bool:
            if found.terminal:
                return False
            found.notices = (found.notices + batch)[-MAX_NOTICES:]
            return True

        try:
            await store.update(live.id, keep)
        except Exception:
            log.exception("storing the notifications of task %s failed", live.id)


async def take_notices(store: TaskStore, task_id: str) -> list[dict[str, Any]]:
    """The notifications kept for the task's client (``{"method", "params"}`` each, in
    order), taken out of the store: whichever replica takes them relays them."""
    taken: list[dict[str, Any]] = []

    def take(found: TaskRecord) -> bool:
        taken[:] = found.notices
        found.notices = []
        return bool(taken)

    await store.update(task_id, take)
    return taken
