"""Tool input schemas made acceptable to model APIs.

MCP allows any JSON Schema object; model APIs accept less. OpenAI's function ``parameters``
and Anthropic's ``input_schema`` both want an object schema at the top, and OpenAI refuses
top-level ``anyOf``/``oneOf``/``allOf``/``not``/``enum``. :func:`for_model` returns a copy with
``"type": "object"`` and ``properties`` at the top, ``$schema``/``$id`` dropped, and top-level
combinators removed (their meaning is kept as a sentence for the description, so the server
still validates what the model sends). The server's own schema is never changed.
"""

from __future__ import annotations

from typing import Any

import orjson

#: Keywords no provider takes at the top of a tool's schema.
TOP_LEVEL_REFUSED = ("anyOf", "oneOf", "allOf", "not", "enum", "const")
DROPPED = ("$schema", "$id")


def for_model(schema: Any) -> tuple[dict[str, Any], str]:
    """The schema a model is shown, and a note for the description (empty when nothing of the
    original was left out)."""
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}, ""
    shown = {key: value for key, value in schema.items() if key not in DROPPED and key not in TOP_LEVEL_REFUSED}
    left_out = {key: schema[key] for key in TOP_LEVEL_REFUSED if key in schema}
    shown["type"] = "object"
    if not isinstance(shown.get("properties"), dict):
        shown["properties"] = {}
    note = ""
    if left_out:
        rules = orjson.dumps(left_out).decode()
        note = f"The arguments must also satisfy: {rules}"
    return shown, note
