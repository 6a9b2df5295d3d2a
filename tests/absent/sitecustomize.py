"""Makes the top-level modules named in ``TOOLWIRE_TEST_ABSENT`` (comma-separated) impossible
to import, as if they were not installed: with this directory on ``PYTHONPATH``, a process
and its children see them absent (``import`` raises ``ModuleNotFoundError``)."""

from __future__ import annotations

import os
import sys
from typing import Any


class Absent:
    """A finder, first on ``sys.meta_path``, that finds the absent modules missing."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname.partition(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)


_names = frozenset(filter(None, os.environ.get("TOOLWIRE_TEST_ABSENT", "").split(",")))
if _names:
    sys.meta_path.insert(0, Absent(_names))
