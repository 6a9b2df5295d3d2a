"""Noticing that a server's source changed: the modification times of the Python files in
its file's directory, polled (no dependency, the same on every system)."""

from __future__ import annotations

import os
from pathlib import Path


class Watch:
    """The ``.py`` files beside ``path`` (and ``path`` itself); :meth:`changed` says whether
    any was added, removed or modified since the last call."""

    def __init__(self, path: str) -> None:
        self.directory = Path(path).resolve().parent
        self._seen = self._snapshot()

    def _snapshot(self) -> dict[str, float]:
        found: dict[str, float] = {}
        try:
            entries = list(os.scandir(self.directory))
        except OSError:
            return found
        for entry in entries:
            if entry.name.endswith(".py") and entry.is_file():
                try:
                    found[entry.name] = entry.stat().st_mtime_ns
                except OSError:
                    continue
        return found

    def changed(self) -> bool:
        now = self._snapshot()
        if now == self._seen:
            return False
        self._seen = now
        return True
