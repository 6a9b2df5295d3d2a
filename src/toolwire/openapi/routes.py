"""What the user decides about operations: route maps (which operations are served, and as
what) and overrides (one operation's name, title, description, annotations, tags).

Route maps are tried in order; the first one that matches an operation decides. A map
matches when the method is one of ``methods`` (any when empty), ``pattern`` is found in the
path (:func:`re.search`: anchor it with ``^`` and ``$`` to match whole paths), the operation
has every tag of ``tags``, and ``kind`` fits the operation: ``"resource"`` a ``GET`` with no
path parameters and nothing else required, ``"template"`` a ``GET`` whose required arguments
are all path parameters (with names a URI template can hold); ``"tool"`` and ``"exclude"``
fit every operation. An operation no map matches is a tool.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

#: What a route map makes of the operations it matches.
RouteKind = Literal["tool", "resource", "template", "exclude"]
_KINDS = ("tool", "resource", "template", "exclude")


@dataclass(frozen=True)
class RouteMap:
    """Operations matching every condition given are served as ``kind`` (see the module).
    ``ValueError`` for a pattern that is not a regular expression or an unknown kind."""

    methods: tuple[str, ...] = ()
    pattern: str = ""
    tags: tuple[str, ...] = ()
    kind: RouteKind = "tool"
    _compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"a route map's kind is one of {', '.join(_KINDS)}, not {self.kind!r}")
        if isinstance(self.methods, str):  # methods="GET" means ("GET",), not ("G", "E", "T")
            object.__setattr__(self, "methods", (self.methods,))
        if isinstance(self.tags, str):
            object.__setattr__(self, "tags", (self.tags,))
        object.__setattr__(self, "methods", tuple(method.upper() for method in self.methods))
        try:
            object.__setattr__(self, "_compiled", re.compile(self.pattern))
        except re.error as exc:
            raise ValueError(f"the route map pattern {self.pattern!r} is not a regular expression: {exc}") from None

    def matches(self, method: str, path: str, tags: tuple[str, ...]) -> bool:
        """Whether the method, path and tags of an operation match (``kind`` aside)."""
        return (
            (not self.methods or method in self.methods)
            and self._compiled.search(path) is not None
            and all(tag in tags for tag in self.tags)
        )


@dataclass(frozen=True)
class Override:
    """What to change in one operation (``None``: keep what the document gives). ``annotations``
    are laid over the ones the method gives; ``tags`` replace the operation's tags."""

    name: str | None = None
    title: str | None = None
    description: str | None = None
    annotations: Mapping[str, Any] | None = None
    tags: tuple[str, ...] | None = None
