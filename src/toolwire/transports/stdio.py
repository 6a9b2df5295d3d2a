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

#: Bytes per read: a read allocates this much first, so larger costs more per message.
READ_SIZE = 1 << 14


def run_stdio(server: Server, *, grace: float = 5.0) -> None:
    """Serve ``server`` on this process's stdin and stdout until stdin closes."""
    stdout = protect_stdout()
    connection = server.connection()
    data = os.read(0, READ_SIZE)
    pending: list[Event] = []
    for event in connection.receive_data(data) if data else ():
        if type(event) is bytes:
            _write_all(stdout, event)
        else:
            pending.append(event)
    coroutine = serve_stdio(server, stdout=stdout, grace=grace, connection=connection, pending=pending, eof=not data)
    event_loop_runner()(coroutine)


def event_loop_runner() -> Any:
    """``uvloop.run`` when uvloop is installed (its event loop, in C, takes about a sixth off a
    call's round trip), else ``asyncio.run``. ``TOOLWIRE_UVLOOP=0`` insists on asyncio's."""
    import asyncio

    if os.environ.get("TOOLWIRE_UVLOOP", "1") != "0":
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.run
    return asyncio.run


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
    pipes = _Pipes(loop, stdin, stdout)
    session = ServerSession(server, connection or server.connection(), pipes.write)
    pipes.session = session
    session.handle(pending or [])
    if eof:
        pipes.done.set_result(None)
    else:
        pipes.start_reading()
    try:
        await pipes.done
        await session.close(grace)
        await pipes.drain()
    finally:
        pipes.close()


class _Pipes:
    """Non-blocking reads and writes of the two descriptors, driven by the event loop.

    asyncio's own pipe transports allocate a 256 KiB buffer for every read, which costs more
    than a whole tool call; this reads 16 KiB at a time and writes straight through, queueing
    only what the pipe does not take (then reading pauses until the client catches up).
    Regular files, which event loops cannot watch, are read and written directly.
    """

    HIGH_WATER = 1 << 20

    def __init__(self, loop: asyncio.AbstractEventLoop, stdin: int, stdout: int) -> None:
        self.loop = loop
        self.stdin = stdin
        self.stdout = stdout
        self.session: ServerSession | None = None
        self.done: asyncio.Future[None] = loop.create_future()
        self._queue = bytearray()
        self._flushed: asyncio.Future[None] | None = None
        self._reading = False
        self._broken = False
        self._held: list[bytes] | None = None
        self._restore = [(fd, os.get_blocking(fd)) for fd in (stdin, stdout)]

    def start_reading(self) -> None:
        os.set_blocking(self.stdin, False)
        try:
            self.loop.add_reader(self.stdin, self._readable)
        except OSError:  # a regular file, which event loops cannot watch
            self.loop.create_task(self._read_file())
            return
        self._reading = True

    async def _read_file(self) -> None:
        import asyncio

        assert self.session is not None
        while chunk := os.read(self.stdin, READ_SIZE):
            self.session.feed(chunk)
            await asyncio.sleep(0)
        self._finish()

    def _readable(self) -> None:
        try:
            data = os.read(self.stdin, READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._stop_reading()
            self._finish()
            return
        assert self.session is not None
        # Answers made while this read is handled leave in one write: one system call for
        # a whole pipelined burst rather than one per answer.
        held: list[bytes] = []
        self._held = held
        try:
            self.session.feed(data)
        finally:
            self._held = None
            if held:
                self.write(b"".join(held))

    def _stop_reading(self) -> None:
        if self._reading:
            self.loop.remove_reader(self.stdin)
            self._reading = False

    def _finish(self) -> None:
        if not self.done.done():
            self.done.set_result(None)

    def write(self, data: bytes) -> None:
        if self._held is not None:
            self._held.append(data)
            return
        if self._broken:
            return
        if not self._queue:
            try:
                written = os.write(self.stdout, data)
            except BlockingIOError:
                written = 0
            except OSError:  # the client closed its end: nobody is listening any more
                self._break()
                return
            if written == len(data):
                return
            data = data[written:]
            self.loop.add_writer(self.stdout, self._writable)
        self._queue += data
        if len(self._queue) > self.HIGH_WATER and self._reading:
            self._stop_reading()  # resumes once the queue drains

    def _writable(self) -> None:
        try:
            written = os.write(self.stdout, self._queue)
        except BlockingIOError:
            return
        except OSError:
            self._break()
            return
        del self._queue[:written]
        if not self._queue:
            self.loop.remove_writer(self.stdout)
            if self._flushed is not None and not self._flushed.done():
                self._flushed.set_result(None)
            if not self._reading and not self.done.done():
                self.start_reading()

    def _break(self) -> None:
        self._broken = True
        self._queue.clear()
        self._stop_reading()
        self._finish()

    async def drain(self) -> None:
        """Wait until everything written has reached the pipe."""
        if self._queue and not self._broken:
            self._flushed = self.loop.create_future()
            await self._flushed

    def close(self) -> None:
        self._stop_reading()
        if self._queue:
            self.loop.remove_writer(self.stdout)
        for fd, blocking in self._restore:
            os.set_blocking(fd, blocking)
        os.close(self.stdout)
