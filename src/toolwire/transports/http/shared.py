"""Legacy sessions shared by replicas through Redis, so that no request needs to stick.

A session opened on one replica (``initialize``) is written to Redis: its protocol version,
the client's capabilities and information, its owner. A replica that gets a request for a
session it does not hold finds it there and takes it up (a local copy of the same session);
a session ended (``DELETE``) or expired anywhere is gone everywhere, since each request
renews it in Redis first and a missing one is "not found" (404).

List changes and resource updates on one replica are broadcast to the others, which tell
the 2026-07-28 ``subscriptions/listen`` streams and the legacy ``GET`` streams they hold. A
session's own state (its ``logging/setLevel`` level, its ``resources/subscribe`` URIs) is kept
in its record and passed to every replica holding the session when it changes.

What a client sends that belongs to work running on another replica (its answer to a
server's question, a ``notifications/cancelled``) is passed on over Redis pub/sub to every
replica holding the session, where the one waiting for it takes it; a message for the
session's ``GET`` stream produced on a replica that does not hold that stream is passed on
the same way to the one that does.

Redis unreachable: the request is refused with 503 and a JSON-RPC error saying so; nothing
is half-written, and requests succeed again once Redis is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from ...errors import ToolwireError
from ...logs import get_logger
from ...protocol.codec import LOG_SEVERITY

if TYPE_CHECKING:
    from .sessions import LegacySession

log = get_logger("toolwire.http")

#: Kinds of messages on a session's channel.
FROM_CLIENT = b"c"
TO_STREAM = b"s"
ENDED = b"e"
STATE = b"t"
#: This process, on the broadcast channel (what it sent comes back to it, and is skipped).
PROCESS = secrets.token_hex(8)


#: Notifications every replica hears of through the broadcast, so that the replica holding a
#: session's ``GET`` stream sends them itself: passed on from a copy as well, they would
#: arrive twice.
BROADCAST = frozenset(
    {
        "notifications/resources/updated",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
    }
)


def session_state(legacy: LegacySession) -> dict[str, Any]:
    """What a session's own requests set: its log level, its resource subscriptions."""
    session = legacy.session
    return {"logLevel": session.connection.log_level, "subscriptions": sorted(session.resource_subscriptions)}


def apply_state(legacy: LegacySession, state: dict[str, Any]) -> None:
    """Take up a session's state from its record or from another replica (what is not
    well-formed is ignored)."""
    session = legacy.session
    level = state.get("logLevel")
    if type(level) is str and level in LOG_SEVERITY:
        session.connection.log_level = level
    subscriptions = state.get("subscriptions")
    if type(subscriptions) is list:
        session.resource_subscriptions.clear()
        session.resource_subscriptions.update(uri for uri in subscriptions if type(uri) is str)


class RedisUnavailable(ToolwireError):
    """Redis could not be reached for a session's shared state."""


