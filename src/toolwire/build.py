"""Which build of toolwire is installed: whether the modules the compiled build compiles with
mypyc (``setup.py`` reads :data:`COMPILED` from this file) run as extension modules here.
``toolwire --version`` says it."""

from __future__ import annotations

import importlib
import importlib.machinery

#: What the compiled build compiles (a package: all of its modules): the hot path of a call.
#: The protocol core; the session, its dispatch table and the ``tools/call`` path; validation
#: and results; the stdio pipes; the HTTP server's connection, request and headers, its
#: checks, the ASGI application and its requests of each era; the guards' seam and the guards
#: that run on every call. Their code avoids what mypyc compiles wrongly
#: (tests/project/test_compiled_build.py checks it; docs/performance.md, "The compiled
#: build", says what and why).
COMPILED = (
    "protocol",
    "server.session",
    "server.stepping",
    "server.dispatch",
    "server.calls",
    "server.lists",
    "server.subscriptions",
    "server.request_state",
    "tools.validation",
    "tools.direct",
    "tools.results",
    "tools.content",
    "pipes",
    "transports.http.app",
    "transports.http.modern",
    "transports.http.legacy",
    "transports.http.checks",
    "transports.http.wire.connection",
    "transports.http.wire.request",
    "transports.http.wire.heads",
    "transports.http.wire.settings",
    "guards.seam",
    "guards.limits",
    "guards.rate",
    "guards.audit",
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
    """``compiled: 24 of 24 hot modules`` (how many run compiled) or ``pure Python``."""
    compiled = compiled_modules()
    return f"compiled: {len(compiled)} of {len(COMPILED)} hot modules" if compiled else "pure Python"
