"""One namespace for the tools of many servers, with names every model API accepts.

Model APIs want tool names matching ``^[a-zA-Z0-9_-]{1,64}$``; MCP allows more (dots,
slashes, 128 characters) and two servers may both have a ``search``. :func:`expose` gives
each tool a name:

- its own name, with every other character replaced by ``_``, when no other tool gets the
  same one;
- otherwise ``SERVER__NAME`` for every tool that would share it (no server's tool keeps the
  plain name by connecting first);
- a name longer than 64 characters is cut, with 8 hex digits of a hash of the whole name
  appended, so that cut names stay distinct.

The mapping back is exact: each exposed name belongs to one (server, tool name) pair.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable

INVALID = re.compile(r"[^a-zA-Z0-9_-]")
MAX_NAME = 64


def valid_name(name: str) -> str:
    """``name`` made acceptable to every model API (see the module's description)."""
    clean = INVALID.sub("_", name) or "tool"
    if len(clean) <= MAX_NAME:
        return clean
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{clean[: MAX_NAME - 9]}_{digest}"


def expose(tools: Iterable[tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """Exposed name -> (server, tool name) for each ``(server, tool name)`` pair, in order."""
    pairs = list(tools)
    plain = [valid_name(name) for _, name in pairs]
    counts = Counter(plain)
    exposed: dict[str, tuple[str, str]] = {}
    for (server, name), simple in zip(pairs, plain, strict=True):
        chosen = simple if counts[simple] == 1 else valid_name(f"{server}__{name}")
        if chosen in exposed:  # still shared (the same server, names that differ only in invalid characters)
            chosen = valid_name(f"{chosen}_{hashlib.sha256(f'{server}/{name}'.encode()).hexdigest()[:8]}")
        exposed[chosen] = (server, name)
    return exposed
