"""Pinning: tool definitions checked against the ones approved, so that a server cannot change
what a tool says it does behind the user's back (see :meth:`Pinning.approve`)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import TYPE_CHECKING

import orjson

from .errors import ToolChanged
from .types import ToolInfo

#: Fields of a tool definition that pinning watches.
PINNED_FIELDS = ("title", "description", "inputSchema", "outputSchema", "annotations")


class Pinning:
    """The :class:`~toolwire.client.Client`'s pins: ``approve`` and ``changed_tools`` (a mixin of it)."""

    if TYPE_CHECKING:
        pins: dict[str, dict[str, str]] | None
        _tools: dict[str, ToolInfo]

    def approve(self, tools: Iterable[ToolInfo] | None = None) -> dict[str, dict[str, str]]:
        """Record the definitions of ``tools`` (default: every listed tool) as approved, and
        return the pins (save them to check the same server later with ``Client(pins=...)``).
        Afterwards a call to a tool whose definition differs raises :class:`ToolChanged`."""
        if self.pins is None:
            self.pins = {}
        for tool in tools if tools is not None else self._tools.values():
            self.pins[tool.name] = fingerprint(tool)
        return self.pins

    def changed_tools(self) -> dict[str, list[str]]:
        """Listed tools whose definitions differ from their pins: name -> changed fields
        (``["not approved"]`` for a tool that has none)."""
        return {name: fields for name, tool in self._tools.items() if (fields := self._pin_changes(name, tool))}

    def _pin_changes(self, name: str, tool: ToolInfo | None) -> list[str]:
        pinned = (self.pins or {}).get(name)
        if pinned is None:
            return ["not approved"]
        if tool is None:
            return ["no longer listed"]
        now = fingerprint(tool)
        return [field for field in PINNED_FIELDS if now.get(field) != pinned.get(field)]

    def _check_pin(self, name: str, tool: ToolInfo | None) -> None:
        changes = self._pin_changes(name, tool)
        if changes:
            raise ToolChanged(name, changes)


def fingerprint(tool: ToolInfo) -> dict[str, str]:
    """SHA-256 of each pinned field of a tool's definition (canonical JSON)."""
    return {
        field: hashlib.sha256(orjson.dumps(tool.raw.get(field), option=orjson.OPT_SORT_KEYS)).hexdigest()
        for field in PINNED_FIELDS
    }
