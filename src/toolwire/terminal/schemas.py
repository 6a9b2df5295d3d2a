"""Reading a tool's ``inputSchema``: its parameters for display, and ``KEY=VALUE`` words
turned into arguments of the types it asks for.

Schemas come from servers and may be anything: whatever cannot be read is treated as saying
nothing (a type shown as ``any``, a value taken as JSON if it is JSON), never as an error.
Local references (``#/$defs/...``) are followed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import orjson

from ..cli import UsageError

#: How deep references and unions are followed (a schema may refer to itself).
MAX_DEPTH = 8


@dataclass(slots=True)
class Parameter:
    """One parameter as shown: its default is JSON text (``None``: it has none)."""

    name: str
    type: str
    required: bool
    default: str | None


def parameters(schema: dict[str, Any]) -> list[Parameter]:
    """The parameters of an ``inputSchema``, in its order, with a readable type for each."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return []
    required = schema.get("required")
    return [
        Parameter(
            name,
            type_name(subschema),
            isinstance(required, list) and name in required,
            _json_text(subschema["default"]) if isinstance(subschema, dict) and "default" in subschema else None,
        )
        for name, subschema in properties.items()
    ]


def type_name(schema: Any, depth: int = 0) -> str:
    """A short name for the type ``schema`` describes: ``string``, ``array[integer]``,
    ``"add" | "subtract"``, ``Point`` (a reference), ``integer | null``; ``any`` if unknown."""
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return "any"
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return ref.rpartition("/")[2] or "any"
    if "const" in schema:
        return _json_text(schema["const"])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return " | ".join(_json_text(value) for value in schema["enum"])
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list) and branches:
        return " | ".join(type_name(branch, depth + 1) for branch in branches)
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind) or "any"
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"array[{type_name(schema['items'], depth + 1)}]"
    return kind if isinstance(kind, str) else "any"


def arguments(pairs: list[tuple[str, str]], schema: dict[str, Any]) -> dict[str, Any]:
    """The arguments that ``KEY=VALUE`` pairs stand for, by each parameter's schema.

    A parameter that admits only strings takes the value as it is. Any other takes it as
    JSON, and one that admits strings too keeps it as a string unless its JSON is of another
    type it admits (``note=null`` for ``string | null``). A parameter the schema says nothing
    about takes the value as JSON if it is JSON, as a string otherwise. :class:`UsageError`
    when a parameter that admits no strings gets a value that is not JSON.
    """
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        properties = {}
    return {key: _value(key, raw, admitted_types(properties.get(key), schema)) for key, raw in pairs}


def _value(key: str, raw: str, types: set[str] | None) -> Any:
    if types == {"string"}:
        return raw
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        if types is None or "string" in types:
            return raw
        kind = " | ".join(sorted(types))
        if _too_large(raw):
            raise UsageError(f"{key}={raw}: the number is too large for JSON (at most about 1.8e308)") from None
        raise UsageError(
            f"{key}={raw}: {key} is of type {kind}, so its value must be JSON, and {raw!r} is not"
        ) from None
    if types is not None and "string" in types and not _admits(types, value):
        return raw
    return value


def admitted_types(schema: Any, root: dict[str, Any], depth: int = 0) -> set[str] | None:
    """The JSON types ``schema`` admits (``"integer"``, ``"null"``...), or ``None`` when it
    does not say."""
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return None
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return admitted_types(_resolve(ref, root), root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)} or None
    if "const" in schema:
        return {json_type(schema["const"])}
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return {json_type(value) for value in schema["enum"]}
    branches = schema.get("anyOf") or schema.get("oneOf")
    if not isinstance(branches, list) or not branches:
        return None
    found: set[str] = set()
    for branch in branches:
        types = admitted_types(branch, root, depth + 1)
        if types is None:
            return None
        found |= types
    return found


def json_type(value: Any) -> str:
    """The JSON Schema type of a decoded JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _admits(types: set[str], value: Any) -> bool:
    kind = json_type(value)
    return kind in types or (kind == "integer" and "number" in types)


def _resolve(ref: str, root: dict[str, Any]) -> Any:
    """The subschema a local reference (``#/$defs/Name``) points to; ``None`` for others."""
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(node, dict):
            return None
        node = node.get(part.replace("~1", "/").replace("~0", "~"))
    return node


def _json_text(value: Any) -> str:
    return orjson.dumps(value).decode()


def _too_large(raw: str) -> bool:
    """Whether ``raw`` is a number that JSON's doubles cannot hold (``1e400``)."""
    try:
        return math.isinf(float(raw)) and raw.strip().lower().lstrip("+-") not in ("inf", "infinity")
    except ValueError:
        return False
