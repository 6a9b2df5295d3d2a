"""A server whose ``echo`` may be called 5 times a minute in all, by everyone, across every
process sharing the Redis at $REDIS_URL, for the shared-limiter tests."""

import os

from toolwire import Server
from toolwire.guards import RateLimit
from toolwire.stores.redis import RedisLimiter

limit = RateLimit(
    "5/minute", burst=5, key=lambda call: f"all|{call.name}", limiter=RedisLimiter(os.environ["REDIS_URL"])
)
server = Server("rate-limited", guards=[limit])


@server.tool
async def echo(text: str) -> str:
    """Echo."""
    return text
