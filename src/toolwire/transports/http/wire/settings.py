"""What one server's connections share: the fixed limits, and the server's :class:`Settings`."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, Protocol

from ..forwarded import TrustedProxies
from .heads import Clock

#: The most a request's line and headers may take.
MAX_HEAD_BYTES = 64 * 1024
#: Body bytes held for the application before reading from the client pauses.
BODY_BUFFER = 256 * 1024
#: A larger read is parsed this many bytes at a time, so that parsing stops when reading pauses.
FEED_SLICE = 4096


class Open(Protocol):
    """What stopping the server does with each of its open connections
    (:class:`~.connection.HttpConnection`)."""

    transport: asyncio.Transport

    def close_if_idle(self) -> None: ...

    def busy(self) -> bool: ...

    def finish(self) -> Awaitable[None]: ...


class Settings:
    """What all connections of one server share."""

    def __init__(
        self,
        app: Any,
        *,
        header_timeout: float = 10.0,
        body_timeout: float = 10.0,
        keep_alive: float = 5.0,
        max_connections: int = 1000,
        max_connections_per_client: int = 100,
        trusted: TrustedProxies | None = None,
        access_log: bool = False,
    ) -> None:
        self.app = app
        self.header_timeout = header_timeout
        self.body_timeout = body_timeout
        self.keep_alive = keep_alive
        self.max_connections = max_connections
        self.max_connections_per_client = max_connections_per_client
        self.trusted = trusted if trusted is not None else TrustedProxies()
        self.access_log = access_log
        self.state: dict[str, Any] = {}
        self.connections: set[Open] = set()
        self.by_client: dict[str, int] = {}  # open connections by client (see client_group)
        self.clock = Clock()
        self.stopping = False
