"""MCP Apps as an extension of the server (:class:`~toolwire.server.extensions.Extension`).

A server offers it as soon as one of its tools is given a view (``@server.tool(app=...)``).
What it adds:

=======================  ==================================================================
capabilities             ``io.modelcontextprotocol/ui`` with the view MIME types it serves
                         (``text/html;profile=mcp-app``), in every protocol version
resources                each view once, at its ``ui://`` URI, of that MIME type, with its
                         ``_meta.ui`` (CSP, permissions, domain, border) in ``resources/list``
                         and on the contents ``resources/read`` returns
tool definitions         ``_meta.ui.resourceUri`` (and ``visibility`` when the tool's view
                         says), plus the flat ``_meta["ui/resourceUri"]`` older hosts read
=======================  ==================================================================

Mounted (``parent.mount(server, prefix)``), the views come through as the parent's
resources under the prefix, its tools' definitions naming them so, and the parent offers
the extension too. The extension has no methods of its own: a view talks to its host,
which calls the server with the ordinary ``tools/call`` and ``resources/read``. Tools keep answering every client
alike (a client that does not render views reads the tool's text); a tool that wants to
know whether its caller renders views asks :func:`renders_apps`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from ..resources.resource import resource_contents
from ..server.extensions import Extension
from ..server.prefix import prefixed_uri
from .view import MCP_APP_MIME, App

if TYPE_CHECKING:
    from ..server.context import Context
    from ..server.server import Server
    from ..tools.tool import Tool

#: The extension's identifier.
UI_EXTENSION = "io.modelcontextprotocol/ui"
#: The key older hosts read a tool's view from (``_meta.ui.resourceUri`` replaced it).
LEGACY_RESOURCE_URI = "ui/resourceUri"


class AppsExtension(Extension):
    """Tools shown in interactive views (see the module's documentation)."""

    id = UI_EXTENSION

    def __init__(self) -> None:
        self._server: Server | None = None
        self._views: dict[str, App] = {}
        self._apps: WeakKeyDictionary[Tool, App] = WeakKeyDictionary()

    def settings(self) -> dict[str, Any]:
        return {"mimeTypes": [MCP_APP_MIME]}

    def install(self, server: Server) -> None:
        super().install(server)
        self._server = server

    def show(self, tool: Tool, app: App) -> None:
        """Show ``tool``'s results in ``app``'s view, serving the view if it is new.
        ``ValueError`` if another view is served at the same URI."""
        known = self._views.get(app.uri)
        if known is None:
            self._serve(app)
        elif not known.same_view(app):
            raise ValueError(f"another view is served at {app.uri} already: give this one its own URI")
        self._apps[tool] = app

    def tool_definition(self, tool: Tool) -> dict[str, Any] | None:
        app = self._apps.get(tool)
        if app is None:
            return None
        own = (tool.meta or {}).get("ui")
        ui = {**own, **app.tool_meta()} if type(own) is dict else app.tool_meta()
        return {"_meta": {"ui": ui, LEGACY_RESOURCE_URI: app.uri}}

    def mounted(self, prefix: str) -> Extension:
        """A server mounting this one's offers MCP Apps too (the views are resources it
        serves prefixed, and its tools' definitions name them so)."""
        return AppsExtension()

    def prefixed_definition(self, definition: dict[str, Any], prefix: str) -> dict[str, Any]:
        return prefixed_view(definition, prefix)

    def _serve(self, app: App) -> None:
        assert self._server is not None, "the extension is installed before views are shown"
        meta = app.resource_meta()
        wrapped = {"ui": meta} if meta else None

        def read() -> Any:
            return resource_contents(app.read(), mime_type=MCP_APP_MIME, meta=wrapped)

        self._server.add_resource(
            app.uri, read, name=app.name or app.uri, description=app.description, mime_type=MCP_APP_MIME, meta=wrapped
        )
        self._views[app.uri] = app


def prefixed_view(definition: dict[str, Any], prefix: str) -> dict[str, Any]:
    """A tool's ``definition`` with its view's URI prefixed, as a mount prefixes the view's
    resource (unchanged without a ``_meta.ui.resourceUri``)."""
    meta = definition.get("_meta")
    ui = meta.get("ui") if type(meta) is dict else None
    if type(meta) is not dict or type(ui) is not dict or type(ui.get("resourceUri")) is not str:
        return definition
    uri = prefixed_uri(prefix, ui["resourceUri"])
    moved = {**meta, "ui": {**ui, "resourceUri": uri}}
    if LEGACY_RESOURCE_URI in meta:
        moved[LEGACY_RESOURCE_URI] = uri
    return {**definition, "_meta": moved}


def show_in_view(server: Server, tool: Tool, app: App) -> None:
    """Give ``tool`` of ``server`` the view ``app``, offering the extension first if the
    server does not yet (what ``@server.tool(app=...)`` does). ``TypeError`` if ``app`` is
    not an :class:`App` or the server offers another extension under this identifier."""
    if not isinstance(app, App):
        raise TypeError(f"tool {tool.name!r}: app= is a toolwire.apps.App, not {type(app).__name__}")
    extension = server.extensions.get(UI_EXTENSION)
    if extension is None:
        extension = server.add_extension(AppsExtension())
    if not isinstance(extension, AppsExtension):
        raise TypeError(f"this server offers {UI_EXTENSION} through {extension!r}, not toolwire's AppsExtension")
    extension.show(tool, app)


def renders_apps(ctx: Context) -> bool:
    """Whether the client of this call declared that it renders MCP Apps views (so a tool
    may keep its text short when a view shows the rest)."""
    extensions = ctx.client_capabilities.get("extensions")
    settings = extensions.get(UI_EXTENSION) if type(extensions) is dict else None
    types = settings.get("mimeTypes") if type(settings) is dict else None
    return type(types) is list and MCP_APP_MIME in types
