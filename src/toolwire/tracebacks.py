"""Tracebacks that show a user's own code: the frames of the standard library's machinery
(importlib, contextlib, asyncio) and of toolwire itself left out, for errors raised by code
toolwire ran on the user's behalf (a server file being imported, a lifespan starting)."""

from __future__ import annotations

import os
import sysconfig
import traceback

_LIBRARY = sysconfig.get_paths()["stdlib"]


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
