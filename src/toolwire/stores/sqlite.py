"""SQLite task store: tasks in one file, kept across restarts (the standard library's
``sqlite3``, nothing to install).

The file is opened in WAL mode with ``synchronous=NORMAL``: a task written before the
process is killed is there when it starts again (an operating-system crash or power loss
may lose the last moments). Several processes on one host may share the file; updates are
serialised by SQLite's own locking (``BEGIN IMMEDIATE``).

No statement waits for a lock on the event loop. A statement runs there at once (tens of
microseconds) when the file is free: the connection's busy timeout is 0 there, so SQLite
answers "busy" instead of waiting. An operation that meets a file another process holds
locked is handed to the store's own thread, which waits up to ``timeout`` seconds for it
while the loop goes on serving everything else; while that thread has work, later
operations queue behind it, so they keep their order, and the connection is only ever used
by one thread at a time.

Opening checks the file: one that is not an SQLite database, is corrupted or cannot be
written is refused there with :class:`TaskStoreUnusable`, one line saying why. Later,
``sqlite3.Error`` (a full disk) propagates from the method that met it, and a file locked
longer than ``timeout`` raises :class:`~toolwire.tasks.store.TaskStoreBusy`; the task manager
reports either to the client as an internal error.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import orjson

from ..tasks.model import TaskRecord, runner_gone
from ..tasks.store import Change, TaskStoreBusy, TaskStoreUnusable

T = TypeVar("T")

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
_INSERT = "INSERT INTO tasks (id, owner, session, created, expires, data) VALUES (?, ?, ?, ?, ?, ?)"


class SQLiteTaskStore:
    """Tasks in the SQLite database at ``path`` (created with its directory if missing).
    ``timeout``: seconds an operation waits for a file another process holds locked.
    :class:`TaskStoreUnusable` when the file cannot be used."""

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 5.0) -> None:
        self.path = os.fspath(path)
        self.timeout = timeout
        self._db = self._open()
        self._lane = _Lane()

    def _open(self) -> sqlite3.Connection:
        try:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=self.timeout)
        except (OSError, sqlite3.Error) as exc:
            raise TaskStoreUnusable(f"cannot open the task store {self.path}: {_reason(exc)}") from None
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            if db.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise sqlite3.DatabaseError("database disk image is malformed")
            db.executescript(_SCHEMA)
            db.execute("PRAGMA busy_timeout = 0")  # from now on "busy" at once: see _run
            self._probe(db)
        except sqlite3.Error as exc:
            db.close()
            raise TaskStoreUnusable(f"cannot use {self.path} as the task store: {_reason(exc)}") from None
        return db

    @staticmethod
    def _probe(db: sqlite3.Connection) -> None:
        """A write (expired tasks purged), to learn now that the file cannot take one; a file
        another process holds locked is one it writes to, and passes at once."""
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if not _busy(exc):
                raise
            return
        db.execute("DELETE FROM tasks WHERE expires <= ?", (time.time(),))
        db.execute("COMMIT")

    def __repr__(self) -> str:
        return f"SQLiteTaskStore({self.path!r})"

    async def _run(self, work: Callable[..., T], *arguments: Any) -> T:
        """``work(*arguments)`` (which must do nothing or all when SQLite is busy): here when
        the file is free and the store's thread idle, else on that thread, waiting for the
        file; :class:`TaskStoreBusy` past the timeout."""
        if not self._lane.pending:
            try:
                return work(*arguments)
            except sqlite3.OperationalError as exc:
                if not _busy(exc):
                    raise
        try:
            return await self._lane.run(self._patiently, (work, arguments))
        except sqlite3.OperationalError as exc:
            if _busy(exc):
                raise TaskStoreBusy(
                    f"the task store {os.path.basename(self.path)} stayed locked by another process for "
                    f"{self.timeout:g} s"
                ) from None
            raise

    def _patiently(self, work: Callable[..., T], arguments: tuple[Any, ...]) -> T:
        """``work(*arguments)`` waiting up to ``timeout`` for a locked file (on the thread)."""
        self._db.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
        try:
            return work(*arguments)
        finally:
            self._db.execute("PRAGMA busy_timeout = 0")

    async def create(self, task: TaskRecord) -> None:
        row = (task.id, task.owner, task.session, task.created, task.expires, orjson.dumps(task.to_json()))
        await self._run(self._db.execute, _INSERT, row)

    async def get(self, task_id: str) -> TaskRecord | None:
        data = await self._run(self._get, task_id)
        return _record(data) if data is not None else None

    def _get(self, task_id: str) -> bytes | None:
        row = self._db.execute("SELECT data, expires FROM tasks WHERE id = ?", (task_id,)).fetchone()
        if row is None:
            return None
        if row[1] is not None and row[1] <= time.time():
            self._db.execute("DELETE FROM tasks WHERE id = ?", (task_id,))
            return None
        return bytes(row[0])

    async def update(self, task_id: str, change: Change) -> TaskRecord | None:
        return await self._run(self._update, task_id, change)

    def _update(self, task_id: str, change: Change) -> TaskRecord | None:
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
        rows = await self._run(self._rows, query, (*arguments, limit))
        return [_record(row[0]) for row in rows]

    def _rows(self, query: str, arguments: tuple[Any, ...]) -> list[Any]:
        return self._db.execute(query, arguments).fetchall()

    async def purge(self) -> int:
        return await self._run(self._purge)

    def _purge(self) -> int:
        return self._db.execute("DELETE FROM tasks WHERE expires <= ?", (time.time(),)).rowcount

    async def runner_gone(self, runner: str | None) -> bool:
        return runner_gone(runner)  # the file is shared by processes of one host

    async def close(self) -> None:
        await self._run(self._db.close)
        self._lane.stop()


class _Lane:
    """A thread of its own running the work handed to it, in order; each outcome is set on a
    future of the caller's event loop. ``pending``: work handed over and not yet settled on
    the loop (a caller that stopped waiting included)."""

    def __init__(self) -> None:
        self.pending = 0
        self._work: queue.SimpleQueue[tuple[asyncio.Future[Any], Callable[..., Any], tuple[Any, ...]] | None]
        self._work = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="toolwire-sqlite", daemon=True).start()

    def run(self, work: Callable[..., T], arguments: tuple[Any, ...]) -> asyncio.Future[T]:
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self.pending += 1
        self._work.put((future, work, arguments))
        return future

    def stop(self) -> None:
        self._work.put(None)

    def _serve(self) -> None:
        while (item := self._work.get()) is not None:
            future, work, arguments = item
            try:
                outcome, failure = work(*arguments), None
            except Exception as exc:
                outcome, failure = None, exc
            with contextlib.suppress(RuntimeError):  # the caller's loop has closed
                future.get_loop().call_soon_threadsafe(self._settle, future, outcome, failure)

    def _settle(self, future: asyncio.Future[Any], outcome: Any, failure: Exception | None) -> None:
        self.pending -= 1
        if future.done():  # the caller stopped waiting: the work was done all the same
            return
        if failure is None:
            future.set_result(outcome)
        else:
            future.set_exception(failure)


def _busy(exc: sqlite3.OperationalError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


def _reason(exc: BaseException) -> str:
    """Why SQLite refused a file, in words that say what to do."""
    text = str(exc)
    if "not a database" in text or "malformed" in text:
        return f"the file is not an SQLite database or is corrupted ({text}); move it away or name another file"
    if "readonly" in text or "read-only" in text:
        return f"the file cannot be written ({text}); give this process write access to it and its directory"
    if isinstance(exc, OSError):
        return exc.strerror or text
    return text


def _record(data: bytes) -> TaskRecord:
    return TaskRecord.from_json(orjson.loads(data))
