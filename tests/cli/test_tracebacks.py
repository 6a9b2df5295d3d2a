"""What the CLI shows of a server's traceback: the user's frames, without toolwire's own,
whichever build of toolwire printed it, and wherever the user's files are (a clone called
``toolwire``, a folder with digits, a random temporary folder)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import toolwire
from tests.support.clirun import finish, start
from toolwire.tracebacks import own_lines

PACKAGE = toolwire.__file__.rsplit("__init__.py", 1)[0]

RAISES_AT_IMPORT = """\
def load_config():
    raise ValueError("bad config")


load_config()
"""
LIFESPAN_FAILS = """\
from toolwire import Server


def connect():
    raise RuntimeError("no database to connect to")


async def lifespan(server):
    connect()
    yield {}


server = Server("failing", lifespan=lifespan)
"""
TOOL_RAISES = """\
from toolwire import Server

server = Server("divide")


def ten_divided_by(x: int) -> int:
    return 10 // x


@server.tool
def divide(x: int) -> int:
    \"\"\"Ten divided by x.\"\"\"
    return ten_divided_by(x)
"""


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
            '  File "/home/me/toolwire/tools/threads.py", line 3, in work',  # a clone called toolwire
            "    helper()",
            '  File "src/toolwire/app.py", line 7, in helper',  # a user's, relative: no module toolwire compiles
            "    divide()",
            '  File "/home/me/server.py", line 24, in divide',
            "    return 10 // x",
            "ZeroDivisionError: integer division or modulo by zero",
        ]
    )
    assert own_lines(printed).splitlines() == [
        "tool 'divide' raised",
        "Traceback (most recent call last):",
        '  File "/home/me/toolwire/tools/threads.py", line 3, in work',
        "    helper()",
        '  File "src/toolwire/app.py", line 7, in helper',
        "    divide()",
        '  File "/home/me/server.py", line 24, in divide',
        "    return 10 // x",
        "ZeroDivisionError: integer division or modulo by zero",
    ]


@pytest.fixture(params=["a-clone-called-toolwire", "digits", "mktemp"])
def folder(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A folder where a user's files live: in a clone called ``toolwire``, under names with
    digits, or in a folder of ``mktemp -d`` (a random name: nothing for the redaction to hide)."""
    if request.param == "a-clone-called-toolwire":
        path = tmp_path / "toolwire" / "y"
    elif request.param == "digits":
        path = tmp_path / "ci1" / "app2024"
    else:
        made = subprocess.run(["mktemp", "-d", "-p", str(tmp_path)], capture_output=True, text=True, check=True)
        path = Path(made.stdout.strip()) / "servers" / "our_examples"
    path.mkdir(parents=True)
    return path


def test_a_users_frames_are_shown_wherever_the_files_live(folder: Path) -> None:
    for name, source in [
        ("raiseimport.py", RAISES_AT_IMPORT),
        ("lifespan.py", LIFESPAN_FAILS),
        ("divide.py", TOOL_RAISES),
    ]:
        (folder / name).write_text(source)
    imported, lifespan, called = [
        finish(process)
        for process in [
            start("run", "raiseimport.py", cwd=folder),
            start("run", "lifespan.py", cwd=folder),
            start("call", "divide.py", "divide", "x=0", cwd=folder),
        ]
    ]
    assert imported.returncode == 1 and imported.stderr.splitlines() == [
        "toolwire: could not import raiseimport.py: ValueError: bad config",
        f'  File "{folder / "raiseimport.py"}", line 5, in <module>',
        "    load_config()",
        f'  File "{folder / "raiseimport.py"}", line 2, in load_config',
        '    raise ValueError("bad config")',
    ]
    assert lifespan.returncode == 1 and lifespan.stderr.splitlines() == [
        "toolwire: the server's lifespan failed to start: RuntimeError: no database to connect to",
        f'  File "{folder / "lifespan.py"}", line 9, in lifespan',
        "    connect()",
        f'  File "{folder / "lifespan.py"}", line 5, in connect',
        '    raise RuntimeError("no database to connect to")',
    ]
    # the server's log, redacted for secrets, shown with toolwire's frames left out
    assert called.returncode == 1
    shown = [line.strip() for line in called.stderr.splitlines() if line.strip().startswith("File ")]
    assert shown == [
        f'File "{folder / "divide.py"}", line 13, in divide',
        f'File "{folder / "divide.py"}", line 7, in ten_divided_by',
    ], called.stderr
