"""Rules naming tools of servers: ``SERVER/TOOL`` or a bare ``TOOL``, shell-style patterns.

Shared by the host's approval policy (:mod:`toolwire.host.approval`) and the gateway's
(:mod:`toolwire.gateway.policy`). Each part is matched on its own (``*``, ``?``, ``[...]``),
never the two joined: ``seed/delete_*`` names the tools ``delete_*`` of the servers ``seed``,
and a tool a server calls ``seed/nuke`` is never the tool ``nuke`` of ``seed``. With
``lookalikes``, a name that only looks like one the rule names matches too
(:func:`~toolwire.lookalikes.skeleton`): what refusing and asking rules use, so that
``delete_file`` spelt with a Cyrillic e is refused as the real one is.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection
from dataclasses import dataclass

from .lookalikes import skeleton


@dataclass(frozen=True, slots=True)
class Rule:
    """One pattern of a policy, read: ``server`` is ``None`` for a bare ``TOOL`` rule."""

    text: str
    server: str | None
    tool: str

    @classmethod
    def parse(cls, text: str) -> Rule:
        """The rule ``SERVER/TOOL`` or ``TOOL``; ``ValueError`` when a part is empty."""
        server, slash, tool = text.partition("/")
        if not slash:
            server, tool = "", text
        if not tool or (slash and not server):
            raise ValueError(f"the rule {text!r} needs a tool, and a server before its '/': SERVER/TOOL or TOOL")
        return cls(text, server if slash else None, tool)

    def matches(self, server: str, tool: str, lookalikes: bool = False) -> bool:
        """Whether this rule names ``tool`` of ``server`` (with ``lookalikes``: or a name
        that looks like one it names)."""
        if self.server is not None and not fnmatch.fnmatchcase(server, self.server):
            return False
        if fnmatch.fnmatchcase(tool, self.tool):
            return True
        return lookalikes and fnmatch.fnmatchcase(skeleton(tool), skeleton(self.tool))

    def names_server(self, server: str) -> bool:
        """Whether this is a ``SERVER/TOOL`` rule whose server pattern names ``server``."""
        return self.server is not None and fnmatch.fnmatchcase(server, self.server)

    def owners(self, offered: Collection[tuple[str, str]]) -> list[str]:
        """The servers with a tool this bare rule names (empty for a ``SERVER/TOOL`` rule)."""
        if self.server is not None:
            return []
        return sorted({server for server, tool in offered if fnmatch.fnmatchcase(tool, self.tool)})
