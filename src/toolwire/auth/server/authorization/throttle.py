"""How often one client address may register a client (``POST /oauth/register``): a token
bucket per address, :mod:`toolwire.guards.rate`'s, in this process's memory, or in Redis
when the server's state is there (so every replica counts the same registrations). A
registration over the limit is answered 429 with ``Retry-After`` and an RFC 7591 error body
(``too_many_requests``, the code the MCP SDKs' own servers use)."""

from __future__ import annotations

import math

from ....guards.rate import Limiter, MemoryLimiter, parse_rate
from .state import AuthState, RedisAuthState
from .web import OAuthError


class RegistrationLimit:
    """At most ``burst`` registrations at once from one address, refilled at ``rate``
    (``"20/hour"``, as :func:`~toolwire.guards.rate.parse_rate` reads it); ``ValueError``
    for a rate it cannot read."""

    def __init__(self, state: AuthState, rate: str | float, burst: int) -> None:
        self.rate, self.said = parse_rate(rate)
        self.burst = burst
        self.limiter: Limiter = MemoryLimiter()
        if isinstance(state, RedisAuthState):
            from ....stores.redis import RedisLimiter

            self.limiter = RedisLimiter(state.redis, prefix=f"{state.prefix}register-rate:")

    async def check(self, address: str) -> None:
        """Count one registration from ``address``; :class:`OAuthError` (429) when over the limit."""
        wait = await self.limiter.take(address, self.rate, self.burst)
        if wait > 0:
            seconds = math.ceil(wait)
            raise OAuthError(
                "too_many_requests",
                f"too many registrations from this address (at most {self.said}): try again in {seconds} s, "
                "or reuse the client ID registered before",
                429,
                [(b"retry-after", str(seconds).encode())],
            )
