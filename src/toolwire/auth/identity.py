"""Who is calling: the identity a verified access token stands for, and scope checks.

Tools read it from their context (``ctx.identity``); guards from ``call.identity``. It never
holds the token itself, so it can be logged, audited and shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Identity:
    """The caller behind a verified token.

    ``subject``: the resource owner (the token's ``sub``), ``client_id``: the OAuth client
    acting for them, ``scopes``: what the token grants (with what those imply, see
    :func:`expand_scopes`), ``claims``: every claim of the token (or of its introspection),
    ``expires_at``: when the token ends (seconds since the epoch), if it says.
    """

    subject: str | None
    client_id: str | None = None
    scopes: frozenset[str] = frozenset()
    claims: Mapping[str, Any] = field(default_factory=dict)
    expires_at: float | None = None

    @property
    def name(self) -> str:
        """What names the caller in records and keys: the subject, else the client."""
        return self.subject or (f"client:{self.client_id}" if self.client_id else "anonymous")

    def allows(self, required: Iterable[str]) -> bool:
        """Whether every scope in ``required`` was granted."""
        return self.scopes.issuperset(required)

    def missing(self, required: Iterable[str]) -> list[str]:
        """The scopes of ``required`` not granted, in the order given."""
        return [scope for scope in required if scope not in self.scopes]


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


def scope_set(owner: str, scopes: Iterable[str] | None) -> frozenset[str]:
    """The scopes a tool, resource or prompt (``owner``) requires, as a set; ``TypeError`` for
    a lone string (``scopes="a b"``: a list was meant)."""
    if scopes is None:
        return frozenset()
    if isinstance(scopes, str):
        raise TypeError(f"{owner!r}: scopes= takes a list of scope names, not a string")
    return frozenset(scopes)
