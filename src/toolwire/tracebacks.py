"""Tracebacks that show a user's own code: the frames of the standard library's machinery
(importlib, contextlib, asyncio) and of toolwire itself left out, for errors raised by code
toolwire ran on the user's behalf (a server file being imported, a lifespan starting).

A frame is toolwire's by its module, never by a folder's name (a user's clone of toolwire is
a folder named ``toolwire``): a frame of this process is toolwire's when its module is
``toolwire`` or one of its modules (compiled ones included); a frame printed by a program, when
its file is in this installation (its real location), in another installation's package
(``site-packages/toolwire/...`` naming one of toolwire's modules), or is the name the compiled
build gives a compiled module's frames (the path it was built from, ``src/toolwire/...``,
naming a module the build compiles)."""

from __future__ import annotations

import os
import re
import sysconfig
import traceback
from types import FrameType

_LIBRARY = os.path.join(sysconfig.get_paths()["stdlib"], "")
_PACKAGE = os.path.join(os.path.dirname(os.path.realpath(__file__)), "")
#: The folders that hold installed packages (another installation's toolwire is in one).
_INSTALLED = frozenset({"site-packages", "dist-packages"})
#: The folder a compiled module's frames are named under (setup.py builds from it).
_BUILT_FROM = "src/toolwire/"
_FRAME = re.compile(r'^(\s*)File "([^"]*)", line \d+')


def own_frames(error: BaseException) -> str:
    """The frames of ``error``'s traceback that are neither toolwire's nor the standard
    library's, formatted as Python prints them (empty when there are none)."""
    own = [(frame, line) for frame, line in traceback.walk_tb(error.__traceback__) if not _not_users(frame)]
    return "".join(traceback.StackSummary.extract(own).format()).rstrip()


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
        if frame is not None and _toolwires_file(frame.group(2)):
            skipping = len(frame.group(1))
            continue
        kept.append(line)
    return "\n".join(kept)


def _not_users(frame: FrameType) -> bool:
    """Whether ``frame`` is toolwire's or the standard library's."""
    path = frame.f_code.co_filename
    if path.startswith(("<frozen", _LIBRARY)):
        return True
    module = frame.f_globals.get("__name__")  # a compiled module's frames have its globals too
    return isinstance(module, str) and (module == "toolwire" or module.startswith("toolwire."))


def _toolwires_file(path: str) -> bool:
    """Whether the file of a printed frame is one of toolwire's modules (or ``<frozen ...>``)."""
    if path.startswith("<frozen") or _compiled(path):
        return True
    if os.path.isabs(path) and os.path.realpath(path).startswith(_PACKAGE):
        return True
    folders = path.split(os.sep)
    if "toolwire" not in folders:
        return False
    package = len(folders) - 1 - folders[::-1].index("toolwire")
    installed = package > 0 and folders[package - 1] in _INSTALLED
    return installed and os.path.isfile(os.path.join(_PACKAGE, *folders[package + 1 :]))


def _compiled(path: str) -> bool:
    """Whether ``path`` is the name of a compiled module's frames: ``src/toolwire/`` and a
    module that :data:`toolwire.build.COMPILED` names (or one of a package it names)."""
    if not path.startswith(_BUILT_FROM) or not path.endswith(".py"):
        return False
    from .build import COMPILED

    module = path[len(_BUILT_FROM) : -len(".py")].replace("/", ".").removesuffix(".__init__")
    return any(module == name or module.startswith(name + ".") for name in COMPILED)
