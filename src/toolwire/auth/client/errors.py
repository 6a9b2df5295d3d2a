"""What goes wrong when authorizing: :class:`AuthorizationError`, and OAuth error answers in words."""

from __future__ import annotations

from typing import Any

from ...fetch import shown


class AuthorizationError(Exception):
    """Authorization could not be obtained; the message says why and what to do."""


def oauth_error(status: int, answer: Any) -> str:
    """An OAuth error answer in words: ``error`` (``error_description``), else the status;
    what the server wrote escaped to printable ASCII (:func:`toolwire.fetch.shown`)."""
    if isinstance(answer, dict) and isinstance(answer.get("error"), str):
        description = answer.get("error_description")
        return shown(answer["error"]) + (f" ({shown(description)})" if isinstance(description, str) else "")
    return f"HTTP {status}"
