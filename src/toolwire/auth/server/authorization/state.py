"""Where the authorization server keeps everything it remembers: registered clients, pending
sign-ins, codes, refresh tokens and their families, consents, its signing key.

One small interface, :class:`AuthState`: records (JSON objects) by kind and key, each with a
lifetime. :meth:`~AuthState.take` (read and delete) and :meth:`~AuthState.add` (write unless
present) are atomic across every process sharing the store, which is what makes codes
single-use and lets exactly one of two racing refreshes win. :class:`SQLiteAuthState` (one
file, several processes of one host) is the default; :class:`RedisAuthState` serves replicas
on several hosts. Errors reaching the store propagate (the request fails with a 500 whose
details stay in the log); nothing is ever let through because the store failed.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from typing import Any, Protocol

import orjson

Record = dict[str, Any]


class AuthState(Protocol):
    """Records by ``kind`` and ``key``; ``ttl`` in seconds (each record expires)."""

    async def get(self, kind: str, key: str) -> Record | None:
        """The record, or ``None`` (never stored, deleted or expired)."""
        ...

    async def put(self, kind: str, key: str, record: Record, ttl: float) -> None:
        """Store ``record``, replacing any."""
        ...

    async def add(self, kind: str, key: str, record: Record, ttl: float) -> bool:
        """Store ``record`` unless one is there (atomically); whether it was stored."""
        ...

    async def take(self, kind: str, key: str) -> Record | None:
        """The record, deleted in the same step (atomically: one taker gets it)."""
        ...

    async def delete(self, kind: str, key: str) -> None:
        """Forget the record, if any."""
        ...

    async def close(self) -> None:
        """Let go of the connection (the records stay)."""
        ...


def open_auth_state(where: str | os.PathLike[str]) -> AuthState:
    """The store at ``where``: a ``redis://`` (``rediss://``, ``unix://``) URL, or a file path
    for SQLite."""
    if isinstance(where, str) and where.startswith(("redis://", "rediss://", "unix://")):
        return RedisAuthState(where)
    return SQLiteAuthState(where)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS auth_state (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    expires REAL NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (kind, key)
);
CREATE INDEX IF NOT EXISTS auth_state_by_expiry ON auth_state (expires);
"""


class SQLiteAuthState:
    """Records in the SQLite file at ``path`` (created with its directory), shared by the
    processes that open it. Statements run in a worker thread (they may wait up to
    ``timeout`` seconds for another process's lock); expired records are swept now and then."""

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 5.0) -> None:
        self.path = os.fspath(path)
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=timeout)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()
        self._swept = time.time()

    async def get(self, kind: str, key: str) -> Record | None:
        return await asyncio.to_thread(self._run, self._get, kind, key)

    async def put(self, kind: str, key: str, record: Record, ttl: float) -> None:
        await asyncio.to_thread(self._run, self._put, kind, key, record, ttl, True)

    async def add(self, kind: str, key: str, record: Record, ttl: float) -> bool:
        return bool(await asyncio.to_thread(self._run, self._put, kind, key, record, ttl, False))

    async def take(self, kind: str, key: str) -> Record | None:
        return await asyncio.to_thread(self._run, self._take, kind, key)

    async def delete(self, kind: str, key: str) -> None:
        await asyncio.to_thread(self._run, self._delete, kind, key)

    async def close(self) -> None:
        with self._lock:
            self._db.close()

    def _run(self, operation: Any, *arguments: Any) -> Any:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                result = operation(*arguments)
                self._sweep()
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            return result

    def _get(self, kind: str, key: str) -> Record | None:
        row = self._db.execute(
            "SELECT data FROM auth_state WHERE kind = ? AND key = ? AND expires > ?", (kind, key, time.time())
        ).fetchone()
        return orjson.loads(row[0]) if row is not None else None

    def _put(self, kind: str, key: str, record: Record, ttl: float, replace: bool) -> bool:
        if not replace and self._get(kind, key) is not None:
            return False
        self._db.execute(
            "INSERT OR REPLACE INTO auth_state (kind, key, expires, data) VALUES (?, ?, ?, ?)",
            (kind, key, time.time() + ttl, orjson.dumps(record)),
        )
        return True

    def _take(self, kind: str, key: str) -> Record | None:
        record = self._get(kind, key)
        self._delete(kind, key)
        return record

    def _delete(self, kind: str, key: str) -> None:
        self._db.execute("DELETE FROM auth_state WHERE kind = ? AND key = ?", (kind, key))

    def _sweep(self) -> None:
        now = time.time()
        if now - self._swept > 60:
            self._swept = now
            self._db.execute("DELETE FROM auth_state WHERE expires <= ?", (now,))


class RedisAuthState:
    """Records in Redis at ``url`` (``pip install 'toolwire[redis]'``): one string per record
    under ``prefix``, expiring on Redis's own clock; :meth:`take` is ``GETDEL`` and
    :meth:`add` is ``SET NX``, atomic however many replicas share the server."""

    def __init__(self, url: str, *, prefix: str = "toolwire:auth:") -> None:
        from redis.asyncio import Redis

        self.redis = Redis.from_url(url)
        self.prefix = prefix

    def _key(self, kind: str, key: str) -> str:
        return f"{self.prefix}{kind}:{key}"

    async def get(self, kind: str, key: str) -> Record | None:
        data = await self.redis.get(self._key(kind, key))
        return orjson.loads(data) if data is not None else None

    async def put(self, kind: str, key: str, record: Record, ttl: float) -> None:
        await self.redis.set(self._key(kind, key), orjson.dumps(record), px=_milliseconds(ttl))

    async def add(self, kind: str, key: str, record: Record, ttl: float) -> bool:
        return bool(await self.redis.set(self._key(kind, key), orjson.dumps(record), px=_milliseconds(ttl), nx=True))

    async def take(self, kind: str, key: str) -> Record | None:
        data = await self.redis.getdel(self._key(kind, key))
        return orjson.loads(data) if data is not None else None

    async def delete(self, kind: str, key: str) -> None:
        await self.redis.delete(self._key(kind, key))

    async def close(self) -> None:
        await self.redis.aclose()


def _milliseconds(ttl: float) -> int:
    return max(1, int(ttl * 1000))
