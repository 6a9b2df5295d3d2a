"""Progress of a request: the callback that receives it and the tokens that route it."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

ProgressCallback = Callable[[float, float | None, str | None], Any]
_TOKENS = itertools.count(1)


def progress_token() -> str:
    """A progress token no other request of this process carries (``toolwire-<n>``)."""
    return f"toolwire-{next(_TOKENS)}"
