"""Who is calling: the identity a verified access token stands for, and scope checks.

Tools read it from their context (``ctx.identity``); guards from ``call.identity``. It never
holds the token itself, so it can be logged, audited and shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any


class Identity:
    """The caller behind a verified token (read-only).

    ``subject``: the resource owner (the token's ``sub``), ``client_id``: the OAuth client
    acting for them, ``scopes``: what the token grants (with what those imply, see
    :func:`expand_scopes`), ``claims``: every claim of the token (or of its introspection),
    ``expires_at``: when the token ends (seconds since the epoch), if it says.
    """

    __slots__ = ("_claims", "_client_id", "_expires_at", "_name", "_scopes", "_subject")

    def __init__(
        self,
        subject: str | None,
        client_id: str | None = None,
        scopes: frozenset[str] = frozenset(),
        claims: Mapping[str, Any] | None = None,
        expires_at: float | None = None,
    ) -> None:
        self._subject = subject
        self._client_id = client_id
        self._scopes = scopes if type(scopes) is frozenset else frozenset(scopes)
        self._claims = MappingProxyType(claims if isinstance(claims, dict) else dict(claims or {}))
        self._expires_at = expires_at
        self._name = subject or (f"client:{client_id}" if client_id else "anonymous")

    @property
    def subject(self) -> str | None:
        return self._subject

    @property
    def client_id(self) -> str | None:
        return self._client_id

    @property
    def scopes(self) -> frozenset[str]:
        return self._scopes

    @property
    def claims(self) -> Mapping[str, Any]:
        return self._claims

    @property
    def expires_at(self) -> float | None:
        return self._expires_at

    @property
    def name(self) -> str:
        """What names the caller in records and keys: the subject, else the client."""
        return self._name

    def allows(self, required: Iterable[str]) -> bool:
        """Whether every scope in ``required`` was granted."""
        return self._scopes.issuperset(required)

    def missing(self, required: Iterable[str]) -> list[str]:
        """The scopes of ``required`` not granted, in the order given."""
        return [scope for scope in required if scope not in self._scopes]

    def with_scopes(self, scopes: frozenset[str]) -> Identity:
        """The same caller with other scopes."""
        return Identity(self._subject, self._client_id, scopes, self._claims, self._expires_at)

    def to_json(self) -> dict[str, Any]:
        """What :meth:`from_json` makes the same identity of again (its claims as they came,
        JSON from the token), to carry the caller to another process (a task's worker)."""
        return {
            "subject": self._subject,
            "client_id": self._client_id,
            "scopes": sorted(self._scopes),
            "claims": dict(self._claims),
            "expires_at": self._expires_at,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Identity:
        """An identity from :meth:`to_json`'s output; ``KeyError``/``TypeError`` if it is not one."""
        return cls(data["subject"], data["client_id"], frozenset(data["scopes"]), data["claims"], data["expires_at"])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Identity):
            return NotImplemented
        return (self._subject, self._client_id, self._scopes, self._expires_at) == (
            other._subject,
            other._client_id,
            other._scopes,
            other._expires_at,
        ) and self._claims == other._claims

    def __hash__(self) -> int:
        return hash((self._subject, self._client_id, self._scopes))

    def __repr__(self) -> str:
        return f"Identity(subject={self._subject!r}, client_id={self._client_id!r}, scopes={sorted(self._scopes)!r})"


def parse_scopes(value: Any) -> frozenset[str]:
    """The scopes of a ``scope`` claim (space-separated) or ``scp`` claim (a list or a string)."""
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list | tuple):
        return frozenset(item for item in value if isinstance(item, str) and item)
    return frozenset()


def expand_scopes(granted: frozenset[str], hierarchy: Mapping[str, Iterable[str]] | None) -> frozenset[str]:
    """``granted`` with every scope they imply: ``hierarchy`` maps a broader scope to the
    narrower ones it includes (``{"files": ["files:read", "files:write"]}``), transitively."""
    if not hierarchy:
        return granted
    found = set(granted)
    pending = list(granted)
    while pending:
        for narrower in hierarchy.get(pending.pop(), ()):
            if narrower not in found:
                found.add(narrower)
                pending.append(narrower)
    return frozenset(found)


#: What an item without scopes requires: one set for all (a server may have thousands of items).
_NO_SCOPES: frozenset[str] = frozenset()


def scope_set(owner: str, scopes: Iterable[str] | None) -> frozenset[str]:
    """The scopes a tool, resource or prompt (``owner``) requires, as a set; ``TypeError`` for
    a lone string (``scopes="a b"``: a list was meant)."""
    if scopes is None:
        return _NO_SCOPES
    if isinstance(scopes, str):
        raise TypeError(f"{owner!r}: scopes= takes a list of scope names, not a string")
    return frozenset(scopes)
