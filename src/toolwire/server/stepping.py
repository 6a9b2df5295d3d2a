"""Taking an awaitable's first step at once, and awaiting the rest of it later.

``at_once(awaitable)`` runs the awaitable up to its first real wait, in the caller, without a
task or a turn of the event loop; most of toolwire's awaitables (a body already received, a
tool that does not wait) finish there. What is left is awaited in whichever task awaits the
returned rest, which then receives its cancellation, as ``yield from`` would. A
:class:`Rest` given a ``context`` runs every step in it, as a task would run them in its own.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable
from typing import Any


def at_once(awaitable: Awaitable[Any]) -> tuple[Any, Awaitable[Any] | None]:
    """``(value, None)`` if ``awaitable`` gives its value without waiting, else ``(None,
    rest)`` where awaiting ``rest`` finishes it. Exceptions it raises in its first step
    propagate."""
    steps = awaitable.__await__()
    try:
        pending = next(steps)
    except StopIteration as done:
        return done.value, None
    return None, Rest(steps, pending)


class Rest:
    """The rest of an awaitable that has taken its first step and is waiting on ``pending``."""

    def __init__(self, steps: Any, pending: Any, context: contextvars.Context | None = None) -> None:
        self._steps = steps
        self._pending = pending
        self._context = context

    def __await__(self) -> Any:
        steps, pending, context = self._steps, self._pending, self._context
        run = context.run if context is not None else _call
        while True:
            try:
                value = yield pending
            except BaseException as exc:  # cancellation or a timeout, thrown into the task
                throw = getattr(steps, "throw", None)
                if throw is None:  # a plain iterator (some servers' awaitables): it cannot be told
                    raise
                try:
                    pending = run(throw, exc)
                except StopIteration as done:
                    return done.value
            else:
                try:
                    pending = run(next, steps) if value is None else run(steps.send, value)
                except StopIteration as done:
                    return done.value


def _call(function: Any, *arguments: Any) -> Any:
    return function(*arguments)