class SharedSessions:
    """The Redis side of the sessions of one app. ``idle_timeout``: seconds a session lives
    without requests (``None``: a day)."""

    def __init__(self, redis: str | Any, prefix: str = "toolwire:", idle_timeout: float | None = 1800.0) -> None:
        if isinstance(redis, str):
            from ...extras import needs

            with needs("redis", "Sessions shared through Redis"):
                import redis.asyncio as aioredis
            redis = aioredis.Redis.from_url(redis)
        self.redis: Any = redis
        self.prefix = prefix
        self.ttl_ms = int((idle_timeout or 86_400) * 1000)
        self._listeners: dict[str, Callable[[bytes, bytes], None]] = {}
        self._broadcast: Callable[[dict[str, Any]], None] | None = None
        self._pubsub: Any = None
        self._reader: asyncio.Task[None] | None = None

    def _key(self, session_id: str) -> str:
        return f"{self.prefix}session:{session_id}"

    def _channel(self, session_id: str) -> str:
        return f"{self.prefix}session-messages:{session_id}"

    async def _call(self, operation: Any) -> Any:
        try:
            return await operation
        except Exception as exc:
            raise RedisUnavailable(f"the shared session store (Redis) is unreachable: {type(exc).__name__}") from None

    async def register(self, session_id: str, record: dict[str, Any]) -> None:
        """Write a session opened here."""
        await self._call(self.redis.set(self._key(session_id), orjson.dumps(record), px=self.ttl_ms))

    async def renew(self, session_id: str) -> dict[str, Any] | None:
        """The session's record, its life renewed; ``None`` if it is gone (ended, expired)."""
        data = await self._call(self.redis.getex(self._key(session_id), px=self.ttl_ms))
        return orjson.loads(data) if data is not None else None

    async def end(self, session_id: str) -> bool:
        """End the session everywhere; whether it existed."""
        removed = await self._call(self.redis.delete(self._key(session_id)))
        await self._call(self.redis.publish(self._channel(session_id), ENDED))
        return bool(removed)

    async def remember(self, session_id: str, state: dict[str, Any]) -> None:
        """Keep ``state`` in the session's record (unless the session is gone) and pass it to
        the replicas holding the session: both in one transaction, or neither
        (``RedisUnavailable``)."""
        await self._call(self._remember(self._key(session_id), self._channel(session_id), state))

    async def _remember(self, key: str, channel: str, state: dict[str, Any]) -> None:
        from ...stores.redis import watched

        async def merge(pipe: Any, data: bytes | None) -> None:
            if data is not None:  # else the session is gone
                pipe.multi()
                pipe.set(key, orjson.dumps({**orjson.loads(data), **state}), px=self.ttl_ms, xx=True)
                pipe.publish(channel, STATE + orjson.dumps(state))
                await pipe.execute()

        await watched(self.redis, key, merge)

    async def publish(self, session_id: str, kind: bytes, data: bytes) -> None:
        """Pass a message on to the replicas holding the session."""
        await self._call(self.redis.publish(self._channel(session_id), kind + data))

    async def follow(self, session_id: str, listener: Callable[[bytes, bytes], None]) -> None:
        """Call ``listener(kind, data)`` for what is passed on for the session."""
        self._listeners[session_id] = listener
        if self._pubsub is None:
            self._pubsub = self.redis.pubsub()
        await self._call(self._pubsub.subscribe(self._channel(session_id)))
        if self._reader is None:
            self._reader = asyncio.get_running_loop().create_task(self._read())

    async def unfollow(self, session_id: str) -> None:
        self._listeners.pop(session_id, None)
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.unsubscribe(self._channel(session_id))

    async def broadcast(self, news: dict[str, Any]) -> None:
        """Tell every other replica ``news`` (a list changed, a resource was updated)."""
        await self._call(self.redis.publish(self.prefix + "broadcast", orjson.dumps({**news, "from": PROCESS})))

    async def hear(self, listener: Callable[[dict[str, Any]], None]) -> None:
        """Call ``listener(news)`` with what other replicas broadcast."""
        self._broadcast = listener
        if self._pubsub is None:
            self._pubsub = self.redis.pubsub()
        await self._call(self._pubsub.subscribe(self.prefix + "broadcast"))
        if self._reader is None:
            self._reader = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        prefix = len(self._channel(""))
        broadcast = self.prefix + "broadcast"
        while True:
            try:
                message = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
            except asyncio.CancelledError:
                raise
            except Exception:  # Redis went away: wait, the client reconnects by itself
                await asyncio.sleep(0.5)
                continue
            if message is None or message.get("type") != "message":
                continue
            channel = message["channel"].decode() if isinstance(message["channel"], bytes) else message["channel"]
            data: bytes = message["data"]
            if channel == broadcast:
                self._heard(data)
                continue
            listener = self._listeners.get(channel[prefix:])
            if listener is not None and data:
                try:
                    listener(data[:1], data[1:])
                except Exception:
                    log.exception("a message passed on for a session could not be handled")

    def _heard(self, data: bytes) -> None:
        with contextlib.suppress(orjson.JSONDecodeError, TypeError, AttributeError):
            news = orjson.loads(data)
            if news.get("from") != PROCESS and self._broadcast is not None:
                self._broadcast(news)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
        await self.redis.aclose()
