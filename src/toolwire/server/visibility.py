"""Which tools, resources and prompts a request sees: rules by name and tag, for everyone,
for one authenticated caller, or for one session.

Theory of operation
-------------------
A :class:`Rule` shows or hides the items of one kind (``"tools"``, ``"resources"``,
``"prompts"``; ``None``: every kind) picked by name (a resource by its URI) or by tag, or
every item of the kind. A request's :class:`Rules` are the server's rules, then its
caller's, then its session's, in that order; the last rule that matches an item decides,
and an item no rule matches is shown. Rules only narrow what the catalogs offer: a disabled
item stays hidden, and scopes still apply.

A hidden item is absent from its list and unknown to calls, reads and ``prompts/get``. List
pages are cached per version, offset, scope view and rules (a :class:`Rules` is immutable,
its hash computed once), so sessions that see the same thing share pages, and a server
with no rules at all checks one flag (:attr:`Visibility.active`) and nothing more.

Each scope's rules are a :class:`RuleSet` changed with ``enable`` / ``disable`` /
``reset``. A change tells only the sessions it affects that their lists changed: the
server's rules every session (through the catalogs), a caller's the legacy sessions that
caller opened and the 2026-07-28 subscriptions it made, a session's that session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from ..tools.tags import tag_set

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..protocol.incoming import Request
    from .server import Server
    from .session import ServerSession

#: The kinds rules speak of, and the catalogs (by their ``kind``) each covers.
KINDS = ("tools", "resources", "prompts")
_KIND_OF_CATALOG = {"tools": "tools", "resources": "resources", "resourceTemplates": "resources", "prompts": "prompts"}
#: Combinations of rules remembered at most (caller x session rule sets); then started over.
MAX_COMBINED = 1024


class Rule(NamedTuple):
    """Show (``shown``) or hide the items of ``kind`` (``None``: all kinds) named in
    ``names`` or carrying one of ``tags``; ``everything``: all items of the kind."""

    shown: bool
    kind: str | None
    names: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()
    everything: bool = False

    def matches(self, kind: str, key: str, tags: frozenset[str]) -> bool:
        if self.kind is not None and self.kind != kind:
            return False
        return self.everything or key in self.names or not self.tags.isdisjoint(tags)


class Rules:
    """An immutable sequence of rules, hashed once (it keys cached list pages)."""

    __slots__ = ("_hash", "rules")

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.rules = rules
        self._hash = hash(rules)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Rules) and other._hash == self._hash and other.rules == self.rules

    def __repr__(self) -> str:
        return f"Rules({list(self.rules)!r})"

    def shows(self, catalog_kind: str, key: str, item: Any) -> bool:
        """Whether an item of the catalog ``catalog_kind`` (``"tools"``, ``"resourceTemplates"``...)
        stored as ``key`` is shown."""
        kind = _KIND_OF_CATALOG.get(catalog_kind, catalog_kind)
        tags: frozenset[str] = getattr(item, "tags", frozenset())
        shown = True
        for rule in self.rules:
            if rule.matches(kind, key, tags):
                shown = rule.shown
        return shown


class RuleSet:
    """The rules of one scope (the server's, a caller's, a session's). ``on_change(kinds)``
    is told which kinds of list a change affects; ``affects(rule)`` says which those are."""

    def __init__(self, on_change: Callable[[frozenset[str]], None], affects: Callable[[Rule], frozenset[str]]) -> None:
        self._on_change = on_change
        self._affects = affects
        self._rules: tuple[Rule, ...] = ()
        #: The rules as they stand, or ``None`` for none.
        self.rules: Rules | None = None

    def disable(self, *names: str, tags: Iterable[str] | None = None, kind: str | None = None) -> None:
        """Hide the items named (tool and prompt names, resource URIs) or carrying one of
        ``tags``, of ``kind`` (``"tools"``, ``"resources"``, ``"prompts"``; ``None``: all).
        ``ValueError`` for an unknown kind, or nothing named."""
        self._add((self._rule(False, names, tags, kind),))

    def enable(
        self, *names: str, tags: Iterable[str] | None = None, kind: str | None = None, only: bool = False
    ) -> None:
        """Show again what an earlier rule (of this scope or a broader one) hid; ``only``:
        and hide every other item of ``kind``. ``ValueError`` as for :meth:`disable`."""
        shown = self._rule(True, names, tags, kind)
        self._add((Rule(False, kind, everything=True), shown) if only else (shown,))

    def reset(self) -> None:
        """Drop every rule of this scope."""
        if self._rules:
            kinds = self._kinds(self._rules)
            self._rules = ()
            self.rules = None
            self._on_change(kinds)

    def _add(self, rules: tuple[Rule, ...]) -> None:
        self._rules = (*self._rules, *rules)
        self.rules = Rules(self._rules)
        self._on_change(self._kinds(rules))

    def _kinds(self, rules: tuple[Rule, ...]) -> frozenset[str]:
        return frozenset().union(*(self._affects(rule) for rule in rules))

    @staticmethod
    def _rule(shown: bool, names: tuple[str, ...], tags: Iterable[str] | None, kind: str | None) -> Rule:
        if kind is not None and kind not in KINDS:
            raise ValueError(f"kind must be one of {list(KINDS)} or None (all), not {kind!r}")
        chosen = tag_set("visibility rule", tags)
        if not names and not chosen:
            raise ValueError("name at least one item or one tag")
        for name in names:
            if not isinstance(name, str):
                raise ValueError(f"names are strings, not {name!r}")
        return Rule(shown, kind, frozenset(names), chosen)


class Visibility:
    """The rules of one server: :attr:`everyone`'s, each caller's (:meth:`caller`) and each
    session's (:meth:`session`). See the module's documentation."""

    def __init__(self, server: Server) -> None:
        self._server = server
        #: Rules for every request.
        self.everyone = RuleSet(self._everyone_changed, self._affected)
        self._callers: dict[str, RuleSet] = {}
        self._combined: dict[tuple[Rules | None, ...], Rules | None] = {}
        self._listeners: dict[int, Callable[[frozenset[str], str], None]] = {}
        #: Whether any rule was ever set: until then lists and calls skip all of this.
        self.active = False

    def _activate(self) -> None:
        """The first rule was set: calls are checked from now on (routed to a
        ``tools/call`` handler that knows this object: servers without rules pay nothing)."""
        if not self.active:
            from .calls import route_calls

            self.active = True
            route_calls(self._server)

    def caller(self, name: str) -> RuleSet:
        """The rules of the authenticated caller ``name`` (a token's subject: what
        ``Identity.name`` says), made at first use."""
        rules = self._callers.get(name)
        if rules is None:
            rules = self._callers[name] = RuleSet(lambda kinds: self._caller_changed(kinds, name), self._affected)
        return rules

    def session(self, session: ServerSession) -> RuleSet:
        """The rules of ``session`` alone (they end with it)."""
        rules: RuleSet | None = session.visibility
        if rules is None:
            rules = session.visibility = RuleSet(lambda kinds: self._session_changed(kinds, session), self._affected)
        return rules

    def rules_for(self, session: ServerSession, request: Request) -> Rules | None:
        """The rules ``request`` on ``session`` is seen through (``None``: none)."""
        base = self.everyone.rules
        caller = session.caller_name(request)
        by_caller = self._callers.get(caller) if caller is not None else None
        own = session.visibility
        key = (base, by_caller.rules if by_caller is not None else None, own.rules if own is not None else None)
        if key[1] is None and key[2] is None:
            return base
        combined = self._combined.get(key, False)
        if combined is False:
            if len(self._combined) >= MAX_COMBINED:
                self._combined.clear()
            parts = tuple(rule for rules in key if rules is not None for rule in rules.rules)
            combined = self._combined[key] = Rules(parts)
        return combined  # type: ignore[return-value]

    def hides(self, session: ServerSession, request: Request, catalog_kind: str, key: str, item: Any) -> bool:
        """Whether the rules of ``request`` hide ``item`` (stored as ``key`` in the catalog
        ``catalog_kind``); ``False`` at once while no rule was ever set."""
        if not self.active:
            return False
        rules = self.rules_for(session, request)
        return rules is not None and not rules.shows(catalog_kind, key, item)

    def allows(self, session: ServerSession, request: Request, catalog_kind: str, key: str, item: Any) -> bool:
        """Whether ``request`` may see and use ``item`` (stored as ``key`` in the catalog
        ``catalog_kind``): it is enabled, the caller has its scopes, no rule hides it. The
        one check of every path that shows or runs an item by name other than the catalogs'
        own lists (which apply it to whole pages) and ``tools/call``'s hot path (which
        checks the same in pieces): what ``search_tools`` finds and ``call_tool`` runs,
        the low-level handlers' tools."""
        if not item.enabled:
            return False
        caller = session.caller(request)
        if caller is not None and not item.scopes <= caller.scopes:
            return False
        return not self.hides(session, request, catalog_kind, key, item)

    def on_change(self, listener: Callable[[frozenset[str], str], None]) -> Callable[[], object]:
        """Call ``listener(kinds, caller)`` when the rules of ``caller`` change; returns a
        function that unsubscribes it."""
        key = id(listener)
        self._listeners[key] = listener
        return lambda: self._listeners.pop(key, None)

    def _catalogs(self) -> dict[str, tuple[Catalog[Any], ...]]:
        server = self._server
        return {
            "tools": (server.registry,),
            "prompts": (server.prompts,),
            "resources": (server.resources, server.resource_templates),
        }

    def _affected(self, rule: Rule) -> frozenset[str]:
        """The kinds of list ``rule`` may change: those holding an item it matches."""
        affected = set()
        for kind, catalogs in self._catalogs().items():
            if rule.kind in (None, kind) and any(
                rule.matches(kind, key, item.tags) for catalog in catalogs for key, item in catalog.by_key.items()
            ):
                affected.add(kind)
        return frozenset(affected)

    def _everyone_changed(self, kinds: frozenset[str]) -> None:
        self._activate()
        catalogs = self._catalogs()
        for kind in kinds:
            for catalog in catalogs[kind]:
                catalog.refresh()  # every session hears of it, as of any change of the catalog

    def _caller_changed(self, kinds: frozenset[str], caller: str) -> None:
        self._activate()
        for listener in list(self._listeners.values()):
            listener(kinds, caller)

    def _session_changed(self, kinds: frozenset[str], session: ServerSession) -> None:
        self._activate()
        for kind in sorted(kinds):
            session.list_changed(kind)
