"""Rate limits: a token bucket per caller and tool.

    server = Server("search", guards=[RateLimit("30/minute", burst=10)])

Each key (by default the caller and the tool: the authenticated caller when there is one,
else over HTTP the client's address (behind trusted proxies, the client they name), else the
connection) has a bucket of ``burst`` tokens that refills at ``rate``; a call takes one
token, and a call that finds none is refused with an execution error that says when to try
again (``"rate_limited"`` in the audit). Buckets live in memory by default
(:class:`MemoryLimiter`, at most ``max_keys`` of them, the least recently used dropped
first); servers with several replicas share them through Redis
(``toolwire.stores.redis.RedisLimiter``, atomic there). Any object with the
:class:`Limiter` method works.
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

from .seam import Call, Next, Result, refusal

PERIODS = {"second": 1.0, "minute": 60.0, "hour": 3600.0, "day": 86400.0}
_RATE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*/\s*(?:(\d+(?:\.\d+)?)\s*)?(second|minute|hour|day)s?\s*")


class Limiter(Protocol):
    """Where buckets live: one atomic step of a token bucket."""

    async def take(self, key: str, rate: float, burst: int) -> float:
        """Take a token from ``key``'s bucket (``rate`` tokens a second, at most ``burst``);
        0.0 if one was there, else the seconds until one will be (nothing is taken)."""
        ...


def parse_rate(rate: str | float) -> tuple[float, str]:
    """``"30/minute"`` (or ``"5/second"``, ``"100/hour"``, ``"1000/day"``, ``"3/10 seconds"``)
    or a number of calls a second: (calls a second, how to say it). ``ValueError`` otherwise."""
    if isinstance(rate, int | float):
        if rate <= 0:
            raise ValueError("a rate must be above 0")
        return float(rate), f"{rate:g} times a second"
    match = _RATE.fullmatch(rate)
    if match is None:
        raise ValueError(f'a rate is "N/second", "N/minute", "N/hour" or "N/day", not {rate!r}')
    count, span, unit = float(match.group(1)), float(match.group(2) or 1), match.group(3)
    if count <= 0 or span <= 0:
        raise ValueError("a rate must be above 0")
    per = f"{span:g} {unit}s" if span != 1 else unit
    article = "an" if unit == "hour" else "a"
    said = f"{count:g} times {article} {per}" if span == 1 else f"{count:g} times per {per}"
    return count / (span * PERIODS[unit]), said


class MemoryLimiter:
    """Token buckets in this process's memory; at most ``max_keys`` (least recently used go)."""

    def __init__(self, max_keys: int = 100_000, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_keys = max_keys
        self.clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    async def take(self, key: str, rate: float, burst: int) -> float:
        return self.take_now(key, rate, burst)

    def take_now(self, key: str, rate: float, burst: int) -> float:
        """:meth:`take` without a coroutine (the guard calls this one)."""
        now = self.clock()
        tokens, at = self._buckets.pop(key, (float(burst), now))
        tokens = min(float(burst), tokens + (now - at) * rate)
        wait = 0.0
        if tokens >= 1:
            tokens -= 1
        else:
            wait = (1 - tokens) / rate
        self._buckets[key] = (tokens, now)
        if len(self._buckets) > self.max_keys:
            self._buckets.popitem(last=False)
        return wait


def caller_and_tool(call: Call) -> str:
    """The default key: who calls (the caller, else the client's address over HTTP, else the
    connection) and what."""
    if call.caller is not None:
        return f"caller:{call.caller}|{call.name}"
    peer = call.session.peer
    who = f"client:{peer}" if peer is not None else f"session:{call.session_id}"
    return f"{who}|{call.name}"


class RateLimit:
    """The rate-limit guard for ``tools/call`` (see the module's description). ``rate``: as
    :func:`parse_rate` reads it; ``burst``: calls allowed at once after a quiet spell
    (default: one second's worth, at least 1); ``key``: what shares a bucket; ``limiter``:
    where buckets live; ``tools``: only these tools (default: all)."""

    def __init__(
        self,
        rate: str | float,
        burst: int | None = None,
        *,
        key: Callable[[Call], str] = caller_and_tool,
        limiter: Limiter | None = None,
        tools: set[str] | None = None,
    ) -> None:
        self.rate, self.said = parse_rate(rate)
        self.burst = burst if burst is not None else max(1, round(self.rate))
        if self.burst < 1:
            raise ValueError("burst must be 1 or more")
        self.key = key
        self.limiter: Limiter = limiter if limiter is not None else MemoryLimiter()
        self.tools = tools
        self._take_now = self.limiter.take_now if isinstance(self.limiter, MemoryLimiter) else None

    async def __call__(self, call: Call, next: Next) -> Result:
        if call.method != "tools/call" or (self.tools is not None and call.name not in self.tools):
            return await next(call)
        if self._take_now is not None:
            wait = self._take_now(self.key(call), self.rate, self.burst)
        else:
            wait = await self.limiter.take(self.key(call), self.rate, self.burst)
        if wait > 0:
            return refusal(
                f"Rate limit: {call.name} may be called {self.said} (bursts of {self.burst}); "
                f"try again in {max(wait, 0.1):.1f} s.",
                "rate_limited",
            )
        return await next(call)
