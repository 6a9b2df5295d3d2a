"""Completion (``completion/complete``): suggestions for a prompt argument or a resource
template variable while the user types it.

A completer is attached per argument (``complete={"language": ...}`` on ``@server.prompt``
or ``@server.resource``) and is either

* a list of values: those that start with what was typed (ignoring case) are suggested, in
  the list's order; or
* a function ``fn(value)`` or ``fn(value, arguments)``, sync or async, where ``arguments``
  holds the other arguments already resolved (``context.arguments``). It returns a list of
  values, or a :class:`Completion` to report a ``total`` of its own.

At most 100 values are sent; ``hasMore`` says when there were more.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["Completion", "MAX_VALUES", "complete"]

MAX_VALUES = 100


class Completion:
    """Suggestions with an optional ``total`` (all matches, beyond those sent) and ``has_more``."""

    __slots__ = ("has_more", "total", "values")

    def __init__(self, values: list[str], total: int | None = None, has_more: bool | None = None) -> None:
        self.values = list(values)
        self.total = total
        self.has_more = has_more


async def complete(completer: list[str] | Callable[..., Any], value: str, arguments: dict[str, str]) -> dict[str, Any]:
    """The ``completion`` object of a ``CompleteResult``. ``TypeError`` if a completer function
    returns something other than values."""
    if isinstance(completer, (list, tuple)):
        typed = value.casefold()
        found = Completion([str(item) for item in completer if str(item).casefold().startswith(typed)])
    else:
        takes_arguments = _arity(completer) >= 2
        answer = completer(value, arguments) if takes_arguments else completer(value)
        if inspect.isawaitable(answer):
            answer = await answer
        if isinstance(answer, Completion):
            found = answer
        elif isinstance(answer, (list, tuple)) and all(isinstance(item, str) for item in answer):
            found = Completion(list(answer))
        else:
            raise TypeError(f"a completer returned {type(answer).__name__}: return a list of strings or a Completion")
    values = found.values[:MAX_VALUES]
    total = found.total if found.total is not None else len(found.values)
    has_more = found.has_more if found.has_more is not None else total > len(values)
    return {"values": values, "total": total, "hasMore": has_more}


def _arity(function: Callable[..., Any]) -> int:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return 1
    if any(p.kind is p.VAR_POSITIONAL for p in parameters):
        return 2
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters)
