"""A coroutine's first step whose end raises nothing: how the session runs a queued call.

Driving a coroutine by hand (``coroutine.send(None)``) ends it with ``StopIteration`` carrying
its value: an exception object and its traceback, and in the compiled build a traceback entry
mypyc makes for the compiled frame it passes (a code object and a frame): about 2,300
instructions per call there. Taken with ``yield from`` instead, the value passes without an
exception; :func:`boxed` takes the work so, keeps its value in a box and returns ``None``,
which ``next(steps, FINISHED)`` tells without raising. It is a generator-based coroutine
(``types.coroutine``): its steps are the generator itself, without the wrapper an ``async
def``'s ``__await__()`` makes. This module stays interpreted (it is not in
``toolwire.build.COMPILED``): CPython's own ``yield from`` is the part that raises nothing.
What the work raises propagates as it would have (through one more frame, this module's).
"""

from __future__ import annotations

import types
from collections.abc import Awaitable, Coroutine, Generator
from typing import Any

#: What ``next(steps, FINISHED)`` gives once the work has ended (its value is in the box).
FINISHED: Any = object()


@types.coroutine
def boxed(box: list[Any], work: Coroutine[Any, Any, Any]) -> Generator[Any, Any, None]:
    """Take ``work`` (a coroutine: see :func:`awaited` for other awaitables) to its end and
    append its value to ``box``; what it raises propagates. Its steps: ``next(boxed(box,
    work), FINISHED)``."""
    box.append((yield from work))  # a coroutine, which a types.coroutine generator may take


async def awaited(work: Awaitable[Any]) -> Any:
    """``work``, an awaitable that is no coroutine (a future, an object with ``__await__``),
    as a coroutine that :func:`boxed` can take."""
    return await work


async def unboxed(rest: Awaitable[None], box: list[Any]) -> Any:
    """The rest of a :func:`boxed` work that waited, awaited: the work's value."""
    await rest
    return box[0]
