"""An in-memory connection to a server: the client end of a pipe with no process behind it.

For tests and for embedding a server in the same program as its client. Messages cross as
encoded JSON, exactly as over a real transport, so everything the server checks is checked.

    async with MemoryConnection(server) as peer:
        await peer.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {...}})
        answer = await peer.receive()
"""

from __future__ import annotations

import asyncio
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
