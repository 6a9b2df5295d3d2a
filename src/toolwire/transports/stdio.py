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

from ..protocol.outgoing import Answer
from ..server.lifespan import LifespanFailed

if TYPE_CHECKING:
    from ..protocol.connection import ServerConnection
    from ..protocol.incoming import Event
    from ..server.server import Server

from ..pipes import READ_SIZE


def run_stdio(server: Server, *, grace: float = 5.0, stdout: int | None = None) -> None:
    """Serve ``server`` on this process's stdin and stdout until stdin closes (``stdout``:
    the descriptor :func:`protect_stdout` gave, when it was protected already). A lifespan
    that fails to start ends the process with status 1 and one line (and its traceback) on
    stderr."""
    stdout = protect_stdout() if stdout is None else stdout
    connection = server.connection()
    # the first messages are answered before the event loop starts, unless a lifespan must run first
    data = None if server.has_lifespan else os.read(0, READ_SIZE)
    pending: list[Event] = []
    for event in connection.receive_data(data) if data else ():
        if type(event) is Answer:
            _write_all(stdout, event.data)
        else:
            pending.append(event)
    coroutine = serve_stdio(server, stdout=stdout, grace=grace, connection=connection, pending=pending, eof=data == b"")
    try:
        event_loop_runner()(_then_close_tasks(server, coroutine))
    except LifespanFailed as exc:
        from ..tracebacks import own_frames

        frames = own_frames(exc.__cause__) if exc.__cause__ is not None else ""
        sys.stderr.write(f"toolwire: {exc}\n" + (f"{frames}\n" if frames else ""))
        raise SystemExit(1) from None


async def _then_close_tasks(server: Server, serving: Any) -> None:
    """Serve, then stop the server's tasks (the process ends: they would be lost unstored)."""
    try:
        await serving
    finally:
        await server.close_tasks()


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

    from ..pipes import PipePair
    from ..server.session import ServerSession

    loop = asyncio.get_running_loop()
    if stdout is None:
        stdout = protect_stdout()
    await server.start()  # LifespanFailed: nothing is served
    connection = connection or server.connection()
    pipes = PipePair(loop, stdin, stdout, hold_while=lambda: bool(connection.in_flight))
    session = ServerSession(server, connection, pipes.write)
    pipes.on_data = session.feed
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
        await server.stop()
