"""Redis, for state shared by several server processes (``pip install 'toolwire[redis]'``).

:class:`RedisLimiter` keeps :class:`~toolwire.guards.RateLimit`'s token buckets in Redis: one
hash per bucket, updated by a Lua script, so that a step is atomic however many processes
take from the same bucket, and timed by Redis's own clock, so that replicas whose clocks
differ agree. Buckets expire once they would be full again.
"""

from __future__ import annotations

from typing import Any

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
