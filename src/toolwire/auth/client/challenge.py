"""``WWW-Authenticate`` challenges (RFC 9110 §11.6.1): read the parameters of the ``Bearer``
(or ``DPoP``) one, as clients need them (``resource_metadata``, ``scope``, ``error``)."""

from __future__ import annotations

import re

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_PARAMETER = re.compile(rf'\s*({_TOKEN})\s*=\s*(?:"((?:[^"\\]|\\.)*)"|({_TOKEN}))\s*(,|$)')
_SCHEME = re.compile(rf"\s*({_TOKEN})(?:\s+|$)")


def read_challenge(
    header: str | None, schemes: tuple[str, ...] = ("bearer", "dpop")
) -> tuple[str, dict[str, str]] | None:
    """The scheme (in lower case) and parameters of the first challenge in ``header`` of one
    of ``schemes`` (names in lower case, quoted values unescaped), or ``None`` when it has
    none. Other schemes' challenges are skipped; what cannot be read ends the reading (what
    was read is kept)."""
    if not header:
        return None
    found: dict[str, str] | None = None
    scheme_found = ""
    current: dict[str, str] | None = None  # the parameters of the challenge being read
    position = 0
    while position < len(header):
        if header[position] in " ,":
            position += 1
            continue
        parameter = _PARAMETER.match(header, position)
        if parameter is not None and current is not None:
            name, quoted, plain = parameter.group(1), parameter.group(2), parameter.group(3)
            value = re.sub(r"\\(.)", r"\1", quoted) if quoted is not None else plain
            current.setdefault(name.lower(), value)
            position = parameter.end()
            continue
        scheme = _SCHEME.match(header, position)
        if scheme is None or found is not None:
            break  # unreadable, or the challenge ended where the next one begins
        current = {}
        if scheme.group(1).lower() in schemes:
            found, scheme_found = current, scheme.group(1).lower()
        position = scheme.end()
    return (scheme_found, found) if found is not None else None
