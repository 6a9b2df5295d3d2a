"""Redis, for state shared by several server processes (``pip install 'toolwire[redis]'``).

:class:`RedisEventStore` keeps the events of resumable Streamable HTTP streams: a Redis
Stream per SSE stream, trimmed to the newest ``max_events`` and dropped ``ttl`` seconds after
its last event, so that a client can resume with ``Last-Event-ID`` from any process.

:class:`RedisTaskStore` keeps tasks: one string per task (its JSON), expiring with the task's
TTL on Redis's own clock, and a sorted set per owner (and per legacy session) for
``tasks/list``, trimmed of expired tasks as it is read. Updates are optimistic
transactions (``WATCH``/``MULTI``): a change made by two replicas at once is applied one
after the other, never lost.

:class:`RedisLimiter` keeps :class:`~toolwire.guards.RateLimit`'s token buckets in Redis: one
hash per bucket, updated by a Lua script, so that a step is atomic however many processes
take from the same bucket, and timed by Redis's own clock, so that replicas whose clocks
differ agree. Buckets expire once they would be full again.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import orjson

from ..logs import get_logger
from ..tasks.model import QUEUED, RUNNER, TaskRecord, runner_gone
from ..tasks.store import Change

log = get_logger("toolwire.tasks")
T = TypeVar("T")

#: KEYS[1]: the bucket; ARGV: rate (tokens a second), burst. Returns {taken, wait seconds}.
TAKE = """
local now = redis.call('TIME')
now = tonumber(now[1]) + tonumber(now[2]) / 1000000
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = (1 - tokens) / rate
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1000)
return tostring(wait)
"""


class RedisLimiter:
    """Token buckets in Redis. ``redis``: a URL (``redis://127.0.0.1:6379/0``) or a
    ``redis.asyncio.Redis`` client; ``prefix``: of the bucket keys. Errors reaching Redis are
    ``redis`` exceptions (the call then fails with an internal error: it is not let through)."""

    def __init__(self, redis: str | Any = "redis://127.0.0.1:6379/0", prefix: str = "toolwire:rate:") -> None:
        if isinstance(redis, str):
            from ..extras import needs

            with needs("redis", "RedisLimiter"):
                import redis.asyncio as aioredis
            redis = aioredis.Redis.from_url(redis)
        self.redis = redis
        self.prefix = prefix
        self._take = redis.register_script(TAKE)

    async def take(self, key: str, rate: float, burst: int) -> float:
        wait = await self._take(keys=[self.prefix + key], args=[repr(rate), burst])
        return float(wait)

    async def close(self) -> None:
        await self.redis.aclose()


class RedisEventStore:
    """An :class:`~toolwire.transports.http.sse.EventStore` in Redis. ``redis``: a URL or a
    ``redis.asyncio.Redis`` client. Errors reaching Redis are ``redis`` exceptions."""

    def __init__(
        self,
        redis: str | Any = "redis://127.0.0.1:6379/0",
        prefix: str = "toolwire:events:",
        max_events: int = 1000,
        ttl: float = 300.0,
    ) -> None:
        self.redis: Any = _client(redis)
        self.prefix = prefix
        self.max_events = max_events
        self.ttl_ms = int(ttl * 1000)

    async def store(self, stream: str, sequence: int, data: bytes) -> None:
        key = self.prefix + stream
        async with self.redis.pipeline(transaction=True) as pipe:
            # the stream's own sequence is the entry id: replays come back in order, once
            pipe.xadd(key, {"d": data}, id=f"{sequence}-1", maxlen=self.max_events, approximate=False)
            pipe.pexpire(key, self.ttl_ms)
            await pipe.execute()

    async def replay_after(self, stream: str, sequence: int) -> list[tuple[int, bytes]]:
        start = f"({sequence}-1" if sequence >= 0 else "-"  # after the event with that sequence
        entries = await self.redis.xrange(self.prefix + stream, min=start, max="+")
        return [(int(entry_id.split(b"-")[0]), fields[b"d"]) for entry_id, fields in entries]

    async def forget(self, stream: str) -> None:
        await self.redis.delete(self.prefix + stream)

    async def close(self) -> None:
        await self.redis.aclose()


class RedisTaskStore:
    """Tasks in Redis, shared by every replica that uses the same ``redis`` (a URL or a
    ``redis.asyncio.Redis`` client) and ``prefix``. Errors reaching Redis are ``redis``
    exceptions; the task manager answers them as internal errors.

    A process that creates tasks holds a *lease* in Redis, renewed every third of ``lease``
    seconds (a failed renewal is logged, and tried again): once a process has not renewed
    its lease for ``lease`` seconds, killed or cut off, its unfinished tasks read as
    interrupted on every replica, whatever host (or container) it ran on."""

    def __init__(
        self, redis: str | Any = "redis://127.0.0.1:6379/0", prefix: str = "toolwire:tasks:", lease: float = 15.0
    ) -> None:
        if isinstance(redis, str):
            from ..extras import needs

            with needs("redis", "RedisTaskStore"):
                import redis.asyncio as aioredis
            redis = aioredis.Redis.from_url(redis)
        self.redis: Any = redis
        self.prefix = prefix
        self.lease = lease
        self._renewing: asyncio.Task[None] | None = None

    def __repr__(self) -> str:
        return f"RedisTaskStore({self.prefix!r})"

    def _key(self, task_id: str) -> str:
        return f"{self.prefix}task:{task_id}"

    def _index(self, owner: str | None, session: str | None) -> str:
        return f"{self.prefix}owner:{owner}" if owner is not None else f"{self.prefix}session:{session}"

    def _lease_key(self, runner: str) -> str:
        return f"{self.prefix}runner:{runner}"

    async def create(self, task: TaskRecord) -> None:
        expires = task.expires
        index = self._index(task.owner, task.session)
        if task.runner == RUNNER and self._renewing is None:
            await self.redis.set(self._lease_key(RUNNER), b"", px=_ms(self.lease))
            self._renewing = asyncio.get_running_loop().create_task(self._renew_lease())
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.set(self._key(task.id), orjson.dumps(task.to_json()), pxat=_ms(expires) if expires else None)
            pipe.zadd(index, {task.id: task.created})
            if expires is None:
                pipe.persist(index)
            else:
                pipe.pexpireat(index, _ms(expires), gt=True)  # the index lives as long as its last task
            await pipe.execute()

    async def get(self, task_id: str) -> TaskRecord | None:
        data = await self.redis.get(self._key(task_id))
        return TaskRecord.from_json(orjson.loads(data)) if data is not None else None

    async def update(self, task_id: str, change: Change) -> TaskRecord | None:
        key = self._key(task_id)

        async def apply(pipe: Any, data: bytes | None) -> TaskRecord | None:
            if data is None:
                return None
            task = TaskRecord.from_json(orjson.loads(data))
            if not change(task):
                return task
            task.updated = time.time()
            expires = task.expires
            pipe.multi()
            pipe.set(key, orjson.dumps(task.to_json()), pxat=_ms(expires) if expires else None)
            await pipe.execute()
            return task

        return await watched(self.redis, key, apply)

    async def page(
        self, owner: str | None, session: str | None, after: tuple[float, str] | None, limit: int
    ) -> list[TaskRecord]:
        index = self._index(owner, session)
        start = after[0] if after is not None else "-inf"
        found: list[TaskRecord] = []
        offset = 0
        while len(found) < limit:
            ids: list[bytes] = await self.redis.zrangebyscore(index, start, "+inf", start=offset, num=limit * 2)
            if not ids:
                break
            offset += len(ids)
            records = await self.redis.mget([self._key(task_id.decode()) for task_id in ids])
            gone = [task_id for task_id, data in zip(ids, records, strict=True) if data is None]
            if gone:
                await self.redis.zrem(index, *gone)
                offset -= len(gone)
            for data in records:
                if data is None:
                    continue
                task = TaskRecord.from_json(orjson.loads(data))
                if (after is None or (task.created, task.id) > after) and len(found) < limit:
                    found.append(task)
        return found

    async def purge(self) -> int:
        return 0  # Redis expires tasks itself; indexes are trimmed as they are read

    async def _renew_lease(self) -> None:
        key = self._lease_key(RUNNER)
        while True:
            await asyncio.sleep(self.lease / 3)
            try:
                await self.redis.set(key, b"", px=_ms(self.lease))
            except Exception as exc:
                log.warning("renewing this process's lease on its tasks failed (tried again): %r", exc)

    async def runner_gone(self, runner: str | None) -> bool:
        if runner is None or runner == RUNNER or runner.startswith(QUEUED):
            return False
        return runner_gone(runner) or not await self.redis.exists(self._lease_key(runner))

    async def close(self) -> None:
        if self._renewing is not None:
            self._renewing.cancel()
            self._renewing = None
            with contextlib.suppress(Exception):
                await self.redis.delete(self._lease_key(RUNNER))
        await self.redis.aclose()


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


async def watched(redis: Any, key: str, step: Callable[[Any, bytes | None], Awaitable[T]]) -> T:
    """``step(pipe, value)`` for ``key``'s value, read under ``WATCH``: ``step`` queues its
    writes after ``pipe.multi()`` and executes them, and they apply only if nothing changed
    ``key`` since it was read; otherwise it runs again on the new value (another replica's
    change is never lost, nor overwritten). ``redis`` exceptions when it cannot be reached."""
    from redis.exceptions import WatchError

    async with redis.pipeline(transaction=True) as pipe:
        while True:
            try:
                await pipe.watch(key)
                return await step(pipe, await pipe.get(key))
            except WatchError:
                continue


async def shared_state_keys(redis: str | Any, key: str = "toolwire:state-keys") -> list[bytes]:
    """The ``requestState`` sealing keys every replica using ``redis`` shares: made once (by
    the first replica to ask, atomically), newest first. ``redis`` exceptions when it cannot
    be reached."""
    import base64
    import os

    client = _client(redis)
    try:
        fresh = orjson.dumps([base64.b64encode(os.urandom(32)).decode()])
        await client.set(key, fresh, nx=True)  # only the first replica's key is kept
        stored = orjson.loads(await client.get(key))
    finally:
        if isinstance(redis, str):
            await client.aclose()
    return [base64.b64decode(item) for item in stored]


async def rotate_state_keys(redis: str | Any, key: str = "toolwire:state-keys", keep: int = 2) -> None:
    """Put a new sealing key first, keeping the ``keep - 1`` newest old ones (states sealed
    with them stay valid until they expire); replicas take it up when they next start."""
    import base64
    import os

    client = _client(redis)
    try:
        current = orjson.loads(await client.get(key) or b"[]")
        await client.set(key, orjson.dumps([base64.b64encode(os.urandom(32)).decode(), *current][:keep]))
    finally:
        if isinstance(redis, str):
            await client.aclose()


def _client(redis: str | Any) -> Any:
    if isinstance(redis, str):
        from ..extras import needs

        with needs("redis", "Redis state"):
            import redis.asyncio as aioredis
        return aioredis.Redis.from_url(redis)
    return redis
