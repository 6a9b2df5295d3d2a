"""Deferred loading: with many tools, the model is shown a few and finds the others.

A host connected to a few servers may offer hundreds of tools, and sending every definition
on every model request costs tokens, money and accuracy. Above :attr:`ToolDeferral.threshold`
tools (default :data:`THRESHOLD`), each request of a conversation carries only:

- the **pinned** tools (:attr:`ToolDeferral.pinned`: rules as the approval policy writes them,
  ``SERVER/TOOL`` or ``TOOL`` with shell wildcards), then the tools the conversation **called
  most recently**, :attr:`ToolDeferral.up_front` of them at most (default 20);
- the tools the model **loaded** in this conversation, which stay until it ends (or until
  their server no longer lists them);
- the host's own discovery tool, ``find_tools`` (``host__find_tools`` when a server has a
  tool of that name, ``host__find_tools_2`` when one has that too, and so on: the names
  the model sees are unique), and ``read_resource`` (named the same way) as always.

``find_tools`` takes ``query``, what the model needs to do in a few words (a query over
:data:`~toolwire.discovery.MAX_QUERY_CHARS` characters is refused); the host ranks
every tool of every connected server for it (:mod:`toolwire.discovery`) and loads the
:attr:`ToolDeferral.found` best (default 5): their definitions are in the model's next
request, and the result the model reads names them. It runs without asking (it only reads
the host's own list) and is reported as :class:`~.events.ToolsLoaded`.

Nothing else changes for a deferred tool: its calls are decided by the same policy and
approvals (a definition that changed since the person approved it is asked about again), a
call of a tool that was not loaded is still a call of that tool, and a server's
``list_changed`` is followed the same way.

Ranking needs the ``search`` extra (``chat`` brings it too). Without it the host sends every
definition, as below the threshold, and says so once in :attr:`Host.warnings`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..discovery import MAX_QUERY_CHARS
from ..rules import Rule
from .model import ToolSpec

#: Tools the model may be offered before the host defers their definitions.
THRESHOLD = 40
#: At most this many pinned and recently used tools are shown up front.
UP_FRONT = 20
#: Tools one search loads, at most.
FOUND = 5
#: The name of the host's discovery tool (prefixed ``host__`` when a server's tool has it).
FIND_TOOLS = "find_tools"

Pair = tuple[str, str]


@dataclass(frozen=True, slots=True)
class ToolDeferral:
    """When and how a host defers tool definitions (see the module's description):
    ``threshold``: defer when more tools than this are offered; ``up_front``: the most
    pinned and recently used tools shown before any search; ``pinned``: rules naming tools
    always shown (``ValueError`` at :class:`~.host.Host` creation for one that cannot be
    read); ``found``: tools one search loads. Pass ``defer_tools=None`` to the host to send
    every definition always."""

    threshold: int = THRESHOLD
    up_front: int = UP_FRONT
    pinned: tuple[str, ...] = ()
    found: int = FOUND

    def rules(self) -> list[Rule]:
        """The pinned rules, read; ``ValueError`` for one that cannot be."""
        return [Rule.parse(text) for text in self.pinned]

    def applies(self, tools: int) -> bool:
        """Whether ``tools`` offered tools are too many to send every time."""
        return tools > self.threshold

    def shown_first(self, offered: Sequence[Pair], recent: Iterable[Pair]) -> list[Pair]:
        """The tools shown up front: the pinned ones in the order offered, then the
        ``recent`` ones (most recent first) that are offered, ``up_front`` at most."""
        rules = self.rules()
        chosen = [pair for pair in offered if any(rule.matches(*pair) for rule in rules)]
        known = set(offered)
        for pair in recent:
            if pair in known and pair not in chosen:
                chosen.append(pair)
        return chosen[: self.up_front]


#: What a host does unless told otherwise.
DEFER_TOOLS = ToolDeferral()


def discovery_spec(name: str, servers: dict[str, int], found: int) -> ToolSpec:
    """The discovery tool as the model sees it; ``servers``: each server's count of tools."""
    listed = ", ".join(f"{server} ({count} tools)" for server, count in servers.items())
    description = (
        f"Find the tools you need. Only some of the {sum(servers.values())} tools of the connected servers are"
        " listed; this searches all of them by what you need to do and loads the best matches (up to"
        f" {found}), which you can call from your next step. Servers: {listed}."
    )
    parameters = {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "maxLength": MAX_QUERY_CHARS,
                "description": "What you need to do, in a few words (e.g. 'send an email', 'list open tickets')",
            }
        },
        "required": ["query"],
    }
    return ToolSpec(name, description, parameters)


def found_text(query: str, found: Sequence[tuple[str, str, str]]) -> str:
    """What the model reads after a search: each tool found as ``(name the model calls it
    by, its server, its description)``, or how to search again when none was."""
    if not found:
        return f"No tool matches {query!r}. Search again with other words: what the tool does, or what it works on."
    lines = [f"Found {len(found)} tool{'' if len(found) == 1 else 's'} for {query!r}; you can call them now:"]
    for name, server, description in found:
        first = description.strip().splitlines()[0] if description.strip() else ""
        lines.append(f"- {name} (server {server}): {first}".rstrip(": "))
    return "\n".join(lines)
