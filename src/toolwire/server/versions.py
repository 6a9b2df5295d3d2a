"""Several versions of one tool: one listed, any called.

``@server.tool(version="2")`` registers a version of a tool; the tools of one name all carry
a version. ``tools/list`` shows one of them, the *exposed* one: the newest (versions compare
as dotted numbers where they are numbers, ``"1.10"`` after ``"1.9"``, else as text) unless
:meth:`ToolVersions.expose` picked another. Its definition says which versions exist, in
``_meta``: ``io.toolwire/version`` (this one) and ``io.toolwire/versions`` (all, oldest
first). A client calls another version by naming it in the call's ``_meta`` under
``io.toolwire/version`` (FastMCP also keeps version choices in ``_meta``; the name stays the
tool's own, so hosts and approvals see one tool); a version that does not exist is ``-32602``.

The catalog holds the exposed version under the tool's name (so lists, scopes and
visibility treat the versions as one tool); this module keeps the others. Servers with no
versioned tool route ``tools/call`` straight to :func:`~.calls.call_tool`; the first version
registered routes it through :func:`call_tool_version` first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..protocol.errors import INVALID_PARAMS, ProtocolError

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..protocol.incoming import Request
    from ..tools.tool import Tool
    from .session import ServerSession

#: The call's ``_meta`` key naming the version wanted, and the list's key naming them all.
VERSION_META = "io.toolwire/version"
VERSIONS_META = "io.toolwire/versions"

_PART = re.compile(r"\d+|\D+")


def version_order(version: str) -> tuple[tuple[int, int | str], ...]:
    """A key ordering versions: numeric parts as numbers, ahead of text at the same place."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in _PART.findall(version))


class ToolVersions:
    """The versions of each versioned tool of ``registry``, and which one is exposed."""

    def __init__(self, registry: Catalog[Tool]) -> None:
        self._registry = registry
        self._versions: dict[str, dict[str, Tool]] = {}
        self._chosen: dict[str, str] = {}

    def __bool__(self) -> bool:
        return bool(self._versions)

    def add(self, tool: Tool, add: Callable[[str, Tool], Any]) -> None:
        """Register ``tool`` (which has a version) through ``add(name, tool)`` when it is the
        first of its name, else beside the others (exposed if it is now the newest).
        ``ValueError`` for a version taken, or a name an unversioned tool holds."""
        name, version = tool.name, tool.version
        assert version is not None
        versions = self._versions.get(name)
        if versions is None:
            if name in self._registry:
                raise ValueError(f"a tool {name!r} without a version is registered: remove it first")
            self._versions[name] = {version: tool}
            self._describe(name)
            add(name, tool)
            return
        if version in versions:
            raise ValueError(f"tool {name!r} has a version {version!r} already")
        versions[version] = tool
        self._expose(name)

    def expose(self, name: str, version: str | None) -> None:
        """List ``version`` of tool ``name`` (``None``: the newest again). ``KeyError`` for a
        tool or version that does not exist."""
        versions = self._versions[name]
        if version is not None:
            if version not in versions:
                raise KeyError(f"tool {name!r} has no version {version!r}")
            self._chosen[name] = version
        else:
            self._chosen.pop(name, None)
        self._expose(name)

    def get(self, name: str, version: str) -> Tool | None:
        """Version ``version`` of tool ``name``, or ``None``."""
        versions = self._versions.get(name)
        return versions.get(version) if versions is not None else None

    def all(self, name: str) -> list[Tool]:
        """Every version of ``name``, oldest first (``[]`` for a tool without versions)."""
        versions = self._versions.get(name, {})
        return [versions[key] for key in sorted(versions, key=version_order)]

    def forget(self, name: str) -> None:
        """The tool ``name`` was removed: its versions with it."""
        self._versions.pop(name, None)
        self._chosen.pop(name, None)

    def _expose(self, name: str) -> None:
        versions = self._versions[name]
        newest = max(versions, key=version_order)
        exposed = versions[self._chosen.get(name, newest)]
        self._describe(name)
        current = self._registry.by_key.get(name)
        if current is not None:
            exposed.enabled = current.enabled
        self._registry.replace(name, exposed)

    def _describe(self, name: str) -> None:
        """Each version's definition names it; the exposed one's names them all."""
        ordered = sorted(self._versions[name], key=version_order)
        for version, tool in self._versions[name].items():
            meta = {**tool.definition.get("_meta", {}), VERSION_META: version, VERSIONS_META: ordered}
            tool.definition = {**tool.definition, "_meta": meta}


def call_tool_version(
    session: ServerSession, request: Request, inner: Callable[[ServerSession, Request], None]
) -> None:
    """A ``tools/call`` that may name a version in its ``_meta``: that version is the one
    called (``-32602`` for one the tool lacks, or the caller may not use: the check of
    :meth:`~.visibility.Visibility.allows`); then ``inner(session, request)`` answers."""
    meta = request.params.get("_meta")
    wanted = meta.get(VERSION_META) if type(meta) is dict else None
    if wanted is not None:
        name = request.params.get("name")
        if type(name) is str and session.server.registry.get(name) is None:
            return inner(session, request)  # unknown, or disabled: answered as such
        found = session.server.tool_versions.get(name, wanted) if type(name) is str and type(wanted) is str else None
        if found is not None and not session.server.visibility.allows(session, request, "tools", found.name, found):
            found = None  # a version the caller may not use (its scopes, its rules) is none of theirs
        if found is None:
            error = ProtocolError(INVALID_PARAMS, f"Invalid params: tool {name!r} has no version {wanted!r}")
            return session.fail(request, error)
        request.target = found
    return inner(session, request)
