"""Who may use a tool under MCP Apps: the model, the app (its view), or both.

A tool's ``_meta.ui.visibility`` lists ``"model"`` and/or ``"app"``; without it, both. A
host must not hand the model a tool whose visibility leaves ``"model"`` out, and a view may
call only tools whose visibility includes ``"app"``. Read from a definition's ``_meta``,
whatever its shape (a malformed one counts as the default: both).
"""

from __future__ import annotations

from typing import Any

#: Who a tool is for when its definition does not say.
DEFAULT_VISIBILITY = ("model", "app")


def visibility(meta: Any) -> tuple[str, ...]:
    """Whom the tool with ``_meta`` ``meta`` is for (:data:`DEFAULT_VISIBILITY` when unsaid
    or malformed)."""
    ui = meta.get("ui") if type(meta) is dict else None
    said = ui.get("visibility") if type(ui) is dict else None
    if type(said) is not list or not all(type(who) is str for who in said):
        return DEFAULT_VISIBILITY
    return tuple(said)


def visible_to_model(meta: Any) -> bool:
    """Whether a host may show the tool with ``_meta`` ``meta`` to its model."""
    return "model" in visibility(meta)


def visible_to_app(meta: Any) -> bool:
    """Whether a view may call the tool with ``_meta`` ``meta``."""
    return "app" in visibility(meta)
