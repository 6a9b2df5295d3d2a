"""What the CLI shows of a server's traceback: the user's frames, without toolwire's own,
whichever build of toolwire printed it."""

from __future__ import annotations

import toolwire
from toolwire.tracebacks import own_lines

PACKAGE = toolwire.__file__.rsplit("__init__.py", 1)[0]


def test_own_lines_leave_out_toolwires_frames_pure_installed_and_compiled() -> None:
    printed = "\n".join(
        [
            "tool 'divide' raised",
            "Traceback (most recent call last):",
            # compiled modules' frames are named by the path they were built from
            '  File "src/toolwire/server/session.py", line 385, in _finish',
            "    self._send_here(await work, request.id)",
            f'  File "{PACKAGE}server/calls.py", line 140, in run_tool',
            "    result = tool.result(await tool.invoke(arguments, context, session.loop))",
            '  File "/venv/lib/python3.11/site-packages/toolwire/tools/threads.py", line 138, in _work',
            "    done.append((future, call(), None))",
            '  File "/home/me/server.py", line 24, in divide',
            "    return 10 // x",
            "ZeroDivisionError: integer division or modulo by zero",
        ]
    )
    assert own_lines(printed).splitlines() == [
        "tool 'divide' raised",
        "Traceback (most recent call last):",
        '  File "/home/me/server.py", line 24, in divide',
        "    return 10 // x",
        "ZeroDivisionError: integer division or modulo by zero",
    ]
