"""An MCP Apps view: the ``ui://`` resource a tool's results are shown in, and what the host
needs to know to run it (its Content Security Policy, the browser permissions it asks for).

:class:`App` describes one view and, for the tool it is given to, who may use that tool.
Its HTML is a string (``html=``) or a file read on each ``resources/read`` (``path=``), so a
view edited on disk is served fresh. Everything is checked when the :class:`App` is made:
``ValueError`` says what is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

#: The MIME type of an MCP Apps view (HTML with the MCP Apps profile).
MCP_APP_MIME = "text/html;profile=mcp-app"

#: The browser permissions a view may ask for, as the extension names them.
PERMISSIONS = ("camera", "microphone", "geolocation", "clipboardWrite")

_AUDIENCES = ("model", "app")
#: An origin for a CSP source list: a scheme, then a host (``*.`` allowed), maybe a port and
#: path; nothing that could end the directive (spaces, ``;``, ``,``, quotes).
_ORIGIN = re.compile(r"[a-z][a-z0-9+.-]*://[^\s;,'\"]+")


@dataclass(frozen=True, slots=True)
class Csp:
    """The origins a view may reach beyond its own HTML (none by default): ``connect_domains``
    for fetch, XHR and WebSockets; ``resource_domains`` for scripts, styles, images, fonts and
    media (``https://*.example.com`` allowed); ``frame_domains`` for nested frames;
    ``base_uri_domains`` for ``<base>``. ``ValueError`` for an entry that is not an origin."""

    connect_domains: tuple[str, ...] = ()
    resource_domains: tuple[str, ...] = ()
    frame_domains: tuple[str, ...] = ()
    base_uri_domains: tuple[str, ...] = ()

    def __init__(
        self,
        connect_domains: Iterable[str] = (),
        resource_domains: Iterable[str] = (),
        frame_domains: Iterable[str] = (),
        base_uri_domains: Iterable[str] = (),
    ) -> None:
        for name, given in (
            ("connect_domains", connect_domains),
            ("resource_domains", resource_domains),
            ("frame_domains", frame_domains),
            ("base_uri_domains", base_uri_domains),
        ):
            object.__setattr__(self, name, _origins(name, given))

    def to_meta(self) -> dict[str, list[str]]:
        """The ``_meta.ui.csp`` object (only the lists that have origins)."""
        fields = {
            "connectDomains": self.connect_domains,
            "resourceDomains": self.resource_domains,
            "frameDomains": self.frame_domains,
            "baseUriDomains": self.base_uri_domains,
        }
        return {key: list(origins) for key, origins in fields.items() if origins}


@dataclass(frozen=True, slots=True)
class App:
    """A tool's interactive view, for ``@server.tool(app=...)`` (see docs/extensions.md).

    ``uri``: the view's ``ui://`` address; ``html`` (the page) or ``path`` (a file holding
    it, read on each request); ``name``, ``description``: how resource lists show it;
    ``csp``: a :class:`Csp`; ``permissions``: browser features it asks for (of
    :data:`PERMISSIONS`); ``domain``: a dedicated origin for it, in the host's format;
    ``prefers_border``: whether the host should draw a border and background around it.
    ``visibility``: who may use the tool it is given to (``("model", "app")`` when
    ``None``); :meth:`visible_to` gives the same view with another. ``ValueError`` for a
    wrong URI, both or neither of ``html`` and ``path``, a missing file, an unknown
    permission or audience."""

    uri: str
    html: str | None = None
    path: Path | None = None
    name: str | None = None
    description: str | None = None
    csp: Csp | None = None
    permissions: tuple[str, ...] = ()
    domain: str | None = None
    prefers_border: bool | None = None
    visibility: tuple[str, ...] | None = None

    def __init__(
        self,
        uri: str,
        *,
        html: str | None = None,
        path: str | Path | None = None,
        name: str | None = None,
        description: str | None = None,
        csp: Csp | None = None,
        permissions: Iterable[str] = (),
        domain: str | None = None,
        prefers_border: bool | None = None,
        visibility: Iterable[str] | None = None,
    ) -> None:
        if type(uri) is not str or not uri.startswith("ui://") or len(uri) == len("ui://"):
            raise ValueError(f"a view's URI starts with ui:// and names it (ui://weather/board.html), not {uri!r}")
        if (html is None) == (path is None):
            raise ValueError(f"view {uri}: give its HTML as html= or as path= (a file), one of them")
        if html is not None and type(html) is not str:
            raise ValueError(f"view {uri}: html= is the page as a str, not {type(html).__name__}")
        file = None if path is None else Path(path).resolve()
        if file is not None and not file.is_file():
            raise ValueError(f"view {uri}: no file at {file}")
        if csp is not None and not isinstance(csp, Csp):
            raise ValueError(f"view {uri}: csp= is a toolwire.apps.Csp, not {type(csp).__name__}")
        asked = tuple(_unique(permissions))
        unknown = [permission for permission in asked if permission not in PERMISSIONS]
        if unknown:
            raise ValueError(f"view {uri}: unknown permission {unknown[0]!r} (known: {', '.join(PERMISSIONS)})")
        if domain is not None and (type(domain) is not str or not domain or re.search(r"[\s;,'\"]", domain)):
            raise ValueError(f"view {uri}: domain= is a host name such as 'abc123.example-content.com', not {domain!r}")
        checked = {
            "uri": uri,
            "html": html,
            "path": file,
            "name": name,
            "description": description,
            "csp": csp,
            "permissions": asked,
            "domain": domain,
            "prefers_border": prefers_border,
            "visibility": None if visibility is None else _audiences(uri, visibility),
        }
        for key, value in checked.items():
            object.__setattr__(self, key, value)  # frozen: set once, here

    def visible_to(self, *audiences: str) -> App:
        """This view for a tool that only ``audiences`` may use: ``view.visible_to("app")``
        for a tool the view calls and the model never sees."""
        return replace(self, visibility=_audiences(self.uri, audiences))

    def read(self) -> str:
        """The view's HTML (from its file when it has one: ``OSError`` if it cannot be read)."""
        if self.path is not None:
            return self.path.read_text(encoding="utf-8")
        assert self.html is not None  # one of the two, checked when made
        return self.html

    def resource_meta(self) -> dict[str, Any]:
        """The view's ``_meta.ui``: CSP, permissions, domain, border (only what is set)."""
        ui: dict[str, Any] = {}
        csp = self.csp.to_meta() if self.csp is not None else {}
        if csp:
            ui["csp"] = csp
        if self.permissions:
            ui["permissions"] = {permission: {} for permission in self.permissions}
        if self.domain is not None:
            ui["domain"] = self.domain
        if self.prefers_border is not None:
            ui["prefersBorder"] = self.prefers_border
        return ui

    def tool_meta(self) -> dict[str, Any]:
        """The ``_meta.ui`` of a tool shown in this view: its ``resourceUri`` and, when
        set, its ``visibility``."""
        ui: dict[str, Any] = {"resourceUri": self.uri}
        if self.visibility is not None:
            ui["visibility"] = list(self.visibility)
        return ui

    def same_view(self, other: App) -> bool:
        """Whether ``other`` describes the same resource (it may differ in visibility only)."""
        return replace(other, visibility=self.visibility) == self


def _unique(items: Iterable[str]) -> list[str]:
    if isinstance(items, str):
        items = [items]
    return list(dict.fromkeys(items))


def _origins(name: str, given: Iterable[str]) -> tuple[str, ...]:
    origins = tuple(_unique(given))
    for origin in origins:
        if type(origin) is not str or not _ORIGIN.fullmatch(origin):
            raise ValueError(f"Csp {name}: {origin!r} is not an origin such as 'https://api.example.com'")
    return origins


def _audiences(uri: str, given: Iterable[str]) -> tuple[str, ...]:
    audiences = tuple(_unique(given))
    if not audiences or any(audience not in _AUDIENCES for audience in audiences):
        raise ValueError(f"view {uri}: visibility lists 'model' and/or 'app', not {list(audiences)!r}")
    return audiences
