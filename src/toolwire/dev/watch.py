"""Noticing that a server's source changed: the modification times of its Python files,
polled (no dependency, the same on every system): the ``.py`` files beside a server file,
or every ``.py`` file under a folder of tool files."""

from __future__ import annotations

import os
from pathlib import Path


class Watch:
    """The ``.py`` files beside ``path`` (and ``path`` itself), or under it at any depth
    when it is a folder; :meth:`changed` says whether any was added, removed or modified
    since the last call. Files that vanish while they are looked at are left out."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        resolved = Path(path).resolve()
        self.recursive = resolved.is_dir()
        self.directory = resolved if self.recursive else resolved.parent
        self._seen = self._snapshot()

    def _snapshot(self) -> dict[str, tuple[int, int]]:
        found: dict[str, tuple[int, int]] = {}
        folders = [self.directory]
        while folders:
            try:
                entries = list(os.scandir(folders.pop()))
            except OSError:
                continue
            for entry in entries:
                try:
                    if entry.name.endswith(".py") and entry.is_file():
                        stat = entry.stat()
                        found[entry.path] = (stat.st_mtime_ns, stat.st_size)
                    elif self.recursive and entry.is_dir() and entry.name != "__pycache__":
                        folders.append(Path(entry.path))
                except OSError:
                    continue
        return found

    def changed(self) -> bool:
        now = self._snapshot()
        if now == self._seen:
            return False
        self._seen = now
        return True
