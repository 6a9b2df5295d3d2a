"""What both providers need: notes for media a model cannot read, errors' messages."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ..model import Part


def media_note(part: Part) -> str:
    """One line saying what a tool returned that the model cannot see or hear."""
    try:
        size = len(base64.b64decode(part.get("data", ""), validate=False))
    except (binascii.Error, ValueError):
        size = 0
    return f"[{part['type']} ({part.get('mime_type') or 'unknown type'}, {size} bytes): this model cannot read it]"


def api_message(exc: Any) -> str:
    """The message of an SDK's ``APIStatusError``: the API's own ``error.message`` if any."""
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(exc.message)
