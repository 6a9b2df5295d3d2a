"""The search catalog: eleven servers of realistic tools (files, git, calendar, mail, chat,
tickets, weather, database, containers, maps, payments), each a file ``toolwire run`` serves,
for the ranking tests of tests/test_search.py and the host's deferred loading."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
#: ``NAME=PATH`` of each catalog server, as the host and ``toolwire search`` take them.
TARGETS = [f"{path.stem.removesuffix('_server')}={path}" for path in sorted(HERE.glob("*_server.py"))]
