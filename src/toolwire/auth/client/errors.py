"""What goes wrong when authorizing: :class:`AuthorizationError`, and OAuth error answers in words."""

from __future__ import annotations

from typing import Any

import httpx


class AuthorizationError(Exception):
    """Authorization could not be obtained; the message says why and what to do."""


def oauth_error(response: httpx.Response, answer: Any) -> str:
    """An OAuth error answer in words: ``error`` (``error_description``), else the status."""
    if isinstance(answer, dict) and isinstance(answer.get("error"), str):
        description = answer.get("error_description")
        return str(answer["error"]) + (f" ({description})" if isinstance(description, str) else "")
    return f"HTTP {response.status_code}"
