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

from ..cli.common import UsageError

#: How deep references and unions are followed (a schema may refer to itself).
MAX_DEPTH = 8


@dataclass(slots=True)
class Parameter:
    """One parameter as shown: its default is JSON text (``None``: it has none)."""

    name: str
    type: str
    required: bool
    default: str | None


#: How deep object fields are spelled out in a parameter's type.
FIELD_DEPTH = 2


def parameters(schema: dict[str, Any]) -> list[Parameter]:
    """The parameters of an ``inputSchema``, in its order, with a readable type for each
    (the fields of objects spelled out)."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return []
    required = schema.get("required")
    return [
        Parameter(
            name,
            type_name(subschema, root=schema),
            isinstance(required, list) and name in required,
            _json_text(subschema["default"]) if isinstance(subschema, dict) and "default" in subschema else None,
        )
        for name, subschema in properties.items()
    ]


def type_name(schema: Any, depth: int = 0, root: dict[str, Any] | None = None, fields: int = 0) -> str:
    """A short name for the type ``schema`` describes: ``string``, ``array[integer]``,
    ``"add" | "subtract"``, ``integer | null``, an object's fields as ``{x*: number, y:
    string}`` (required ones starred; a reference is named, ``Point{...}``, with ``root`` to
    resolve it); ``any`` if unknown."""
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return "any"
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref.rpartition("/")[2] or "any"
        target = _resolve(ref, root) if root is not None else None
        if isinstance(target, dict) and isinstance(target.get("properties"), dict) and fields < FIELD_DEPTH:
            return name + _fields(target, depth + 1, root, fields + 1)
        return name
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
        return f"array[{type_name(schema['items'], depth + 1, root, fields)}]"
    if isinstance(schema.get("properties"), dict) and schema["properties"] and fields < FIELD_DEPTH:
        return _fields(schema, depth + 1, root, fields + 1)
    return kind if isinstance(kind, str) else "any"


def _fields(schema: dict[str, Any], depth: int, root: dict[str, Any] | None, fields: int) -> str:
    required: list[Any] = schema["required"] if isinstance(schema.get("required"), list) else []
    shown = [
        f"{name}{'*' if name in required else ''}: {type_name(subschema, depth, root, fields)}"
        for name, subschema in schema["properties"].items()
    ]
    return "{" + ", ".join(shown) + "}"


def check_arguments(tool: str, arguments: dict[str, Any], schema: dict[str, Any]) -> None:
    """:class:`UsageError` before anything is sent when ``arguments`` lack a required
    parameter, or name one the schema neither lists nor allows (or a close misspelling of a
    missing one): ``tool 'x': missing repo_path; unknown 'repo' (its parameters: ...)``."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return
    required: list[Any] = schema["required"] if isinstance(schema.get("required"), list) else []
    missing = [name for name in required if isinstance(name, str) and name not in arguments]
    closed = schema.get("additionalProperties") is False
    unknown = [key for key in arguments if key not in properties and (closed or missing)]
    if not missing and not unknown:
        return
    problems = []
    if missing:
        problems.append("missing " + ", ".join(missing))
    if unknown:
        problems.append("unknown " + ", ".join(repr(key) for key in unknown))
    listed = ", ".join(f"{name}*" if name in required else name for name in properties)
    raise UsageError(f"tool {tool!r}: {'; '.join(problems)} (its parameters: {listed or 'none'})")


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


def _resolve(ref: str, root: dict[str, Any] | None) -> Any:
    """The subschema a local reference (``#/$defs/Name``) points to; ``None`` for others."""
    if not ref.startswith("#/") or root is None:
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
