"""Who decides whether a tool call runs: the policy, then the person.

Every call the model asks for gets a :class:`Verdict` from :meth:`ApprovalPolicy.decide`:

1. a ``deny`` pattern that matches refuses it (the model is told why);
2. an ``ask`` pattern asks every time (no "always" is remembered for it);
3. an ``allow`` pattern runs it;
4. otherwise a tool of a **trusted** server that it annotates ``readOnlyHint: true`` runs;
   everything else asks. Annotations of servers the user has not marked trusted are hints
   (the specification says clients must not rely on them), so they never let a call run.

Rules are shell-style patterns (``*``, ``?``, ``[...]``), each matched against the
server's name (the host's own: a config's key, ``NAME=`` of a target) and the tool's name
(the server's), never against the two joined: ``SERVER/TOOL`` names the tools of the servers
its part before the first ``/`` matches (``seed/delete_*``, ``*/read_*``); a bare ``TOOL``
names a tool of whichever server has it (``calculator``). So a tool a server calls
``seed/nuke`` is the tool ``seed/nuke`` of that server, never the tool ``nuke`` of ``seed``.

- ``deny`` and ``ask`` rules also match a name that only looks like one they match
  (:func:`~.lookalikes.skeleton`): ``*delete_file`` refuses ``delete_file`` spelt with a
  Cyrillic e (U+0435) and ``delete_fiIe`` too. ``allow`` rules match exactly.
- A bare ``allow`` rule that matches tools of several servers allows none of them (they are
  asked about; :meth:`ApprovalPolicy.ambiguous` says so once): write ``SERVER/TOOL``, or
  ``*/TOOL`` to allow the tool of every server.
- The names the model sees (``seed__nuke``) are not rules: :meth:`ApprovalPolicy.check`
  refuses a bare rule ``SERVER__TOOL`` that names a known server that way, and a rule or a
  trusted name that names no known server (a rule that would silently do nothing).

Then :class:`Approvals` (one per conversation) remembers what the person approved: "always
allow this tool" skips later questions for it (not for ``ask`` patterns), and a tool whose
definition changed after the person approved it is asked about again, with the change shown,
whatever the policy says (except ``deny``).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from ..client import ToolInfo, fingerprint
from ..client.pinning import PINNED_FIELDS
from ..rules import Rule

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

    def check(self, servers: Collection[str]) -> None:
        """``ValueError`` saying what to write instead for: a rule that cannot be read; a
        trusted server, or a rule's server part, that names none of ``servers``; a bare rule
        ``SERVER__TOOL`` that names one of them the way the model's names do."""
        known = f"the servers are: {', '.join(servers) or 'none'} (a target is named after its file, or NAME=TARGET)"
        for name in sorted(self.trusted):
            if name not in servers:
                raise ValueError(f"no server is called {name!r} (to trust); {known}")
        for kind, patterns in (("allow", self.allow), ("ask", self.ask), ("deny", self.deny)):
            for rule in _rules(patterns):
                where = f"in the rule {kind} {rule.text!r}"
                if rule.server is not None and not any(fnmatch.fnmatchcase(s, rule.server) for s in servers):
                    raise ValueError(f"no server is called {rule.server!r} ({where}); {known}")
                prefix, sep, rest = rule.tool.partition("__")
                if rule.server is None and sep and rest and prefix in servers:
                    raise ValueError(
                        f"the rule {kind} {rule.text!r} reads like the model's name of the tool {rest!r} of the"
                        f" server {prefix!r}; rules name tools as SERVER/TOOL: write {prefix}/{rest}"
                        f" (or */{rule.text} for tools really named so)"
                    )

    def decide(self, server: str, tool: ToolInfo, offered: Collection[tuple[str, str]] = ()) -> Verdict:
        """The verdict on a call of ``tool`` of ``server``; ``offered``: every ``(server, tool
        name)`` the host offers (for bare ``allow`` rules that match tools of several).
        ``ValueError`` for a rule that cannot be read."""
        name = tool.name
        for kind, patterns in (("deny", self.deny), ("ask", self.ask)):
            for rule in _rules(patterns):
                if rule.matches(server, name, lookalikes=True):
                    alike = "" if rule.matches(server, name) else f" (the name {name!r} looks like what it matches)"
                    if kind == "deny":
                        return Verdict("deny", f"refused by the rule deny {rule.text!r}{alike}")
                    return Verdict("ask", f"the rule ask {rule.text!r}{alike}", rememberable=False)
        several = ""
        for rule in _rules(self.allow):
            if rule.matches(server, name):
                owners = rule.owners(offered)
                if len(owners) < 2:
                    return Verdict("allow", f"allowed by the rule {rule.text!r}")
                several = several or _several(rule, owners)
        read_only = tool.annotations.get("readOnlyHint") is True
        if server in self.trusted and read_only:
            return Verdict("allow", "a read-only tool of a trusted server")
        if several:
            return Verdict("ask", several)
        if server in self.trusted:
            return Verdict(
                "ask",
                "the tool may change things"
                if tool.hint("destructiveHint") is False
                else "the tool may change or delete things",
            )
        if read_only:
            return Verdict("ask", f"the server {server!r} is not trusted: its read-only hint is not taken on trust")
        return Verdict("ask", f"the server {server!r} is not trusted")

    def ambiguous(self, offered: Collection[tuple[str, str]]) -> list[str]:
        """What to say of each bare ``allow`` rule that matches tools of several of the
        ``offered`` ``(server, tool name)`` pairs (it allows none of them), with the fix."""
        said = []
        for rule in _rules(self.allow):
            owners = rule.owners(offered)
            if len(owners) > 1:
                each = " or ".join(f"{owner}/{rule.tool}" for owner in owners)
                said.append(f"{_several(rule, owners)}: write {each}, or */{rule.tool} for all")
        return said


def _rules(patterns: Iterable[str]) -> list[Rule]:
    return [Rule.parse(pattern) for pattern in patterns]


def _several(rule: Rule, owners: list[str]) -> str:
    return (
        f"the rule allow {rule.text!r} matches tools of {len(owners)} servers ({', '.join(owners)}),"
        " so it allows none of them"
    )


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
