"""Who may see and call which tools of the gateway: the ``[policy]`` table of gateway.toml.

Sections grant rules: ``[policy.default]`` to everyone, ``[policy.groups.NAME]`` to the
callers whose groups claim holds ``NAME``, ``[policy.scopes."SCOPE"]`` to those whose token
grants ``SCOPE``, ``[policy.users."ID"]`` to the caller whose subject or ``email`` claim is
``ID``. A caller's sections are merged (their rules joined); then ``deny`` wins over
``ask``, ``ask`` over ``allow``, and a tool no ``allow`` or ``ask`` rule names is hidden from
``tools/list`` and refused. Anonymous callers (stdio, HTTP without ``[auth]``) get the
default section alone. With no ``[policy]`` table at all, everyone may call everything.

Rules are the host's (:mod:`toolwire.rules`): ``UPSTREAM/TOOL`` with shell-style patterns,
matched against the namespaced name ``UPSTREAM{separator}TOOL`` split at its first
separator; ``deny`` and ``ask`` also match names that only look like what they name (a
Cyrillic e, a capital I for an l), ``allow`` matches exactly.

``[[policy.constraints]]`` restricts one argument of the tools a rule names: ``under`` (an
absolute path inside a folder: checked lexically, any ``..`` refused; a symlink inside the
folder that points out of it is not seen), ``pattern`` (a regular expression the whole value
matches), ``one_of`` (a list of allowed values), ``max_length`` (of a string). A call that
breaks one is refused with a tool error naming the argument and the rule.

A table that cannot be read is refused by :func:`load_policy` with a ``ValueError`` of one
line naming the table and the key.
"""

from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..guards.seam import Call, Guard, Next, Result, lists_too, refusal
from ..rules import Rule
from ..server.search import CALL_TOOL, SEARCH_TOOL, describe_found

if TYPE_CHECKING:
    from ..auth.identity import Identity
    from ..tools.tool import Tool

Action = Literal["allow", "ask", "deny", "hidden"]

SECTION_KEYS = ("allow", "ask", "deny", "search", "rate", "rate_per_tool", "concurrency")
POLICY_KEYS = ("default", "groups", "scopes", "users", "constraints")
CONSTRAINT_KEYS = ("tool", "argument", "under", "pattern", "one_of", "max_length")
CHECKS = ("under", "pattern", "one_of", "max_length")
#: Callers whose merged sections (and each one's verdicts) are kept, at most.
REMEMBERED = 4096


