"""Backends for the state features keep, behind the small interfaces those features define.

- :mod:`.redis`: Redis (``pip install 'toolwire[redis]'``), for servers with several
  replicas: :class:`~.redis.RedisLimiter` for :class:`~toolwire.guards.RateLimit`,
  :class:`~.redis.RedisTaskStore` for tasks.
- :mod:`.sqlite`: :class:`~.sqlite.SQLiteTaskStore`, tasks in a file.

Each backend is imported only when chosen (:func:`open_task_store` picks one from where the
server was told to keep its tasks); features never import one.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..tasks.store import TaskStore


def open_task_store(where: str | os.PathLike[str]) -> TaskStore:
    """The task store at ``where``: a ``redis://`` (``rediss://``, ``unix://``) URL, or a
    file path for SQLite."""
    if isinstance(where, str) and where.startswith(("redis://", "rediss://", "unix://")):
        from .redis import RedisTaskStore

        return RedisTaskStore(where)
    from .sqlite import SQLiteTaskStore

    return SQLiteTaskStore(where)
