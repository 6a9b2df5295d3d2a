"""Who decides whether a tool call runs: the policy, then the person.

Every call the model asks for gets a :class:`Verdict` from :meth:`ApprovalPolicy.decide`:

1. a ``deny`` pattern that matches refuses it (the model is told why);
2. an ``ask`` pattern asks every time (no "always" is remembered for it);
3. an ``allow`` pattern runs it;
4. otherwise a tool of a **trusted** server that it annotates ``readOnlyHint: true`` runs;
   everything else asks. Annotations of servers the user has not marked trusted are hints
   (the specification says clients must not rely on them), so they never let a call run.

Patterns are shell-style (``*``, ``?``, ``[...]``) and match ``SERVER/TOOL`` (the names the
server gave), ``TOOL``, or the name the model sees: ``seed/delete_*``, ``*/read_*``, ``calculator``.

Then :class:`Approvals` (one per conversation) remembers what the person approved: "always
allow this tool" skips later questions for it (not for ``ask`` patterns), and a tool whose
definition changed after the person approved it is asked about again, with the change shown,
whatever the policy says (except ``deny``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from ..client import ToolInfo, fingerprint
from ..client.client import PINNED_FIELDS

Action = Literal["allow", "ask", "deny"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What happens to a call: ``action``, the ``reason`` shown to the person (and, for a
    refusal, to the model), and whether "always allow" may be offered."""

    action: Action
    reason: str
    rememberable: bool = True


@dataclass(slots=True)
class ApprovalPolicy:
    """Rules for tool calls (see the module's description). ``trusted``: names of servers
    whose annotations are believed."""

    allow: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    trusted: set[str] = field(default_factory=set)

    def decide(self, server: str, tool: ToolInfo, exposed: str | None = None) -> Verdict:
        names = (f"{server}/{tool.name}", tool.name, exposed or tool.name)
        if pattern := _first_match(self.deny, names):
            return Verdict("deny", f"refused by the rule deny {pattern!r}")
        if pattern := _first_match(self.ask, names):
            return Verdict("ask", f"the rule ask {pattern!r}", rememberable=False)
        if pattern := _first_match(self.allow, names):
            return Verdict("allow", f"allowed by the rule {pattern!r}")
        read_only = tool.annotations.get("readOnlyHint") is True
        if server in self.trusted:
            if read_only:
                return Verdict("allow", "a read-only tool of a trusted server")
            return Verdict(
                "ask",
                "the tool may change things"
                if tool.hint("destructiveHint") is False
                else "the tool may change or delete things",
            )
        if read_only:
            return Verdict("ask", f"the server {server!r} is not trusted: its read-only hint is not taken on trust")
        return Verdict("ask", f"the server {server!r} is not trusted")


def _first_match(patterns: Iterable[str], names: tuple[str, ...]) -> str | None:
    for pattern in patterns:
        if any(fnmatch.fnmatchcase(name, pattern) for name in names):
            return pattern
    return None


@dataclass(frozen=True, slots=True)
class Change:
    """A field of a tool's definition that differs from what the person approved (the values
    as compact JSON; ``None`` when absent)."""

    field: str
    before: str | None
    after: str | None


class Approvals:
    """What the person approved in one conversation: tools always allowed, and each approved
    tool's definition (to notice a change)."""

    def __init__(self) -> None:
        self.always: set[tuple[str, str]] = set()
        self.definitions: dict[tuple[str, str], dict[str, Any]] = {}

    def record(self, server: str, tool: ToolInfo, always: bool) -> None:
        """The person allowed a call of ``tool`` (``always``: for the rest of the conversation)."""
        key = (server, tool.name)
        self.definitions[key] = {name: tool.raw.get(name) for name in PINNED_FIELDS if name in tool.raw}
        if always:
            self.always.add(key)

    def changes(self, server: str, tool: ToolInfo) -> list[Change]:
        """How ``tool`` differs from the definition the person approved (empty if it does
        not, or if they never approved it)."""
        approved = self.definitions.get((server, tool.name))
        if approved is None:
            return []
        then = fingerprint(ToolInfo.from_dict({"name": tool.name, **approved}))
        now = fingerprint(tool)
        return [
            Change(name, _shown(approved.get(name)), _shown(tool.raw.get(name)))
            for name in PINNED_FIELDS
            if then[name] != now[name]
        ]

    def remembered(self, server: str, name: str) -> bool:
        return (server, name) in self.always

    def to_dict(self) -> dict[str, Any]:
        return {
            "always": [f"{server}/{name}" for server, name in sorted(self.always)],
            "approved": [{"server": s, "tool": n, "definition": d} for (s, n), d in self.definitions.items()],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Approvals:
        approvals = cls()
        for entry in data.get("always", []):
            server, _, name = str(entry).partition("/")
            approvals.always.add((server, name))
        for entry in data.get("approved", []):
            approvals.definitions[(entry["server"], entry["tool"])] = dict(entry["definition"])
        return approvals


def _shown(value: Any) -> str | None:
    return None if value is None else orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
