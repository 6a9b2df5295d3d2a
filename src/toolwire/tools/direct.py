"""What calling a plain ``async def`` tool at once takes, read once: :class:`DirectCall`.

A tool whose handler is an ``async def`` taking its arguments as they are (no converters, no
context, the base class's ``invoke``) is called as ``handler(**arguments)`` once its
arguments are accepted by its schema's flat form (:func:`~.validation.accepts`) and all name
its parameters. The ``tools/call`` path reads these three from one object of a compiled class
(the compiled build reads its fields without a look-up) instead of from the tool.
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
