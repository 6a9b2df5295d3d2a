"""Guards: what runs around every request that runs application code (see :mod:`.seam`),
and the guards built on that one seam.

- :class:`Limits`: the ``timeout`` and ``max_concurrency`` options of servers and tools.

Imported lazily: a server without guards loads none of them (nor asyncio before it serves).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .seam import Call, Guard, Next, Result, refusal

if TYPE_CHECKING:
    from .limits import Limits

__all__ = ["Call", "Guard", "Limits", "Next", "Result", "refusal"]


def __getattr__(name: str) -> Any:
    if name == "Limits":
        from .limits import Limits

        return Limits
    raise AttributeError(name)
