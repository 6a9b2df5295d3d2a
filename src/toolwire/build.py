"""Which build of toolwire is installed: whether the modules the compiled build compiles with
mypyc (``setup.py`` reads :data:`COMPILED` from this file) run as extension modules here.
``toolwire --version`` says it."""

from __future__ import annotations

import importlib
import importlib.machinery

#: What the compiled build compiles: the synchronous hot path of a call (a package: all of its
#: modules): the protocol core, the dispatch table, validation, results, the HTTP parser's
#: heads. No coroutine: mypyc compiles some of what they do wrongly (see docs/performance.md,
#: "The compiled build"); the rest stays Python.
COMPILED = (
    "protocol",
    "server.dispatch",
    "server.subscriptions",
    "server.request_state",
    "tools.validation",
    "tools.results",
    "tools.content",
    "transports.http.wire.heads",
    "transports.http.wire.settings",
)


def compiled_modules() -> list[str]:
    """The entries of :data:`COMPILED` that are extension modules in this installation (empty
    for the pure-Python package); imports them."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    found = []
    for name in COMPILED:
        module = importlib.import_module(f"{__package__}.{name}")
        if (module.__file__ or "").endswith(suffixes):
            found.append(name)
    return found


def build_name() -> str:
    """``compiled: 9 of 9 hot modules`` (how many run compiled) or ``pure Python``."""
    compiled = compiled_modules()
    return f"compiled: {len(compiled)} of {len(COMPILED)} hot modules" if compiled else "pure Python"
