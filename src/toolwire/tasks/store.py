"""The interface a task store implements, and the in-memory one (the default).

Stores keep :class:`~toolwire.tasks.model.TaskRecord` objects and nothing else: no protocol,
no running code. A store is used from one event loop; its methods are coroutines so that a
networked store (Redis) fits the same interface. Expired tasks are never returned: ``get``
deletes one it finds expired, and :meth:`TaskStore.purge` removes them all.

Backends: :class:`MemoryTaskStore` (here; lost with the process),
:class:`~toolwire.stores.sqlite.SQLiteTaskStore` (one file, survives restarts).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from ..errors import ToolwireError
from .model import TaskRecord, runner_gone


class TaskStoreBusy(ToolwireError):
    """A store could not serve an operation in time (a file locked by another process); the
    message says so in words fit for the client."""


class TaskStoreUnusable(ToolwireError):
    """A store cannot serve at all (a file that is not a database, is corrupted or read-only),
    found when it is opened; the message is one line saying which and why."""


#: Changes a record in place; returns ``False`` to leave it as it was.
Change = Callable[[TaskRecord], bool]


class TaskStore(Protocol):
    """Where tasks live. ``page`` lists ``owner``'s tasks (or, for ``owner=None``, those of
    ``session``) ordered by creation, from just after ``after`` (a ``(created, id)`` pair)."""

    async def create(self, task: TaskRecord) -> None: ...

    async def get(self, task_id: str) -> TaskRecord | None: ...

    async def update(self, task_id: str, change: Change) -> TaskRecord | None:
        """Apply ``change`` atomically; the record as it is afterwards (``None`` if unknown)."""
        ...

    async def page(
        self, owner: str | None, session: str | None, after: tuple[float, str] | None, limit: int
    ) -> list[TaskRecord]: ...

    async def purge(self) -> int:
        """Delete every expired task; how many went."""
        ...

    async def runner_gone(self, runner: str | None) -> bool:
        """Whether the process ``runner`` (a task's, :data:`~toolwire.tasks.model.RUNNER`) has
        certainly ended: its unfinished tasks then read as interrupted.
        :func:`~toolwire.tasks.model.runner_gone` tells for processes of this host."""
        ...

    async def close(self) -> None: ...


class MemoryTaskStore:
    """Tasks in this process's memory: fast, and gone when it ends. ``max_tasks`` bounds
    them: at the cap, expired tasks are purged, then the oldest finished ones dropped.
    Records go in and out as copies, as they would through any other store."""

    def __init__(self, max_tasks: int = 100_000) -> None:
        self.max_tasks = max_tasks
        self._tasks: dict[str, TaskRecord] = {}

    async def create(self, task: TaskRecord) -> None:
        if len(self._tasks) >= self.max_tasks:
            await self.purge()
            finished = [record for record in self._tasks.values() if record.terminal]
            for record in sorted(finished, key=lambda record: record.updated)[: max(1, len(finished) // 10)]:
                del self._tasks[record.id]
        self._tasks[task.id] = task.copy()

    async def get(self, task_id: str) -> TaskRecord | None:
        task = self._find(task_id)
        return task.copy() if task is not None else None

    def _find(self, task_id: str) -> TaskRecord | None:
        task = self._tasks.get(task_id)
        if task is not None and task.expired():
            del self._tasks[task_id]
            return None
        return task

    async def update(self, task_id: str, change: Change) -> TaskRecord | None:
        task = self._find(task_id)
        if task is None:
            return None
        changed = task.copy()
        if change(changed):
            changed.updated = time.time()
            self._tasks[task_id] = changed
        return changed.copy()

    async def page(
        self, owner: str | None, session: str | None, after: tuple[float, str] | None, limit: int
    ) -> list[TaskRecord]:
        now = time.time()
        mine = [
            task
            for task in self._tasks.values()
            if (task.owner == owner if owner is not None else task.owner is None and task.session == session)
            and not task.expired(now)
            and (after is None or (task.created, task.id) > after)
        ]
        mine.sort(key=lambda task: (task.created, task.id))
        return [task.copy() for task in mine[:limit]]

    async def purge(self) -> int:
        now = time.time()
        expired = [task_id for task_id, task in self._tasks.items() if task.expired(now)]
        for task_id in expired:
            del self._tasks[task_id]
        return len(expired)

    async def runner_gone(self, runner: str | None) -> bool:
        return runner_gone(runner)

    async def close(self) -> None:
        return None
