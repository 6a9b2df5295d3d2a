"""How a client reaches a server: a child process over stdio, or a Server object in memory.

A transport delivers whole messages (encoded JSON) to ``on_message`` and says once, through
``on_close``, why it ended; ``send`` takes one encoded message.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import subprocess
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from ..pipes import READ_SIZE, PipePair
from ..protocol.connection import DEFAULT_MAX_MESSAGE_BYTES


class Transport(Protocol):
    """Moves encoded messages; ``newline``: each message sent must end with a newline."""

    newline: bool
    on_message: Callable[[bytes], None]
    on_close: Callable[[str], None]

    async def start(self) -> None: ...

    def send(self, data: bytes) -> None: ...

    def send_soon(self, data: bytes) -> None:
        """Like :meth:`send`, allowed to wait for the end of the event loop's current turn
        so that several messages leave together."""

    async def close(self) -> None: ...


class InProcessSession(Protocol):
    """One connection's session of an :class:`InProcess` server."""

    def feed_message(self, data: bytes) -> None: ...

    async def close(self, grace: float = 5.0) -> None: ...


@runtime_checkable
class InProcess(Protocol):
    """A server in this process (a toolwire :class:`~toolwire.Server`): ``Client(server)``
    reaches it through :class:`InMemory` without importing the server's packages."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def open_session(self, send: Callable[[bytes], None]) -> InProcessSession: ...


def _ignore_message(data: bytes) -> None:
    pass


def _ignore_close(reason: str) -> None:
    pass


#: Messages per write when many leave in one turn of the event loop.
BATCH = 8


class StdioProcess:
    """A server started as a child process, spoken to over its stdin and stdout.

    Its stderr is kept (the last 8 KiB) to explain a crash or a failed call
    (:meth:`stderr_since`), and each piece is given to ``on_stderr`` as it comes. :meth:`close`
    ends it as the specification says: close its stdin, wait, then terminate, then kill.
    """

    STDERR_TAIL = 8192
    newline = True

    def __init__(
        self,
        command: list[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        shutdown_grace: float = 2.0,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self.command = command
        self.env = env
        self.cwd = cwd
        self.shutdown_grace = shutdown_grace
        self.max_message_bytes = max_message_bytes
        self._scanned = 0
        self._refused: str | None = None
        self.on_message: Callable[[bytes], None] = _ignore_message
        self.on_close: Callable[[str], None] = _ignore_close
        self.on_stderr: Callable[[bytes], None] = _ignore_message
        self.process: subprocess.Popen[bytes] | None = None
        #: Bytes the server wrote to stderr so far (a mark for :meth:`stderr_since`).
        self.stderr_written = 0
        self._stderr: collections.deque[bytes] = collections.deque()
        self._stderr_size = 0
        self._buffer = bytearray()
        self._pipes: PipePair | None = None
        self._stderr_fd = -1
        self._soon: list[bytes] = []

    async def start(self) -> None:
        """Start the process; ``OSError`` if it cannot be started (no pipe is left open)."""
        loop = asyncio.get_running_loop()
        child_in, to_child = os.pipe()
        from_child, child_out = os.pipe()
        err_read, child_err = os.pipe()
        try:
            self.process = subprocess.Popen(
                self.command,
                stdin=child_in,
                stdout=child_out,
                stderr=child_err,
                env={**os.environ, **self.env} if self.env else None,
                cwd=self.cwd,
                # A session of its own: Ctrl-C at a terminal interrupts this program, which
                # cancels and closes; it does not kill the server under it.
                start_new_session=os.name == "posix",
            )
        except OSError:
            for fd in (to_child, from_child, err_read):
                os.close(fd)
            raise
        finally:
            for fd in (child_in, child_out, child_err):
                os.close(fd)
        self._pipes = pipes = PipePair(loop, from_child, to_child, pause_reading=False)
        pipes.on_data = self._data
        pipes.done.add_done_callback(lambda _: self._ended())
        pipes.start_reading()
        self._stderr_fd = err_read
        os.set_blocking(err_read, False)
        loop.add_reader(err_read, self._stderr_readable)

    def send(self, data: bytes) -> None:
        if self._pipes is not None:
            self._pipes.write(data)

    def send_soon(self, data: bytes) -> None:
        """Queue ``data``; what is queued in one turn of the event loop leaves together, in
        writes of :data:`BATCH` messages (the server starts on the first while the rest are
        being made) and one for what is left at the end of the turn."""
        pipes = self._pipes
        if pipes is None:
            return  # closed: dropped, as send() drops it
        soon = self._soon
        if not soon:
            pipes.loop.call_soon(self._flush)
        soon.append(data)
        if len(soon) >= BATCH:
            self._flush()

    def _flush(self) -> None:
        if self._soon:
            data = b"".join(self._soon)
            self._soon.clear()
            self.send(data)

    def _data(self, data: bytes) -> None:
        """Split what the server wrote into lines; each byte is scanned once. A line longer
        than ``max_message_bytes`` ends the connection, saying so."""
        buffer = self._buffer
        if not buffer and data.find(b"\n") == len(data) - 1:
            self.on_message(data)  # the common case: one whole message per read
            return
        buffer += data
        start = 0
        while (end := buffer.find(b"\n", self._scanned)) >= 0:
            line = bytes(buffer[start:end])
            start = self._scanned = end + 1
            if len(line) > self.max_message_bytes:
                return self._refuse(len(line))
            if line.strip():
                self.on_message(line)
        if start:
            del buffer[:start]
        self._scanned = len(buffer)
        if len(buffer) > self.max_message_bytes:
            self._refuse(len(buffer))

    def _refuse(self, size: int) -> None:
        """End the connection over a message too large to take."""
        self._refused = (
            f"the server sent a message of more than {self.max_message_bytes} bytes ({size} so far); "
            "raise Client(max_message_bytes=...) if it is expected"
        )
        self._buffer.clear()
        self._scanned = 0
        if self._pipes is not None:
            self._pipes.on_data = _ignore_message
            self._pipes.stop()

    def _stderr_readable(self) -> None:
        if not self._read_stderr():
            asyncio.get_running_loop().remove_reader(self._stderr_fd)

    def _read_stderr(self) -> bool:
        """Keep what the server's stderr has to read now; ``False`` at its end."""
        for _ in range(16):  # a bounded turn: a chatty server cannot hold the loop
            try:
                chunk = os.read(self._stderr_fd, READ_SIZE)
            except BlockingIOError:
                return True
            except OSError:
                chunk = b""
            if not chunk:
                return False
            self._stderr.append(chunk)
            self._stderr_size += len(chunk)
            self.stderr_written += len(chunk)
            while self._stderr_size > self.STDERR_TAIL and len(self._stderr) > 1:
                self._stderr_size -= len(self._stderr.popleft())
            self.on_stderr(chunk)
        return True

    def stderr_tail(self) -> str:
        """The end of what the server wrote to stderr."""
        return b"".join(self._stderr).decode(errors="replace")[-self.STDERR_TAIL :]

    def stderr_since(self, mark: int) -> str:
        """What the server wrote to stderr after :attr:`stderr_written` was ``mark`` (what is
        in the pipe now included; only the last 8 KiB of it)."""
        if self._stderr_fd >= 0:
            self._read_stderr()
        kept = b"".join(self._stderr)
        return kept[max(0, len(kept) - (self.stderr_written - mark)) :].decode(errors="replace")

    def _ended(self) -> None:
        code = self.process.poll() if self.process else None
        if code is None and self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = self.process.wait(0.05)  # an exiting process closes stdout just before
        if self._refused is not None:
            self.on_close(self._refused)
            return
        status = f"exited with code {code}" if code is not None else "closed its output"
        if self._stderr_fd >= 0:
            self._read_stderr()  # its last words
        tail = self.stderr_tail().strip()
        self.on_close(f"the server process {status}" + (f"; its stderr ends with:\n{tail}" if tail else ""))

    async def close(self) -> None:
        """Close stdin, give the process ``shutdown_grace`` seconds, then terminate, then kill."""
        process = self.process
        if process is None:
            return
        if self._pipes is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._pipes.drain(), self.shutdown_grace)
            self._pipes.close()
        for step in (None, process.terminate, process.kill):
            if step is not None:
                with contextlib.suppress(ProcessLookupError):
                    step()
            deadline = time.monotonic() + self.shutdown_grace
            while process.poll() is None and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            if process.poll() is not None:
                break
        loop = asyncio.get_running_loop()
        if self._stderr_fd >= 0:
            with contextlib.suppress(ValueError, OSError):
                loop.remove_reader(self._stderr_fd)
            self._read_stderr()
            os.close(self._stderr_fd)
            self._stderr_fd = -1
        if self._pipes is not None:
            with contextlib.suppress(OSError):
                os.close(self._pipes.stdin)
            self._pipes = None


class InMemory:
    """A toolwire :class:`~toolwire.Server` in this process: messages cross as encoded JSON."""

    newline = False

    def __init__(self, server: InProcess) -> None:
        self.server = server
        self.on_message: Callable[[bytes], None] = _ignore_message
        self.on_close: Callable[[str], None] = _ignore_close
        self._session: InProcessSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> None:
        await self.server.start()
        self._loop = asyncio.get_running_loop()  # kept: looking it up makes a system call (Python 3.11)
        self._session = self.server.open_session(self._deliver)

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
