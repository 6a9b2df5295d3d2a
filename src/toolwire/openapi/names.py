"""Tool names for operations: valid for MCP, unique in the document, stable.

A name is the ``operationId`` (else the method and the path, ``get /pets/{petId}`` ->
``get_pets_petId``) with every character outside ``A-Z a-z 0-9 _ - .`` replaced by ``_``
(runs of them by one). A name longer than 128 characters keeps its first 119 and ends with
``_`` and 8 hexadecimal digits of the SHA-256 of the whole text it was made from, so two
long names that share a beginning stay apart, and the same document gives the same names.
The second operation (in document order) whose name is taken gets ``_2``, the third ``_3``...
"""

from __future__ import annotations

import re

MAX_LENGTH = 128
#: Hexadecimal digits of the hash that ends a shortened name.
HASH_DIGITS = 8
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_.\-]+")


def base_name(operation_id: object, method: str, path: str) -> str:
    """The name an operation asks for, valid for MCP (maybe taken by another)."""
    text = operation_id if isinstance(operation_id, str) and _cleaned(operation_id) else f"{method.lower()} {path}"
    return shortened(_cleaned(text) or method.lower(), text)


def _cleaned(text: str) -> str:
    return _NOT_ALLOWED.sub("_", text).strip("_")


def shortened(name: str, source: str, room: int = MAX_LENGTH) -> str:
    """``name`` if it fits in ``room`` characters, else its beginning and a hash of ``source``."""
    if len(name) <= room:
        return name
    import hashlib  # only for long names (imported lazily: start-up time)

    digest = hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_DIGITS]
    return f"{name[: room - HASH_DIGITS - 1]}_{digest}"


class Names:
    """Hands out unique names in the order they are asked for."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def unique(self, name: str) -> str:
        """``name``, or ``name_2``, ``name_3``... (shortened to fit) when it is taken."""
        candidate, number = name, 1
        while candidate in self.taken:
            number += 1
            suffix = f"_{number}"
            candidate = shortened(name, name, MAX_LENGTH - len(suffix)) + suffix
        self.taken.add(candidate)
        return candidate
