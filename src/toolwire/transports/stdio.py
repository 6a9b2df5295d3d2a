"""Serving a server over stdin/stdout: newline-delimited JSON-RPC, as MCP clients launch servers.

Pipes are read and written on the event loop (no helper threads). Only protocol messages
reach the real stdout: while serving, file descriptor 1 points at stderr, so a stray
``print()`` in a tool (or a child process it starts) lands in the log, not in the protocol
stream. The server exits when stdin reaches end of file, after giving calls in flight a
grace period to finish. When the client stops reading, the server stops reading too, instead
of buffering without bound.

Start-up: :func:`run_stdio` answers the client's first message (``initialize`` or
``server/discover``, which the sans-IO core handles alone) before it imports the event
loop, whose import is most of a Python server's start-up time. Everything else waits for the
loop, in order.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

    from ..protocol.connection import Event, ServerConnection
    from ..server.server import Server
    from ..server.session import ServerSession


def run_stdio(server: Server, *, grace: float = 5.0) -> None:
    """Serve ``server`` on this process's stdin and stdout until stdin closes."""
    stdout = protect_stdout()
    connection = server.connection()
    data = os.read(0, 1 << 16)
    pending: list[Event] = []
    for event in connection.receive_data(data) if data else ():
        if type(event) is bytes:
            _write_all(stdout, event)
        else:
            pending.append(event)
    import asyncio

    coroutine = serve_stdio(server, stdout=stdout, grace=grace, connection=connection, pending=pending, eof=not data)
    asyncio.run(coroutine)


def protect_stdout() -> int:
    """A private descriptor for the protocol stream; fd 1 (``print``) now goes to stderr."""
    sys.stdout.flush()
    stdout = os.dup(1)
    os.dup2(2, 1)
    return stdout


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


async def serve_stdio(
    server: Server,
    *,
    stdin: int = 0,
    stdout: int | None = None,
    grace: float = 5.0,
    connection: ServerConnection | None = None,
    pending: list[Event] | None = None,
    eof: bool = False,
) -> None:
    """Serve ``server`` on file descriptors ``stdin`` and ``stdout`` until ``stdin`` closes.

    With ``stdout=None`` the process's stdout is used, protected as :func:`protect_stdout`
    says. ``grace``: seconds calls in flight get to finish after end of input. A caller that
    already fed the first bytes to ``connection`` passes it with the ``pending`` events it
    produced (and ``eof`` if input already ended).
    """
    import asyncio

    from ..server.session import ServerSession

    loop = asyncio.get_running_loop()
    if stdout is None:
        stdout = protect_stdout()
    out_file = os.fdopen(stdout, "wb", buffering=0)
    writer = _Writer(loop)
    write_transport: asyncio.WriteTransport | None
    try:
        write_transport, _ = await loop.connect_write_pipe(lambda: writer, out_file)  # type: ignore[type-var]
        write: Any = write_transport.write
    except ValueError:  # a regular file: writes do not block, write directly
        write_transport = None
        write = out_file.write
    session = ServerSession(server, connection or server.connection(), write)
    session.handle(pending or [])
    done: asyncio.Future[None] = loop.create_future()
    if eof:
        done.set_result(None)
    else:
        reader = _Reader(session, done)
        writer.reader = reader
        in_file = os.fdopen(stdin, "rb", buffering=0)
        try:
            await loop.connect_read_pipe(lambda: reader, in_file)  # type: ignore[type-var]
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


class _Reader:
    """Feeds what stdin delivers to the session (an ``asyncio.Protocol``, duck-typed so that
    this module can be imported before asyncio)."""

    def __init__(self, session: ServerSession, done: asyncio.Future[None]) -> None:
        self._session = session
        self._done = done
        self.transport: Any = None

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self._session.feed(data)

    def eof_received(self) -> bool:
        self._finish()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._finish()

    def _finish(self) -> None:
        if not self._done.done():
            self._done.set_result(None)


class _Writer:
    """Pauses reading stdin while the client is not reading stdout (flow control)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.reader: _Reader | None = None
        self.closed: asyncio.Future[None] = loop.create_future()

    def connection_made(self, transport: Any) -> None:
        pass

    def pause_writing(self) -> None:
        if self.reader is not None and self.reader.transport is not None:
            self.reader.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.reader is not None and self.reader.transport is not None:
            self.reader.transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)
