"""What calling a plain ``async def`` tool at once takes, read once: :class:`DirectCall`.

A tool whose handler is an ``async def`` taking its arguments as they are (no converters, no
context, the base class's ``invoke``) is called as ``handler(**arguments)`` once
:meth:`DirectCall.takes` says its arguments surely match its schema (as
:func:`~.validation.accepts` would say of the schema's flat form) and all name its
parameters, in one pass over them. The ``tools/call`` path reads these from one object of a
compiled class (the compiled build reads its fields without a look-up) instead of from the
tool.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .validation import simple_schema


class DirectCall:
    """``handler``: the tool's ``async def``; ``kinds``: the Python types each parameter's
    value may have, by name (the schema's flat form's properties that name a parameter);
    ``required``: the names the schema requires, all among them. See :func:`direct_call`."""

    __slots__ = ("handler", "kinds", "required", "size")

    def __init__(
        self, handler: Callable[..., Any], kinds: dict[str, tuple[type, ...]], required: frozenset[str]
    ) -> None:
        self.handler = handler
        self.kinds = kinds
        self.required = required
        #: How many arguments there are when each of ``kinds`` is given.
        self.size = len(kinds)

    def takes(self, arguments: dict[str, Any]) -> bool:
        """Whether ``arguments`` can go to ``handler(**arguments)`` as they are: each names a
        parameter and a property of the schema's flat form, with a value of its type, and
        every required one is there. ``False`` means: take the full path (the validator's
        verdict and message; an argument the flat form does not list), never that they are
        invalid."""
        kinds = self.kinds
        for name, value in arguments.items():
            accepted = kinds.get(name)
            if accepted is None or type(value) not in accepted:
                return False
        # each argument names one of kinds: all of them given is all the required ones given
        return len(arguments) == self.size or arguments.keys() >= self.required


def direct_call(handler: Callable[..., Any], params: frozenset[str], schema: dict[str, Any]) -> DirectCall | None:
    """What calling ``handler`` (an ``async def`` taking ``params`` as they are) at once takes,
    for a tool whose input schema is ``schema``; ``None`` if the schema has no flat form
    (:func:`~.validation.simple_schema`) or requires a name that is not a parameter: its
    calls then take the full path."""
    simple = simple_schema(schema)
    if simple is None:
        return None
    required, types, _extra = simple
    kinds = {name: accepted for name, accepted in types.items() if name in params}
    return DirectCall(handler, kinds, required) if required <= kinds.keys() else None
