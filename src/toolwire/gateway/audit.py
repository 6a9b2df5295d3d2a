"""The gateway's audit: gateway.toml's ``[audit]`` table, as toolwire's audit trail.

Every call gets the records of :class:`~toolwire.guards.Audit` (who, when, outcome, duration,
the arguments' shape or their values with secrets redacted), each start record also naming
the ``upstream`` and the upstream's ``tool`` (the namespaced name split at the separator).
``file = "audit.jsonl"``: JSON lines, each handed to the operating system before the call
goes on (a gateway killed right after a call, even with SIGKILL, keeps its records); without
``file``, records go to stderr (JSON lines). ``values = "shape"`` (the default) or
``"redacted"``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..guards.audit import Audit, FileSink, Sink, stderr_sink
from .policy import REMEMBERED, _kind, _table, known_keys

AUDIT_KEYS = ("file", "values")
VALUES = ("shape", "redacted")


class Namespaced:
    """A sink adding ``upstream`` and ``tool`` to start records before ``sink`` writes them
    (each name split once: at most :data:`~.policy.REMEMBERED` kept)."""

    def __init__(self, sink: Sink, separator: str) -> None:
        self.sink = sink
        self.separator = separator
        self._split: dict[str, tuple[str | None, str]] = {}

    def __call__(self, record: dict[str, Any]) -> Any:
        if record.get("phase") == "start" and record.get("method") == "tools/call":
            name = record.get("name")
            if isinstance(name, str):
                record["upstream"], record["tool"] = self._split.get(name) or self._split_anew(name)
        return self.sink(record)

    def _split_anew(self, name: str) -> tuple[str | None, str]:
        if len(self._split) >= REMEMBERED:
            self._split.clear()
        upstream, sep, tool = name.partition(self.separator)
        split = self._split[name] = (upstream, tool) if sep else (None, name)
        return split


def load_audit(table: dict[str, Any], *, separator: str = ".", base: str | Path | None = None) -> Audit:
    """The audit guard of the ``[audit]`` table; ``base``: the folder a relative ``file`` is
    in (default: the working folder). ``ValueError`` of one line naming the key that cannot
    be read; ``OSError`` if the file cannot be opened."""
    table = _table(table, "[audit]")
    known_keys(table, AUDIT_KEYS, "[audit]")
    values = table.get("values", "shape")
    if values not in VALUES:
        raise ValueError(f'[audit] \'values\' must be "shape" or "redacted", not {values!r}')
    file = table.get("file")
    sink: Sink = stderr_sink
    if file is not None:
        if not isinstance(file, str) or not file:
            raise ValueError(f"[audit] 'file' must be a path (a string), not {_kind(file)}")
        path = Path(file)
        sink = FileSink(path if path.is_absolute() or base is None else Path(base) / path)
    return Audit(Namespaced(sink, separator), values=values == "redacted")