def known_keys(table: Mapping[str, Any], keys: Sequence[str], where: str) -> None:
    """``ValueError`` naming the first key of ``table`` not among ``keys`` (with the likeliest
    meant one)."""
    for key in table:
        if key not in keys:
            close = difflib.get_close_matches(key, keys, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else f" (known keys: {', '.join(keys)})"
            raise ValueError(f"{where} {key!r} is not a known key{hint}")


def _table(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be a table, not {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list"}.get(
        type(value), type(value).__name__
    )


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the policy says of one tool for one caller, and the rule that said it."""

    action: Action
    rule: str


@dataclass(frozen=True, slots=True)
class Section:
    """One section of the policy, read (``None``: the section does not say)."""

    where: str
    allow: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()
    search: bool | None = None
    rate: str | None = None
    rate_per_tool: bool | None = None
    concurrency: int | None = None

    @classmethod
    def read(cls, table: Any, where: str) -> Section:
        """The section ``table`` (named ``where`` in errors); ``ValueError`` if it cannot be read."""
        table = _table(table, where)
        known_keys(table, SECTION_KEYS, where)
        rules = {kind: _rules(table.get(kind, []), where, kind) for kind in ("allow", "ask", "deny")}
        for key in ("search", "rate_per_tool"):
            if key in table and not isinstance(table[key], bool):
                raise ValueError(f"{where} {key!r} must be true or false, not {_kind(table[key])}")
        rate = table.get("rate")
        if rate is not None:
            from ..guards.rate import parse_rate

            if not isinstance(rate, str):
                raise ValueError(f"{where} 'rate' must be a string such as \"60/minute\", not {_kind(rate)}")
            try:
                parse_rate(rate)
            except ValueError as exc:
                raise ValueError(f"{where} 'rate': {exc}") from None
        concurrency = table.get("concurrency")
        if concurrency is not None and (type(concurrency) is not int or concurrency < 1):
            raise ValueError(f"{where} 'concurrency' must be a whole number of 1 or more, not {concurrency!r}")
        return cls(
            where, rules["allow"], rules["ask"], rules["deny"], table.get("search"), rate,
            table.get("rate_per_tool"), concurrency,
        )  # fmt: skip


def _rules(value: Any, where: str, kind: str) -> tuple[Rule, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f'{where} {kind!r} must be a list of rules such as ["github/get_*"], not {_kind(value)}')
    rules = []
    for text in value:
        try:
            rule = Rule.parse(text)
        except ValueError as exc:
            raise ValueError(f"{where} {kind!r}: {exc}") from None
        if rule.server is None:
            raise ValueError(
                f"{where} {kind!r}: the rule {text!r} names no upstream; write UPSTREAM/TOOL"
                f" (*/{text} for the tool of every upstream)"
            )
        rules.append(rule)
    return tuple(rules)


class Grant:
    """The merged sections of one caller: what they may see and call. ``who`` names them in
    refusals. Verdicts are kept per tool name (at most :data:`REMEMBERED`)."""

    __slots__ = ("_said", "allow", "ask", "concurrency", "deny", "rate", "rate_per_tool", "search", "separator", "who")

    def __init__(
        self, who: str, default: Section, shared: Sequence[Section], own: Section | None, separator: str, search: bool
    ) -> None:
        self.who = who
        self.separator = separator
        sections = [default, *shared, *([own] if own is not None else [])]
        self.allow = tuple(rule for section in sections for rule in section.allow)
        self.ask = tuple(rule for section in sections for rule in section.ask)
        self.deny = tuple(rule for section in sections for rule in section.deny)
        self.search: bool = _most_specific(default, shared, own, "search", search)
        self.rate: str | None = _most_specific(default, shared, own, "rate", None)
        self.rate_per_tool: bool = _most_specific(default, shared, own, "rate_per_tool", False)
        self.concurrency: int | None = _most_specific(default, shared, own, "concurrency", None)
        self._said: dict[str, Verdict] = {}

    def verdict(self, name: str) -> Verdict:
        """The verdict on the namespaced tool ``name``."""
        said = self._said.get(name)
        if said is None:
            if len(self._said) >= REMEMBERED:
                self._said.clear()
            said = self._said[name] = self._decide(name)
        return said

    def _decide(self, name: str) -> Verdict:
        upstream, sep, tool = name.partition(self.separator)
        if not sep:
            upstream, tool = "", name
        for rule in self.deny:
            if rule.matches(upstream, tool, lookalikes=True):
                return Verdict("deny", f"deny {rule.text!r}")
        for rule in self.ask:
            if rule.matches(upstream, tool, lookalikes=True):
                return Verdict("ask", f"ask {rule.text!r}")
        for rule in self.allow:
            if rule.matches(upstream, tool):
                return Verdict("allow", f"allow {rule.text!r}")
        return Verdict("hidden", "no allow or ask rule names it")

    def sees(self, name: str) -> bool:
        return self.verdict(name).action in ("allow", "ask")


def _most_specific(default: Section, shared: Sequence[Section], own: Section | None, key: str, fallback: Any) -> Any:
    """The value the caller's own section gives ``key``, else the most generous one their
    groups' and scopes' sections give, else the default section's, else ``fallback``."""
    if own is not None and getattr(own, key) is not None:
        return getattr(own, key)
    given = [getattr(section, key) for section in shared if getattr(section, key) is not None]
    if given:
        return _generous(key, given)
    value = getattr(default, key)
    return fallback if value is None else value


def _generous(key: str, values: list[Any]) -> Any:
    if key == "rate":
        from ..guards.rate import parse_rate

        return max(values, key=lambda rate: parse_rate(rate)[0])
    if key == "search":
        return all(values)  # the whole list unless every section asks for search alone
    return max(values)


@dataclass(frozen=True, slots=True)
class Constraint:
    """One ``[[policy.constraints]]`` entry: ``argument`` of the tools ``rule`` names."""

    rule: Rule
    argument: str
    check: str
    limit: Any

    def problem(self, value: Any) -> str | None:
        """Why ``value`` breaks this constraint (``None`` if it keeps it)."""
        if self.check == "one_of":
            if value in self.limit:
                return None
            return f"must be one of {', '.join(repr(item) for item in self.limit)}"
        if not isinstance(value, str):
            return f"must be a string, not {_kind(value)}"
        if self.check == "max_length":
            fits = len(value) <= self.limit
            return None if fits else f"must be at most {self.limit} characters (it has {len(value)})"
        if self.check == "pattern":
            return None if self.limit.fullmatch(value) else f"must match the pattern {self.limit.pattern!r}"
        return _outside(value, self.limit)

    def said(self) -> str:
        limit = self.limit.pattern if self.check == "pattern" else self.limit
        return f"{self.check} = {limit!r}"


def _outside(path: str, folder: str) -> str | None:
    if "\x00" in path:
        return "must not hold a NUL character"
    if not path.startswith("/"):
        return f"must be an absolute path under {folder}"
    if ".." in path.split("/"):
        return f"must not contain '..' (it must stay under {folder})"
    normal = posixpath.normpath(path)
    if normal != folder and not normal.startswith(folder.rstrip("/") + "/"):
        return f"must be under {folder}"
    return None


def _constraint(entry: Any, where: str) -> Constraint:
    entry = _table(entry, where)
    known_keys(entry, CONSTRAINT_KEYS, where)
    for key in ("tool", "argument"):
        if not isinstance(entry.get(key), str) or not entry[key]:
            raise ValueError(f"{where} {key!r} is required (a string)")
    (rule,) = _rules([entry["tool"]], where, "tool")
    checks = [key for key in CHECKS if key in entry]
    if len(checks) != 1:
        raise ValueError(f"{where} needs exactly one of {', '.join(CHECKS)} (it has {', '.join(checks) or 'none'})")
    check = checks[0]
    limit = entry[check]
    if check == "under":
        if not isinstance(limit, str) or not limit.startswith("/") or ".." in limit.split("/"):
            raise ValueError(f"{where} 'under' must be an absolute folder without '..', not {limit!r}")
        limit = posixpath.normpath(limit)
    elif check == "pattern":
        if not isinstance(limit, str):
            raise ValueError(f"{where} 'pattern' must be a string (a regular expression), not {_kind(limit)}")
        try:
            limit = re.compile(limit)
        except re.error as exc:
            raise ValueError(f"{where} 'pattern' is not a regular expression: {exc}") from None
    elif check == "one_of":
        if not isinstance(limit, list) or not limit:
            raise ValueError(f"{where} 'one_of' must be a list of the allowed values, not {_kind(limit)}")
    elif type(limit) is not int or limit < 0:
        raise ValueError(f"{where} 'max_length' must be a whole number of 0 or more, not {limit!r}")
    return Constraint(rule, entry["argument"], check, limit)


class Policy:
    """The gateway's policy, read by :func:`load_policy`: :meth:`guards` for the server,
    :meth:`search_for` for whether a caller sees the search tools alone."""

    def __init__(
        self,
        default: Section,
        groups: dict[str, Section],
        scopes: dict[str, Section],
        users: dict[str, Section],
        constraints: Sequence[Constraint] = (),
        *,
        separator: str = ".",
        groups_claim: str = "groups",
        search: bool = False,
        redis_url: str | None = None,
        audit: Guard | None = None,
    ) -> None:
        self.default = default
        self.groups = groups
        self.scopes = scopes
        self.users = users
        self.constraints = tuple(constraints)
        self.separator = separator
        self.groups_claim = groups_claim
        self.search = search
        self.redis_url = redis_url
        self.audit = audit
        self._grants: dict[tuple[Any, ...], Grant] = {}

    def grant(self, identity: Identity | None) -> Grant:
        """The merged sections of the caller ``identity`` (``None``: anonymous)."""
        key = _identity_key(identity, self.groups_claim)
        grant = self._grants.get(key)
        if grant is None:
            if len(self._grants) >= REMEMBERED:
                self._grants.clear()
            grant = self._grants[key] = self._merge(key)
        return grant

    def _merge(self, key: tuple[Any, ...]) -> Grant:
        name, subject, email, groups, scopes = key
        shared = [self.groups[group] for group in groups if group in self.groups]
        shared += [self.scopes[scope] for scope in sorted(scopes) if scope in self.scopes]
        own = self.users.get(subject) if subject is not None else None
        if own is None and email is not None:
            own = self.users.get(email)
        return Grant(name, self.default, shared, own, self.separator, self.search)

    def search_for(self, identity: Identity | None) -> bool:
        """Whether the caller ``identity`` gets the search tools instead of every tool: pass
        it to :meth:`Server.expose_search(only_for=) <toolwire.Server.expose_search>` when
        :attr:`offers_search`."""
        return self.grant(identity).search

    @property
    def offers_search(self) -> bool:
        """Whether any caller may get the search tools (``[gateway].search``, or a section's)."""
        return self.search or any(section.search for section in self._sections())

    def constraint_problem(self, name: str, arguments: Mapping[str, Any] | None) -> str | None:
        """Why ``arguments`` of the namespaced tool ``name`` break a constraint, if they do."""
        if not self.constraints:
            return None
        upstream, sep, tool = name.partition(self.separator)
        if not sep:
            upstream, tool = "", name
        for constraint in self.constraints:
            if constraint.argument not in (arguments or {}) or not constraint.rule.matches(
                upstream, tool, lookalikes=True
            ):
                continue
            problem = constraint.problem(arguments[constraint.argument])  # type: ignore[index]
            if problem is not None:
                return (
                    f"{name}: the argument {constraint.argument!r} {problem} (the gateway's rule"
                    f" {constraint.said()} for {constraint.rule.text})"
                )
        return None

    def guards(self) -> list[Guard]:
        """The guards a server takes to apply this policy: the audit (when configured), the
        policy's check (lists filtered, calls refused), the limits, the approval."""
        from .approval import Approval
        from .limits import CallerLimits

        found: list[Guard] = [] if self.audit is None else [self.audit]
        found.append(PolicyCheck(self))
        if self._sets("rate") or self._sets("concurrency"):
            found.append(CallerLimits(self, self.redis_url))
        if self._sets_rules("ask"):
            found.append(Approval())
        return found

    def _sections(self) -> list[Section]:
        return [self.default, *self.groups.values(), *self.scopes.values(), *self.users.values()]

    def _sets(self, key: str) -> bool:
        return any(getattr(section, key) is not None for section in self._sections())

    def _sets_rules(self, kind: str) -> bool:
        return any(getattr(section, kind) for section in self._sections())


_ANONYMOUS: tuple[Any, ...] = ("anonymous", None, None, (), frozenset())


def _identity_key(identity: Identity | None, groups_claim: str) -> tuple[Any, ...]:
    if identity is None:
        return _ANONYMOUS
    claims = identity.claims
    email = claims.get("email")
    groups = claims.get(groups_claim)
    if isinstance(groups, str):
        groups = groups.split()
    listed = tuple(group for group in groups if isinstance(group, str)) if isinstance(groups, list) else ()
    return (identity.name, identity.subject, email if isinstance(email, str) else None, listed, identity.scopes)


@dataclass(slots=True)
class Target:
    """The tool a call runs: itself, or the one ``call_tool`` of the search transform names
    (not frozen: made once a call, and a frozen dataclass costs three times as much to make)."""

    name: str
    tool: Tool | None
    arguments: Mapping[str, Any]


@lists_too
class PolicyCheck:
    """The guard hiding from ``tools/list`` what a caller may not call, and refusing their
    calls of it (and calls breaking a constraint) with a tool error saying so. Calls the
    policy asks about are let through, marked, to :class:`~.approval.Approval`. On a server
    exposing the search transform, ``call_tool`` is judged by the tool it names, and what
    ``search_tools`` finds is what the caller may see."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    async def __call__(self, call: Call, next: Next) -> Result:
        method = call.method
        if method == "tools/call":
            grant = self.policy.grant(call.identity)
            target = _target(call)
            if target is None:  # search_tools
                return _found(await next(call), grant)
            name = target.name
            verdict = grant.verdict(name)
            if verdict.action in ("deny", "hidden"):
                return refusal(
                    f"{name} is not allowed for {grant.who} by the gateway's policy ({verdict.rule});"
                    " ask the gateway's administrator if you need it."
                )
            problem = self.policy.constraint_problem(name, target.arguments)
            if problem is not None:
                return refusal(f"{problem}. Call it again with a value the rule allows.")
            call.extra["gateway.verdict"] = verdict
            call.extra["gateway.grant"] = grant
            call.extra["gateway.target"] = target
            return await next(call)
        if method != "tools/list":
            return await next(call)
        page = await next(call)
        grant = self.policy.grant(call.identity)
        tools = page.get("tools")
        if not isinstance(tools, list):
            return page
        kept = [tool for tool in tools if isinstance(tool, dict) and _listed(grant, str(tool.get("name")), call)]
        if "cacheScope" in page and (self.policy.groups or self.policy.scopes or self.policy.users):
            return {**page, "tools": kept, "cacheScope": "private"}  # the page is this caller's
        return page if len(kept) == len(tools) else {**page, "tools": kept}


def _searching(call: Call) -> bool:
    """Whether the server ``call`` came to exposes the search transform."""
    return getattr(getattr(call.session, "server", None), "tool_search", None) is not None


def _listed(grant: Grant, name: str, call: Call) -> bool:
    return grant.sees(name) or (name in (SEARCH_TOOL, CALL_TOOL) and _searching(call))


def _target(call: Call) -> Target | None:
    """What ``call`` runs (``None`` for the search transform's ``search_tools``)."""
    name = call.name or ""
    arguments = call.arguments or {}
    if name not in (SEARCH_TOOL, CALL_TOOL) or not _searching(call):
        return Target(name, call.tool, arguments)
    if name == SEARCH_TOOL:
        return None
    inner, given = arguments.get("name"), arguments.get("arguments")
    inner = inner if isinstance(inner, str) else ""
    server: Any = call.session.server  # type: ignore[attr-defined]
    return Target(inner, server.registry.by_key.get(inner), given if isinstance(given, dict) else {})


def _found(result: Result, grant: Grant) -> Result:
    """What ``search_tools`` found, without the tools ``grant`` does not show."""
    structured = result.get("structuredContent")
    found = structured.get("tools") if isinstance(structured, dict) else None
    if not isinstance(found, list):
        return result
    kept = [tool for tool in found if isinstance(tool, dict) and grant.sees(str(tool.get("name")))]
    if len(kept) == len(found):
        return result
    return {**result, "content": [{"type": "text", "text": describe_found(kept)}], "structuredContent": {"tools": kept}}


def load_policy(
    policy_table: dict[str, Any] | None,
    audit_table: dict[str, Any] | None = None,
    *,
    separator: str = ".",
    redis_url: str | None = None,
    groups_claim: str = "groups",
    search: bool = False,
    base: str | None = None,
) -> Policy:
    """The policy of gateway.toml's ``[policy]`` table (``None``: none, everyone may call
    everything) and ``[audit]`` table. ``separator``: between upstream and tool;
    ``redis_url``: where limits are shared by replicas; ``groups_claim``: the claim holding a
    caller's groups; ``search``: ``[gateway].search``; ``base``: the folder a relative audit
    file is in. ``ValueError`` of one line naming the table and key that cannot be read."""
    from .audit import load_audit

    audit = load_audit(audit_table, separator=separator, base=base) if audit_table is not None else None
    if policy_table is None:
        everything = Section("[policy.default]", allow=(Rule.parse("*/*"),))
        return Policy(everything, {}, {}, {}, separator=separator, search=search, redis_url=redis_url, audit=audit)
    table = _table(policy_table, "[policy]")
    known_keys(table, POLICY_KEYS, "[policy]")
    default = Section.read(table.get("default", {}), "[policy.default]")
    named = {
        kind: {
            str(name): Section.read(section, f"[policy.{kind}.{_quoted(name)}]")
            for name, section in _table(table.get(kind, {}), f"[policy.{kind}]").items()
        }
        for kind in ("groups", "scopes", "users")
    }
    entries = table.get("constraints", [])
    if not isinstance(entries, list):
        raise ValueError("[[policy.constraints]] must be an array of tables ([[policy.constraints]] entries)")
    constraints = [_constraint(entry, f"[[policy.constraints]] #{number}") for number, entry in enumerate(entries, 1)]
    return Policy(
        default, named["groups"], named["scopes"], named["users"], constraints,
        separator=separator, groups_claim=groups_claim, search=search, redis_url=redis_url, audit=audit,
    )  # fmt: skip


def _quoted(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else f'"{name}"'
