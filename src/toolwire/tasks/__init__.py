"""Tasks: tool calls that outlive the request that started them.

A tool declares ``task="optional"`` or ``task="required"``; a client that can take a task
(2025-11-25: a ``task`` parameter on ``tools/call``; 2026-07-28: the
``io.modelcontextprotocol/tasks`` extension) then gets a task handle at once and polls for
the result. The :class:`~toolwire.tasks.manager.TaskManager` runs them; a task store keeps
them (in memory by default, in SQLite to survive restarts). See docs/tasks.md.
"""

from .model import TaskRecord
from .store import MemoryTaskStore, TaskStore, TaskStoreBusy, TaskStoreUnusable

__all__ = ["MemoryTaskStore", "TaskRecord", "TaskStore", "TaskStoreBusy", "TaskStoreUnusable"]
