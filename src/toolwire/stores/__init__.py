"""Backends for the state features keep, behind the small interfaces those features define.

- :mod:`.redis`: Redis (``pip install 'toolwire[redis]'``), for servers with several
  replicas: :class:`~.redis.RedisLimiter` for :class:`~toolwire.guards.RateLimit`.

Each backend is imported only when chosen; features never import one.
"""
