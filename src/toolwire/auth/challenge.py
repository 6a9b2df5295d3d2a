"""``WWW-Authenticate`` challenges (RFC 9110 §11.6.1): read the parameters of the ``Bearer``
one, as clients need them (``resource_metadata``, ``scope``, ``error``)."""

from __future__ import annotations

import re

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_PARAMETER = re.compile(rf'\s*({_TOKEN})\s*=\s*(?:"((?:[^"\\]|\\.)*)"|({_TOKEN}))\s*(,|$)')
_SCHEME = re.compile(rf"\s*({_TOKEN})(?:\s+|$)")


def bearer_parameters(header: str | None) -> dict[str, str] | None:
    """The parameters of the ``Bearer`` challenge in ``header`` (names in lower case, quoted
    values unescaped), or ``None`` when it has none. Other schemes' challenges in the same
    header are skipped; what cannot be read ends the reading (what was read is kept)."""
    if not header:
        return None
    found: dict[str, str] | None = None
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
            break  # unreadable, or the Bearer challenge ended where the next one begins
        current = {}
        if scheme.group(1).lower() == "bearer":
            found = current
        position = scheme.end()
    return found
