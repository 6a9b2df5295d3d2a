"""The digests skills carry (SEP-2640): ``sha256:`` and the 64 lowercase hex digits of the
SHA-256 of a file's raw bytes."""

from __future__ import annotations

import hashlib
import re

DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def digest(data: bytes) -> str:
    """The digest of ``data``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()
