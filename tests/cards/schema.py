"""The server card's format (SEP-2127, as ``experimental-ext-server-card``'s ``schema.ts``
states it at commit 8924e08), written here as a JSON Schema, to check what toolwire serves
independently of the code that builds and reads cards."""

from __future__ import annotations

from typing import Any

import jsonschema_rs

_TEXT: dict[str, Any] = {"type": "string"}
_TEXTS: dict[str, Any] = {"type": "array", "items": _TEXT}
_URI: dict[str, Any] = {"type": "string", "format": "uri"}
_INPUT_FIELDS: dict[str, Any] = {
    "value": _TEXT,
    "default": _TEXT,
    "placeholder": _TEXT,
    "choices": _TEXTS,
    "isRequired": {"type": "boolean"},
    "isSecret": {"type": "boolean"},
    "format": {"enum": ["string", "number", "boolean", "filepath"]},
}
_INPUT: dict[str, Any] = {"type": "object", "properties": _INPUT_FIELDS}
_VARIABLES: dict[str, Any] = {"type": "object", "additionalProperties": _INPUT}

CARD: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["$schema", "name", "version", "description"],
    "properties": {
        "$schema": {
            "type": "string",
            "const": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
        },
        "name": {"type": "string", "minLength": 3, "maxLength": 200, "pattern": "^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$"},
        "version": {"type": "string", "maxLength": 255},
        "description": {"type": "string", "minLength": 1, "maxLength": 100},
        "title": {"type": "string", "minLength": 1, "maxLength": 100},
        "websiteUrl": _URI,
        "repository": {
            "type": "object",
            "required": ["url", "source"],
            "properties": {"url": _URI, "source": _TEXT, "id": _TEXT, "subfolder": _TEXT},
        },
        "icons": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["src"],
                "properties": {"src": _URI, "mimeType": _TEXT, "sizes": _TEXTS, "theme": {"enum": ["light", "dark"]}},
            },
        },
        "remotes": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["type", "url"],
                "properties": {
                    "type": {"enum": ["streamable-http", "sse"]},
                    "url": {"type": "string", "pattern": r"^(https?://[^\s]+|\{[a-zA-Z_][a-zA-Z0-9_]*\}[^\s]*)$"},
                    "supportedProtocolVersions": _TEXTS,
                    "variables": _VARIABLES,
                    "headers": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {**_INPUT_FIELDS, "name": _TEXT, "variables": _VARIABLES},
                        },
                    },
                },
            },
        },
        "_meta": {"type": "object"},
    },
}

#: A validator of cards (formats checked).
CARDS = jsonschema_rs.validator_for(CARD, validate_formats=True)
