"""Which build of toolwire is installed: which of its packages the compiled build compiled
with mypyc (``setup.py``, whose ``COMPILED`` names the same packages) run as extension
modules here. ``toolwire --version`` says it."""

from __future__ import annotations

import importlib
import importlib.machinery

#: The packages the compiled build compiles, whole.
COMPILED = ("protocol",)


def compiled_packages() -> list[str]:
    """The packages of :data:`COMPILED` that are extension modules in this installation
    (empty for the pure-Python package); imports them."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    found = []
    for package in COMPILED:
        module = importlib.import_module(f"{__package__}.{package}")
        if (module.__file__ or "").endswith(suffixes):
            found.append(package)
    return found


def build_name() -> str:
    """``compiled: protocol`` (the packages compiled) or ``pure Python``."""
    compiled = compiled_packages()
    return f"compiled: {', '.join(compiled)}" if compiled else "pure Python"
