"""MCP Apps (SEP-1865, extension ``io.modelcontextprotocol/ui``): tools whose results a host
shows in an interactive HTML view, and tools only such a view may call.

    from toolwire.apps import App

    board = App("ui://weather/board.html", path="board.html")

    @server.tool(app=board)                      # the model calls it; the host shows the view
    def forecast(city: str) -> str: ...

    @server.tool(app=board.visible_to("app"))    # only the view calls it
    def refresh_forecast(city: str) -> dict: ...

:mod:`.view` describes a view, :mod:`.extension` serves it, :mod:`.visibility` says who may
use a tool (what :class:`~toolwire.host.Host` reads to keep app-only tools from its model).
See docs/extensions.md.

Names are imported when first used, so that a host (which reads a tool's visibility from
:mod:`.visibility`) loads neither the views nor the server's modules.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .extension import UI_EXTENSION, AppsExtension, renders_apps, show_in_view
    from .view import MCP_APP_MIME, PERMISSIONS, App, Csp
    from .visibility import visible_to_app, visible_to_model

_EXPORTS = {
    "UI_EXTENSION": "extension",
    "AppsExtension": "extension",
    "renders_apps": "extension",
    "show_in_view": "extension",
    "MCP_APP_MIME": "view",
    "PERMISSIONS": "view",
    "App": "view",
    "Csp": "view",
    "visible_to_app": "visibility",
    "visible_to_model": "visibility",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


__all__ = [
    "MCP_APP_MIME",
    "PERMISSIONS",
    "UI_EXTENSION",
    "App",
    "AppsExtension",
    "Csp",
    "renders_apps",
    "show_in_view",
    "visible_to_app",
    "visible_to_model",
]
