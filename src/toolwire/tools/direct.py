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
    """``handler``: the tool's ``async def``; ``params``: its parameters' names; ``schema``:
    its input schema, whose flat form (when it has one) :meth:`takes` checks against."""

    __slots__ = ("handler", "kinds", "required", "size")

    def __init__(self, handler: Callable[..., Any], params: frozenset[str], schema: dict[str, Any]) -> None:
        self.handler = handler
        simple = simple_schema(schema)
        #: The Python types each parameter's value may have, by name (the flat form's
        #: properties that name a parameter); ``None`` if the schema has no flat form or
        #: requires a name that is not among them: :meth:`takes` then takes nothing.
        self.kinds: dict[str, tuple[type, ...]] | None = None
        #: The required names, and how many arguments there are when each of ``kinds`` is given.
        self.required: frozenset[str] = frozenset()
        self.size = -1
        if simple is not None:
            required, types, _extra = simple
            kinds = {name: accepted for name, accepted in types.items() if name in params}
            if required <= kinds.keys():
                self.kinds = kinds
                self.required = required
                self.size = len(kinds)

    def takes(self, arguments: dict[str, Any]) -> bool:
        """Whether ``arguments`` can go to ``handler(**arguments)`` as they are: each names a
        parameter and a property of the schema's flat form, with a value of its type, and
        every required one is there. ``False`` means: take the full path (the validator's
        verdict and message; an argument the flat form does not list), never that they are
        invalid."""
        kinds = self.kinds
        if kinds is None:
            return False
        for name, value in arguments.items():
            accepted = kinds.get(name)
            if accepted is None or type(value) not in accepted:
                return False
        # each argument names one of kinds: all of them given is all the required ones given
        return len(arguments) == self.size or arguments.keys() >= self.required
