"""The board's ``mounted`` server (tests/servers/board.py) through a proxy that lists
``search_tools`` and ``call_tool``, for tests/server/test_hostile_visibility.py."""

from __future__ import annotations

import sys
from pathlib import Path

from toolwire.proxy import proxy

BOARD = str(Path(__file__).with_name("board.py"))

server = proxy([sys.executable, "-m", "toolwire", "run", f"{BOARD}:mounted"], name="board-proxy")
server.expose_search()
