"""A server's lifespan: what it opens once per process before serving (a database pool, a
client, a model) and closes when it stops, and what tools reach through ``ctx.lifespan``.

A lifespan is a function of the server (or of nothing) that returns a context manager,
sync or async, or is a generator function (sync or async) that yields once: what it yields
is the state tools see. Every transport enters it before serving (stdio, HTTP at its ASGI
startup or else at its first request, the in-memory connection at its start) and leaves it
when it stops; entering is counted, so a process serving on several transports opens it
once and closes it after the last. A lifespan that raises at its start stops the server from
serving: :class:`LifespanFailed` says why.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import ToolwireError

if TYPE_CHECKING:
    import asyncio

    from .server import Server

#: A server's lifespan, in any of the forms the module describes.
Lifespan = Callable[..., Any]


class LifespanFailed(ToolwireError):
    """The server's lifespan raised while starting (or did not yield); the message names the
    exception."""


class LifespanRunner:
    """Enters and leaves one server's lifespan, counting those who need it."""

    def __init__(self, server: Server, lifespan: Lifespan) -> None:
        self.server = server
        self.lifespan = lifespan
        self.users = 0
        self.state: Any = None
        self.started = False
        self._stack: contextlib.AsyncExitStack | None = None
        self._lock: asyncio.Lock | None = None

    async def enter(self) -> None:
        """Start it unless it runs already; :class:`LifespanFailed` if it raises."""
        if self._lock is None:
            import asyncio  # not at import: the stdio path imports the event loop late

            self._lock = asyncio.Lock()
        async with self._lock:
            self.users += 1
            if self.users > 1:
                return
            stack = contextlib.AsyncExitStack()
            try:
                manager = self._manager()
                if hasattr(manager, "__aenter__"):
                    self.state = await stack.enter_async_context(manager)
                else:
                    self.state = stack.enter_context(manager)
            except Exception as exc:
                self.users -= 1
                await stack.aclose()
                raise LifespanFailed(f"the server's lifespan failed to start: {type(exc).__name__}: {exc}") from exc
            self._stack = stack
            self.started = True

    async def leave(self) -> None:
        """Stop it once the last of those who entered it has left."""
        assert self._lock is not None
        async with self._lock:
            self.users -= 1
            if self.users > 0 or self._stack is None:
                return
            stack, self._stack = self._stack, None
            self.started = False
            await self.server.close_tasks()  # tasks may still use what the lifespan opened
            await stack.aclose()
            self.state = None

    def _manager(self) -> Any:
        import inspect

        function = self.lifespan
        if inspect.isasyncgenfunction(function):
            function = contextlib.asynccontextmanager(function)
        elif inspect.isgeneratorfunction(function):
            function = contextlib.contextmanager(function)
        takes_server = any(
            parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)
            for parameter in inspect.signature(self.lifespan).parameters.values()
        )
        manager = function(self.server) if takes_server else function()
        if not (hasattr(manager, "__aenter__") or hasattr(manager, "__enter__")):
            raise TypeError(f"the lifespan returned {type(manager).__name__}, not a context manager")
        return manager
