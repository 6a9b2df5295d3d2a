"""Serving a server over stdin/stdout: newline-delimited JSON-RPC, as MCP clients launch servers.

Pipes are read and written on the event loop (no helper threads). Only protocol messages
reach the real stdout: while serving, file descriptor 1 points at stderr, so a stray
``print()`` in a tool (or a child process it starts) lands in the log, not in the protocol
stream. The server exits when stdin reaches end of file, after giving calls in flight a
grace period to finish. When the client stops reading, the server stops reading too, instead
of buffering without bound.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import TYPE_CHECKING, Any

from ..server.session import ServerSession

if TYPE_CHECKING:
    from ..server.server import Server


class _Reader(asyncio.Protocol):
    def __init__(self, session_ready: asyncio.Future[ServerSession], done: asyncio.Future[None]) -> None:
        self._session_ready = session_ready
        self._done = done
        self.transport: asyncio.ReadTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._session_ready.result().feed(data)

    def eof_received(self) -> bool:
        self._finish()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._finish()

    def _finish(self) -> None:
        if not self._done.done():
            self._done.set_result(None)


class _Writer(asyncio.Protocol):
    def __init__(self) -> None:
        self.reader: _Reader | None = None
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def pause_writing(self) -> None:
        if self.reader is not None and self.reader.transport is not None:
            self.reader.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.reader is not None and self.reader.transport is not None:
            self.reader.transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


async def serve_stdio(server: Server, *, stdin: int = 0, stdout: int | None = None, grace: float = 5.0) -> None:
    """Serve ``server`` on file descriptors ``stdin`` and ``stdout`` until ``stdin`` closes.

    With ``stdout=None`` the process's own stdout is used and protected (fd 1 is pointed at
    stderr while serving). ``grace``: seconds calls in flight get to finish after end of input.
    """
    loop = asyncio.get_running_loop()
    if stdout is None:
        sys.stdout.flush()
        stdout = os.dup(1)
        os.dup2(2, 1)
    out_file = os.fdopen(stdout, "wb", buffering=0)
    writer = _Writer()
    try:
        write_transport, _ = await loop.connect_write_pipe(lambda: writer, out_file)
        write: Any = write_transport.write
    except ValueError:  # a regular file: writes do not block, write directly
        write_transport = None
        write = out_file.write
    session_ready: asyncio.Future[ServerSession] = loop.create_future()
    done: asyncio.Future[None] = loop.create_future()
    session = ServerSession(server, server.connection(), write)
    session_ready.set_result(session)
    reader = _Reader(session_ready, done)
    writer.reader = reader
    in_file = os.fdopen(stdin, "rb", buffering=0)
    try:
        await loop.connect_read_pipe(lambda: reader, in_file)
    except ValueError:  # a regular file: read it through, it never blocks for long
        while chunk := os.read(stdin, 1 << 16):
            session.feed(chunk)
            await asyncio.sleep(0)
        done.set_result(None)
    await done
    await session.close(grace)
    if write_transport is not None:
        write_transport.close()
        await writer.closed
    else:
        out_file.close()
