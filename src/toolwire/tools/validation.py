"""Validating tool arguments and results against their JSON Schemas.

Schemas are compiled once (on first use, so that start-up does not pay for the validator)
with network ``$ref`` retrieval disabled, as the specification requires. A schema in an
unsupported dialect, or one that is not a valid schema, is refused when compiled, with a
:class:`SchemaError` naming the problem.

Leniency
--------
Models often send ``"5"`` for ``5``, ``"true"`` for ``true`` or an object as a JSON string.
A *lenient* validator (the default for decorated tools) retries a failed validation once after
converting such top-level arguments where the schema asks for a number, integer, boolean,
object or array and the string parses exactly as one. Nothing else is coerced (no numbers to
strings, no nested values), and the coerced arguments must then pass the schema in full:
invalid data never reaches a handler. Valid arguments pay nothing for this.
"""

from __future__ import annotations

import math
from typing import Any

import orjson

from ..errors import ToolwireError


class SchemaError(ToolwireError, ValueError):
    """A schema that cannot be compiled (invalid, unsupported dialect, unresolvable ``$ref``)."""


class ArgumentsInvalid(ToolwireError, ValueError):
    """Data that breaks a schema; the message names the field and the rule."""


#: The most subschemas one validation may apply (``$ref`` and ``allOf`` expanded): enough for
#: any real schema, and far below what makes validation take seconds.
MAX_SCHEMA_EXPANSION = 100_000
#: The deepest nesting of subschemas a schema may have: far beyond any real one, and a fixed
#: bound rather than Python's recursion limit, which the compiled build does not meet.
MAX_SCHEMA_DEPTH = 256
#: Keywords whose value is a subschema, a list of them, or a map of them (``$defs`` is not
#: applied by itself, only through a ``$ref``).
_ONE = (
    "not",
    "if",
    "then",
    "else",
    "items",
    "contains",
    "additionalProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
    "contentSchema",
)
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP = ("properties", "patternProperties", "dependentSchemas")


