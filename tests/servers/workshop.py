"""A server mounting another that has skills and task tools, for
tests/server/test_mount_extensions.py and tests/server/test_proxy_extensions.py.

``library`` serves the skill ``pdf-processing`` (examples/conformance_skills) and the task
tools ``bind`` (done at once) and ``hold`` (runs until ``release`` is called, or until
cancelled); ``server`` ("workshop") has its own skill ``git-workflow`` and mounts the
library as ``lib`` and the voting board of tests/servers/board.py (an MCP Apps view and the
extension ``com.example/votes``) as ``games``.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from board import make_board

from toolwire import Server

SKILLS = Path(__file__).resolve().parents[2] / "examples" / "conformance_skills"


def make_library() -> Server:
    library = Server("library")
    library.add_skill(SKILLS / "pdf-processing")
    released = asyncio.Event()

    @library.tool(task=True)
    async def bind(title: str) -> str:
        """Bind a book."""
        return f"bound {title}"

    @library.tool(task=True)
    async def hold() -> str:
        """Hold a book until it is released."""
        await released.wait()
        return "held, then released"

    @library.tool
    def release() -> str:
        """Release the held book."""
        released.set()
        return "released"

    return library


server = Server("workshop")
server.add_skill(SKILLS / "git-workflow")
server.mount(make_library(), "lib")
server.mount(make_board(), "games")
