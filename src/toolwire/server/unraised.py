"""A coroutine's first step whose end raises nothing: how the session runs a queued call.

Driving a coroutine by hand (``coroutine.send(None)``) ends it with ``StopIteration`` carrying
its value: an exception object and its traceback, and in the compiled build a traceback entry
mypyc makes for the compiled frame it passes (a code object and a frame): about 2,300
instructions per call there. Awaited from a coroutine instead, the value passes without an
exception; :func:`boxed` awaits the work, keeps its value in a box and returns ``None``, which
``next(steps, FINISHED)`` tells without raising. This module stays interpreted (it is not in
``toolwire.build.COMPILED``): CPython's own ``await`` is the part that raises nothing. What the
work raises propagates as it would have (through one more frame, this module's).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

#: What ``next(steps, FINISHED)`` gives once the work has ended (its value is in the box).
FINISHED: Any = object()


async def boxed(box: list[Any], work: Awaitable[Any]) -> None:
    """Await ``work`` and append its value to ``box``; what it raises propagates."""
    box.append(await work)


async def unboxed(rest: Awaitable[None], box: list[Any]) -> Any:
    """The rest of a :func:`boxed` work that waited, awaited: the work's value."""
    await rest
    return box[0]