def compile_schema(schema: dict[str, Any]) -> Any:
    """A compiled validator for ``schema`` (JSON Schema 2020-12 unless ``$schema`` says
    otherwise). :class:`SchemaError` for an invalid schema, and for one whose ``$ref`` and
    ``allOf`` nesting would make validation apply more than :data:`MAX_SCHEMA_EXPANSION`
    subschemas (a schema bomb: each level doubling the work)."""
    import jsonschema_rs

    size = schema_expansion(schema, MAX_SCHEMA_EXPANSION)
    if size > MAX_SCHEMA_EXPANSION:
        raise SchemaError(
            f"the schema is too complex to check: its $ref/allOf nesting expands to more than "
            f"{MAX_SCHEMA_EXPANSION} subschemas"
        )
    try:
        return jsonschema_rs.validator_for(schema, offline=True)
    except (jsonschema_rs.ValidationError, ValueError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SchemaError(f"invalid or unsupported JSON Schema: {first}") from None


def schema_expansion(schema: Any, limit: int) -> int:
    """How many subschemas validating one instance may apply, with local ``$ref`` targets expanded
    (a recursive reference counts once: it applies to a smaller part of the instance); stops
    counting past ``limit``. Schemas nested deeper than :data:`MAX_SCHEMA_DEPTH` count as past it."""
    sizes: dict[int, int] = {}
    walking: set[int] = set()

    def resolve(reference: Any) -> Any:
        if type(reference) is not str or not reference.startswith("#"):
            return None
        node: Any = schema
        for token in reference[1:].split("/")[1:]:
            token = token.replace("~1", "/").replace("~0", "~")
            if type(node) is dict:
                node = node.get(token)
            elif type(node) is list and token.isascii() and token.isdigit() and int(token) < len(node):
                node = node[int(token)]
            else:
                return None
        return node

    def size(node: Any) -> int:
        if type(node) is not dict:
            return 1
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in walking:
            return 1
        if len(walking) >= MAX_SCHEMA_DEPTH:
            return limit + 1
        walking.add(key)
        total = 1
        children = [node.get(word) for word in _ONE]
        children += [item for word in _MANY if type(node.get(word)) is list for item in node[word]]
        children += [item for word in _MAP if type(node.get(word)) is dict for item in node[word].values()]
        children += [resolve(node.get("$ref")), resolve(node.get("$dynamicRef"))]
        for child in children:
            if child is not None:
                total += size(child)
                if total > limit:
                    break
        walking.discard(key)
        sizes[key] = total
        return total

    return size(schema)


class Validator:
    """Checks instances against one schema, compiling it on first use.

    Simple object schemas (what a signature of ``str``/``int``/``float``/``bool`` parameters
    gives) are first checked by :func:`accepts`, in plain Python: it only ever *accepts*.
    Anything it does not accept goes to jsonschema-rs for the verdict and the message, so a
    server whose tools all have simple schemas never loads the compiled validator at all.
    Both the compiled validator and that flat form are made on first use, not with the
    validator (a server registering many tools builds neither).
    """

    __slots__ = ("_compiled", "_flattened", "lenient", "schema", "simple")

    def __init__(self, schema: dict[str, Any], lenient: bool = False) -> None:
        self.schema = schema
        self.lenient = lenient
        self._compiled: Any = None
        #: The schema's flat form for :func:`accepts`, once the first check made it (``None``
        #: before, and for a schema that is not simple).
        self.simple: SimpleSchema | None = None
        self._flattened = False

    def compile(self) -> Any:
        if self._compiled is None:
            self._compiled = compile_schema(self.schema)
        return self._compiled

    def check(self, instance: Any, what: str, *names: Any) -> Any:
        """``instance`` (possibly coerced, when lenient) if valid, else :class:`ArgumentsInvalid`
        whose message starts with ``what`` (formatted with ``names``)."""
        simple = self.simple
        if simple is not None and accepts(simple, instance):
            return instance
        if not self._flattened:
            self.simple = simple_schema(self.schema)
            self._flattened = True
            return self.check(instance, what, *names)
        compiled = self._compiled or self.compile()
        if compiled.is_valid(instance):
            return instance
        if self.lenient and type(instance) is dict:
            coerced = coerce_arguments(instance, self.schema)
            if coerced is not None and compiled.is_valid(coerced):
                return coerced
        raise ArgumentsInvalid(f"{what.format(*names)}: {describe_errors(compiled, instance)}")


#: Keywords that say nothing about validity (annotations).
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"})
_SIMPLE_OBJECT_KEYS = frozenset({"type", "properties", "required", "additionalProperties", "$schema"}) | _ANNOTATIONS
_SIMPLE_PROPERTY_KEYS = frozenset({"type"}) | _ANNOTATIONS

#: A simple schema, flattened: (required names, {name: the Python types its values may
#: have}, extra properties allowed).
SimpleSchema = tuple[frozenset[str], dict[str, tuple[type, ...]], bool]
#: The Python types of the values :func:`accepts` takes for each primitive JSON type at once
#: (an integral float for ``"integer"`` is valid too, but left to jsonschema-rs).
_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def simple_schema(schema: Any) -> SimpleSchema | None:
    """The flat form of an object schema :func:`accepts` can decide alone, else ``None``.

    Only objects whose properties each have one primitive ``type`` (plus annotations),
    ``required`` and ``additionalProperties: false`` qualify; any other keyword anywhere
    leaves the schema to jsonschema-rs.
    """
    if type(schema) is not dict or schema.get("type") != "object":
        return None
    if not schema.keys() <= _SIMPLE_OBJECT_KEYS:
        return None
    if (
        schema.get("$schema", "https://json-schema.org/draft/2020-12/schema")
        != "https://json-schema.org/draft/2020-12/schema"
    ):
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if type(properties) is not dict or type(required) is not list or extra not in (True, False):
        return None
    if not all(type(name) is str for name in required):
        return None
    types: dict[str, tuple[type, ...]] = {}
    for name, sub in properties.items():
        if type(sub) is not dict or not sub.keys() <= _SIMPLE_PROPERTY_KEYS:
            return None
        kind = sub.get("type")
        if type(kind) is not str or kind not in _PYTHON_TYPES:
            return None
        types[name] = _PYTHON_TYPES[kind]
    return frozenset(required), types, extra


def accepts(simple: SimpleSchema, instance: Any) -> bool:
    """Whether ``instance`` surely matches the simple schema (``False`` means: ask jsonschema-rs)."""
    if type(instance) is not dict:
        return False
    required, types, extra = simple
    if not instance.keys() >= required:
        return False
    for name, value in instance.items():
        accepted = types.get(name)
        if accepted is None:
            if not extra:
                return False
        elif type(value) not in accepted:  # exact types: bool is no integer here, as in JSON
            return False
    return True


def describe_errors(compiled: Any, instance: Any, limit: int = 3) -> str:
    """The first few schema violations, each with the path of the offending field. A value
    outside an ``enum`` is told every allowed value (up to :data:`LISTED`); one that matches
    no alternative of an ``anyOf``/``oneOf`` is told the values and types they allow, or,
    when only one alternative has its type, why that one refused it."""
    messages: list[str] = []
    for error in compiled.iter_errors(instance):
        for inner in _explained(error):
            path = "/".join(str(part) for part in inner.instance_path)
            messages.append(f"{_message(inner)} (at '{path}')" if path else _message(inner))
        if len(messages) >= limit:
            break
    return "; ".join(messages[:limit]) or "does not match the schema"


#: The most allowed values an error message lists (the rest are counted).
LISTED = 20

_ARTICLES = {"null": "null", "integer": "an integer", "array": "an array", "object": "an object"}


def _explained(error: Any) -> list[Any]:
    """The errors that say why ``error`` happened: for an ``anyOf``/``oneOf`` that the value
    fails only in one alternative of its type, that alternative's errors; else ``error``."""
    if _kind(error) not in ("AnyOf", "OneOfNotValid"):
        return [error]
    path = list(error.instance_path)
    other = [group for group in error.kind.context if not _about_kind(group, path)]
    if len(other) == 1 and other[0]:
        return [inner for own in other[0] for inner in _explained(own)]
    return [error]


def _about_kind(group: list[Any], path: list[Any]) -> bool:
    """Whether an alternative's errors say only that the value has another type or value."""
    return len(group) == 1 and list(group[0].instance_path) == path and _kind(group[0]) in ("Type", "Enum", "Constant")


def _message(error: Any) -> str:
    kind = _kind(error)
    value = _json(error.instance)
    if kind == "Enum":
        return f"{value} is not one of {_either([_json(option) for option in error.kind.options])}"
    if kind not in ("AnyOf", "OneOfNotValid"):
        return str(error.message)
    path = list(error.instance_path)
    values: list[str] = []
    types: list[str] = []
    for group in error.kind.context:
        if not _about_kind(group, path):
            return str(error.message)  # alternatives that refused it for other reasons
        details = group[0].kind.as_dict()
        if "types" in details:
            types += [_ARTICLES.get(name, f"a {name}") for name in details["types"]]
        elif "options" in details:
            values += [_json(option) for option in details["options"]]
        else:
            values.append(_json(details.get("expected_value")))
    allowed = _either(values + [kind for kind in types if kind not in values])
    return f"{value} is not one of {allowed}" if values else f"{value} is not {allowed}"


def _kind(error: Any) -> str:
    return type(error.kind).__name__


def _json(value: Any) -> str:
    return orjson.dumps(value, default=repr).decode()


def _either(items: list[str]) -> str:
    """``a, b or c``; past :data:`LISTED` items, ``a, b, ... or N others``."""
    if len(items) > LISTED:
        return f"{', '.join(items[:LISTED])} or {len(items) - LISTED} others"
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def coerce_arguments(arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any] | None:
    """A copy of ``arguments`` with string values turned into the types the schema asks for,
    or ``None`` when nothing could be converted."""
    properties = schema.get("properties")
    if type(properties) is not dict:
        return None
    coerced = dict(arguments)
    changed = False
    for name, value in arguments.items():
        if type(value) is not str or name not in properties:
            continue
        for kind in _wanted_types(properties[name], schema):
            converted = _convert(value, kind)
            if converted is not _FAIL:
                coerced[name] = converted
                changed = True
                break
    return coerced if changed else None


_FAIL: Any = object()


def _wanted_types(schema: Any, root: dict[str, Any], depth: int = 0) -> list[str]:
    """The JSON types ``schema`` admits, through ``anyOf``/``oneOf`` and local ``$ref``s
    (``#/$defs/...`` of ``root``), a few levels deep."""
    if type(schema) is not dict or depth > 8:
        return []
    reference = schema.get("$ref")
    if type(reference) is str and reference.startswith(("#/$defs/", "#/definitions/")):
        section, _, name = reference[2:].partition("/")
        defs = root.get(section)
        return _wanted_types(defs.get(name) if type(defs) is dict else None, root, depth + 1)
    kinds = schema.get("type")
    if type(kinds) is str:
        return [kinds]
    if type(kinds) is list:
        return [kind for kind in kinds if type(kind) is str]
    out: list[str] = []
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key, ()):
            out += _wanted_types(option, root, depth + 1)
    return out


def _convert(value: str, kind: str) -> Any:
    text = value.strip()
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            return _FAIL
    if kind == "number":
        try:
            number = float(text)
        except ValueError:
            return _FAIL
        if not math.isfinite(number):
            return _FAIL
        return int(number) if number.is_integer() and "." not in text and "e" not in text.lower() else number
    if kind == "boolean":
        return {"true": True, "false": False}.get(text.lower(), _FAIL)
    if kind in ("object", "array") and text[:1] in ("{", "["):
        try:
            parsed = orjson.loads(text)
        except orjson.JSONDecodeError:
            return _FAIL
        if (kind == "object") == (type(parsed) is dict) and type(parsed) in (dict, list):
            return parsed
    return _FAIL
