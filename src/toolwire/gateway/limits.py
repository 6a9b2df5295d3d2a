"""Per-caller limits of the gateway's policy: ``rate`` and ``concurrency`` of a section.

``rate = "60/minute"``: each caller (each caller and tool, with ``rate_per_tool = true``) has
a token bucket holding the period's count (60), refilled at the rate (one a second), as
:class:`~toolwire.guards.RateLimit` keeps them: in memory, or in Redis when the gateway has
one (shared by its replicas). ``concurrency = 8``: at most that many calls of one caller in
flight; one more is refused at once with a tool error saying so. In memory that is per
process; with Redis it is across replicas: each call in flight holds a lease in a sorted
set per caller, renewed while the call runs and expiring :data:`LEASE` seconds after a
replica that died stopped renewing it, so a dead replica's calls never hold slots for good.
Callers are named as in :class:`~toolwire.guards.RateLimit` (the authenticated caller, else
the client's address, else the connection).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
from typing import TYPE_CHECKING, Any, Protocol

from ..guards.rate import Limiter, MemoryLimiter, parse_rate
from ..guards.seam import Call, Next, Result, refusal

if TYPE_CHECKING:
    from .policy import Grant, Policy

#: Seconds a Redis lease outlives the last renewal of a replica that stopped renewing it.
LEASE = 30.0

#: KEYS[1]: the caller's leases; ARGV: limit, lease id, lease ms. 1 if a slot was taken.
ACQUIRE = """
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[1], ms + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
"""

#: KEYS: leases' sets; ARGV: lease ms, then one lease id per key. Pushes each lease's end on.
RENEW = """
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, 'XX', ms + tonumber(ARGV[1]), ARGV[i + 1])
  redis.call('PEXPIRE', key, tonumber(ARGV[1]))
end
return 1
"""


def caller_of(call: Call) -> str:
    """Who calls, as rate limits name them."""
    if call.caller is not None:
        return f"caller:{call.caller}"
    peer = call.session.peer
    return f"client:{peer}" if peer is not None else f"session:{call.session_id}"


class CallerLimits:
    """The guard applying each caller's ``rate`` and ``concurrency`` (see the module's
    description); ``redis_url``: share them through Redis. Errors reaching Redis fail the
    call with an internal error (it is not let through)."""

    def __init__(self, policy: Policy, redis_url: str | None = None) -> None:
        self.policy = policy
        self.limiter: Limiter = MemoryLimiter()
        self.slots: Slots = MemorySlots()
        if redis_url is not None:
            from ..stores.redis import RedisLimiter

            self.limiter = RedisLimiter(redis_url, prefix="toolwire:gateway:rate:")
            self.slots = RedisSlots(self.limiter.redis)
        self._rates: dict[str, tuple[float, str, int]] = {}

    async def __call__(self, call: Call, next: Next) -> Result:
        if call.method != "tools/call":
            return await next(call)
        grant: Grant = call.extra.get("gateway.grant") or self.policy.grant(call.identity)
        who = caller_of(call)
        if grant.rate is not None:
            rate, said, burst = self._rate(grant.rate)
            key = f"{who}|{call.name}" if grant.rate_per_tool else who
            wait = await self.limiter.take(key, rate, burst)
            if wait > 0:
                what = f"{call.name}" if grant.rate_per_tool else "the gateway's tools"
                return refusal(
                    f"Rate limit: {grant.who} may call {what} {said}; try again in {max(wait, 0.1):.1f} s.",
                    "rate_limited",
                )
        if grant.concurrency is None:
            return await next(call)
        lease = await self.slots.take(who, grant.concurrency)
        if lease is None:
            return refusal(
                f"{call.name} was not run: {grant.who} already has {grant.concurrency} calls in flight through"
                " the gateway (its limit); try again when one has finished.",
                "busy",
            )
        try:
            return await next(call)
        finally:
            await self.slots.give_back(who, lease)

    def _rate(self, text: str) -> tuple[float, str, int]:
        known = self._rates.get(text)
        if known is None:
            rate, said = parse_rate(text)
            known = self._rates[text] = (rate, said, max(1, int(float(text.split("/")[0]))))
        return known


class Slots(Protocol):
    """Where calls in flight are counted per caller."""

    async def take(self, who: str, limit: int) -> str | None:
        """A lease of one of ``who``'s ``limit`` slots, or ``None`` if all are taken."""
        ...

    async def give_back(self, who: str, lease: str) -> None: ...


class MemorySlots:
    """Calls in flight counted in this process."""

    def __init__(self) -> None:
        self.running: dict[str, int] = {}

    async def take(self, who: str, limit: int) -> str | None:
        running = self.running.get(who, 0)
        if running >= limit:
            return None
        self.running[who] = running + 1
        return who

    async def give_back(self, who: str, lease: str) -> None:
        left = self.running.pop(who, 1) - 1
        if left > 0:
            self.running[who] = left


class RedisSlots:
    """Calls in flight counted in Redis, as leases (see the module's description)."""

    def __init__(self, redis: Any, prefix: str = "toolwire:gateway:inflight:", lease: float | None = None) -> None:
        self.redis = redis
        self.prefix = prefix
        self.lease_ms = int((lease if lease is not None else LEASE) * 1000)
        self._acquire = redis.register_script(ACQUIRE)
        self._renew = redis.register_script(RENEW)
        self._ids = itertools.count(1).__next__
        self._own = f"{os.getpid():x}-{os.urandom(4).hex()}-"
        self._held: dict[str, str] = {}  # lease id: its set
        self._renewing: asyncio.Task[None] | None = None

    async def take(self, who: str, limit: int) -> str | None:
        lease = f"{self._own}{self._ids()}"
        if not await self._acquire(keys=[self.prefix + who], args=[limit, lease, self.lease_ms]):
            return None
        self._held[lease] = self.prefix + who
        if self._renewing is None or self._renewing.done():
            self._renewing = asyncio.ensure_future(self._renew_while_held())
        return lease

    async def give_back(self, who: str, lease: str) -> None:
        key = self._held.pop(lease, None)
        if key is not None:
            await self.redis.zrem(key, lease)

    async def _renew_while_held(self) -> None:
        """Push every held lease's end on, a third of a lease apart, while any is held."""
        while self._held:
            await asyncio.sleep(self.lease_ms / 3000)
            held = list(self._held.items())
            if held:
                with contextlib.suppress(Exception):  # the next round tries again
                    await self._renew(keys=[key for _, key in held], args=[self.lease_ms, *(id for id, _ in held)])
