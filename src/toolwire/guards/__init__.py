"""Guards: what runs around every request that runs application code (see :mod:`.seam`),
and the guards built on that one seam.

- :class:`Limits`: the ``timeout`` and ``max_concurrency`` options of servers and tools.
- :class:`Audit`: a record of every call, before it runs and after (:mod:`.audit`).
- :class:`SizeCaps`: limits on the size of arguments and results.
- :class:`RateLimit`: token buckets per caller and tool, in memory or in Redis (:mod:`.rate`).
- :func:`redact`: secrets taken out of what is logged or audited (:mod:`toolwire.redaction`,
  which toolwire's loggers share).
- :class:`Telemetry`: OpenTelemetry spans and durations (:mod:`.telemetry`).
- :class:`RequestLog`: a log line per request (``toolwire run -v``).

Imported lazily: a server without guards loads none of them (nor asyncio before it serves).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .seam import Call, Guard, Next, Refusal, Result, lists_too, refusal

if TYPE_CHECKING:
    from ..redaction import RedactingFilter, redact
    from .audit import Audit, FileSink
    from .limits import Limits
    from .rate import RateLimit
    from .requestlog import RequestLog
    from .sizes import SizeCaps
    from .telemetry import Telemetry

__all__ = [
    "Audit", "Call", "FileSink", "Guard", "Limits", "Next", "RateLimit", "RedactingFilter", "Refusal",
    "RequestLog", "Result", "SizeCaps", "Telemetry", "lists_too", "redact", "refusal",
]  # fmt: skip

_LAZY = {
    "Audit": "audit",
    "FileSink": "audit",
    "Limits": "limits",
    "RateLimit": "rate",
    "RedactingFilter": "toolwire.redaction",
    "RequestLog": "requestlog",
    "redact": "toolwire.redaction",
    "SizeCaps": "sizes",
    "Telemetry": "telemetry",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(module if "." in module else f"{__name__}.{module}"), name)
