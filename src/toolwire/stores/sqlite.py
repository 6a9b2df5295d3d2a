"""SQLite task store: tasks in one file, kept across restarts (the standard library's
``sqlite3``, nothing to install).

The file is opened in WAL mode with ``synchronous=NORMAL``: a task written before the
process is killed is there when it starts again (an operating-system crash or power loss
may lose the last moments). Several processes on one host may share the file; updates are
serialised by SQLite's own locking (``BEGIN IMMEDIATE``). Statements are small and run on
the caller's thread (the event loop's): each takes tens of microseconds, less than handing
it to a worker thread would.

``sqlite3.Error`` (a file that cannot be opened, a full disk) propagates from the method
that met it; the task manager reports it to the client as an internal error.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from typing import Any

import orjson

from ..tasks.model import TaskRecord, runner_gone
from ..tasks.store import Change

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY,
    owner TEXT,
    session TEXT,
    created REAL NOT NULL,
    expires REAL,
    data BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS tasks_by_owner ON tasks (owner, created, id);
CREATE INDEX IF NOT EXISTS tasks_by_session ON tasks (session, created, id);
CREATE INDEX IF NOT EXISTS tasks_by_expiry ON tasks (expires);
"""


class SQLiteTaskStore:
    """Tasks in the SQLite database at ``path`` (created with its directory if missing)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        directory = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(directory, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=10.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)

    def __repr__(self) -> str:
        return f"SQLiteTaskStore({self.path!r})"

    async def create(self, task: TaskRecord) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO tasks (id, owner, session, created, expires, data) VALUES (?, ?, ?, ?, ?, ?)",
                (task.id, task.owner, task.session, task.created, task.expires, orjson.dumps(task.to_json())),
            )

    async def get(self, task_id: str) -> TaskRecord | None:
        with self._lock:
            row = self._db.execute("SELECT data, expires FROM tasks WHERE id = ?", (task_id,)).fetchone()
            if row is None:
                return None
            if row[1] is not None and row[1] <= time.time():
                self._db.execute("DELETE FROM tasks WHERE id = ?", (task_id,))
                return None
        return _record(row[0])

    async def update(self, task_id: str, change: Change) -> TaskRecord | None:
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute("SELECT data FROM tasks WHERE id = ?", (task_id,)).fetchone()
                if row is None:
                    db.execute("COMMIT")
                    return None
                task = _record(row[0])
                if change(task):
                    task.updated = time.time()
                    db.execute(
                        "UPDATE tasks SET data = ?, expires = ? WHERE id = ?",
                        (orjson.dumps(task.to_json()), task.expires, task_id),
                    )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return task

    async def page(
        self, owner: str | None, session: str | None, after: tuple[float, str] | None, limit: int
    ) -> list[TaskRecord]:
        conditions = ["owner = ?" if owner is not None else "owner IS NULL AND session IS ?"]
        arguments: list[Any] = [owner if owner is not None else session]
        conditions.append("(expires IS NULL OR expires > ?)")
        arguments.append(time.time())
        if after is not None:
            conditions.append("(created > ? OR (created = ? AND id > ?))")
            arguments += [after[0], after[0], after[1]]
        query = f"SELECT data FROM tasks WHERE {' AND '.join(conditions)} ORDER BY created, id LIMIT ?"
        with self._lock:
            rows = self._db.execute(query, (*arguments, limit)).fetchall()
        return [_record(row[0]) for row in rows]

    async def purge(self) -> int:
        with self._lock:
            return self._db.execute("DELETE FROM tasks WHERE expires <= ?", (time.time(),)).rowcount

    async def runner_gone(self, runner: str | None) -> bool:
        return runner_gone(runner)  # the file is shared by processes of one host

    async def close(self) -> None:
        with self._lock:
            self._db.close()


def _record(data: bytes) -> TaskRecord:
    return TaskRecord.from_json(orjson.loads(data))
