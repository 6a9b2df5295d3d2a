"""What calling a plain ``async def`` tool at once takes, read once: :class:`DirectCall`.

A tool whose handler is an ``async def`` taking its arguments as they are (no converters, no
context, the base class's ``invoke``) is called as ``handler(**arguments)`` once
:meth:`DirectCall.takes` says its arguments surely match its schema's flat form (as
:func:`~.validation.accepts` would) and all name its parameters, in one pass over them. The
``tools/call`` path reads these from one object of a compiled class (the compiled build reads
its fields without a look-up) instead of from the tool.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .validation import Validator


class DirectCall:
    """``handler``: the tool's ``async def``; ``params``: its parameters' names; ``validator``:
    the tool's input validator (whose :attr:`~.validation.Validator.simple` form, once made,
    accepts arguments without jsonschema)."""

    __slots__ = ("handler", "params", "validator")

    def __init__(self, handler: Callable[..., Any], params: frozenset[str], validator: Validator) -> None:
        self.handler = handler
        self.params = params
        self.validator = validator

    def takes(self, arguments: dict[str, Any]) -> bool:
        """Whether ``arguments`` can go to ``handler(**arguments)`` as they are: each names a
        parameter and a property of the schema's flat form, with a value of its type, and
        every required one is there. ``False`` means: take the full path (the validator's
        verdict and message; an argument the flat form does not list), never that they are
        invalid."""
        simple = self.validator.simple
        if simple is None:  # not made yet (the first call makes it), or the schema is not simple
            return False
        required, types, _extra = simple
        params = self.params
        present = 0
        for name, value in arguments.items():
            accepted = types.get(name)
            if accepted is None or type(value) not in accepted or name not in params:
                return False
            if name in required:
                present += 1
        return present == len(required)
