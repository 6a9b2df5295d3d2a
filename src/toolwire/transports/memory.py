"""In-memory connections to a server: the client end of a pipe with no process behind it
(:class:`MemoryConnection`, raw messages for tests), and the transport ``Client(server)`` uses
(:class:`InMemory`).

For tests and for embedding a server in the same program as its client. Messages cross as
encoded JSON, exactly as over a real transport, so everything the server checks is checked.

    async with MemoryConnection(server) as peer:
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {...}})
        answer = await peer.receive()
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

import orjson

from ..server.session import ServerSession

if TYPE_CHECKING:
    from ..server.server import Server


class MemoryConnection:
    """The client end of an in-memory connection to ``server``. Create it on a running loop."""

    def __init__(self, server: Server) -> None:
        self._inbox: asyncio.Queue[bytes] = asyncio.Queue()
        self.server = server
        self.session = ServerSession(server, server.connection(terminator=b""), self._inbox.put_nowait)
        self._started = False

    async def open(self) -> None:
        """Enter the server's lifespan (``async with`` does; a connection never opened serves
        a server without one just as well)."""
        await self.server.start()
        self._started = True

    async def send(self, message: Any) -> None:
        """Send one JSON-RPC message (or a batch list) to the server."""
        self.session.feed_message(orjson.dumps(message))

    def send_bytes(self, data: bytes) -> None:
        """Send raw bytes as one message, valid or not (for testing what the server refuses)."""
        self.session.feed_message(data)

    async def receive(self, timeout: float = 5.0) -> Any:
        """The next message from the server; ``TimeoutError`` if none comes in time."""
        return orjson.loads(await asyncio.wait_for(self._inbox.get(), timeout))

    def pending(self) -> int:
        """How many messages from the server are waiting to be received."""
        return self._inbox.qsize()

    async def close(self, grace: float = 5.0) -> None:
        """End the connection as the end of stdin would."""
        await self.session.close(grace)
        if self._started:
            self._started = False
            await self.server.stop()

    async def __aenter__(self) -> MemoryConnection:
        await self.open()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close(grace=0.5)


class InMemory:
    """A :class:`~toolwire.Client`'s transport to a :class:`~toolwire.Server` in this process
    (``Client(server)``): messages cross as encoded JSON."""

    newline = False

    def __init__(self, server: Server) -> None:
        self.server = server
        self.on_message: Callable[[bytes], None] = _ignore_message
        self.on_close: Callable[[str], None] = _ignore_close
        self._session: ServerSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> None:
        await self.server.start()
        self._loop = asyncio.get_running_loop()  # kept: looking it up makes a system call (Python 3.11)
        self._session = ServerSession(self.server, self.server.connection(terminator=b""), self._deliver)

    def _deliver(self, data: bytes) -> None:
        assert self._loop is not None  # set before the session that calls this exists
        self._loop.call_soon(self.on_message, data)

    def send(self, data: bytes) -> None:
        if self._session is not None:
            self._session.feed_message(data)

    send_soon = send

    async def close(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close(grace=1.0)
            await self.server.stop()
            self.on_close("the in-memory connection was closed")


def _ignore_message(data: bytes) -> None:
    pass


def _ignore_close(reason: str) -> None:
    pass
