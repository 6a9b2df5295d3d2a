"""Tracebacks that show a user's own code: the frames of the standard library's machinery
(importlib, contextlib, asyncio) and of toolwire itself left out, for errors raised by code
toolwire ran on the user's behalf (a server file being imported, a lifespan starting)."""

from __future__ import annotations

import os
import re
import sysconfig
import traceback

_LIBRARY = sysconfig.get_paths()["stdlib"]
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_INSTALLED = f"{os.sep}site-packages{os.sep}toolwire{os.sep}"
#: The file name of a compiled module's frames (the compiled build): the path it was built from.
_COMPILED = "src/toolwire/"
_FRAME = re.compile(r'^(\s*)File "([^"]*)", line \d+')


def own_frames(error: BaseException) -> str:
    """The frames of ``error``'s traceback that are neither toolwire's nor the standard
    library's, formatted as Python prints them (empty when there are none)."""
    own = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not frame.filename.startswith(("<frozen", _LIBRARY))
        and "importlib" not in frame.filename
        and f"{os.sep}toolwire{os.sep}" not in frame.filename
    ]
    return "".join(traceback.format_list(own)).rstrip()


def own_lines(text: str) -> str:
    """``text`` (a program's output) with the frames of its tracebacks that are toolwire's
    own (or ``<frozen ...>``) left out: each ``File "...", line N`` line and the lines
    indented under it. Other text is kept as it is."""
    kept: list[str] = []
    skipping: int | None = None  # the indentation of the frame being left out
    for line in text.splitlines():
        if skipping is not None:
            if len(line) - len(line.lstrip()) > skipping:
                continue
            skipping = None
        frame = _FRAME.match(line)
        if frame is not None:
            path = frame.group(2)
            if path.startswith((_PACKAGE, "<frozen", _COMPILED)) or _INSTALLED in path:
                skipping = len(frame.group(1))
                continue
        kept.append(line)
    return "\n".join(kept)
