"""JSON Schema (2020-12) from Python type hints, and converters from JSON back to those types.

:func:`compile_type` turns one annotation into a :class:`TypeSpec`: the schema a model sees,
and a converter that turns already-validated JSON into the Python value the function expects
(``None`` when the JSON value is already right, so the hot path does no work for plain
``str``/``int``/``list[str]`` parameters).

Supported: ``str int float bool None bytes``, ``list/set/frozenset/tuple/Sequence``,
``dict/Mapping`` with string keys, ``Optional``/``Union``/``X | Y``, ``Literal``, ``Enum``,
``datetime/date/time/UUID/Path/Decimal``, ``Annotated`` with constraints, dataclasses,
``TypedDict`` and pydantic models (nested; named types go to ``$defs``). Anything else raises
:class:`TypeError` naming the type, when the tool is registered.

Constraints in ``Annotated[T, ...]``: a ``str`` (description), a ``dict`` (schema keywords
merged as given), :class:`Param`, ``annotated_types`` objects (``Ge``, ``Le``, ``MinLen``, ...)
and ``pydantic.Field(...)``.
"""

from __future__ import annotations

import dataclasses
import enum
import sys
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Literal, Union

Converter = Callable[[Any], Any]

_NONE_TYPE = type(None)


class Param:
    """Schema details for a parameter, used inside ``Annotated[T, Param(...)]``.

    Every keyword is a JSON Schema keyword written in Python style: ``min_length`` becomes
    ``minLength``, ``ge`` becomes ``minimum``, and so on; ``extra`` is merged as given.
    """

    _KEYWORDS: ClassVar[dict[str, str]] = {
        "description": "description",
        "title": "title",
        "ge": "minimum",
        "le": "maximum",
        "gt": "exclusiveMinimum",
        "lt": "exclusiveMaximum",
        "multiple_of": "multipleOf",
        "min_length": "minLength",
        "max_length": "maxLength",
        "pattern": "pattern",
        "min_items": "minItems",
        "max_items": "maxItems",
        "format": "format",
        "examples": "examples",
    }

    def __init__(self, description: str | None = None, *, extra: dict[str, Any] | None = None, **keywords: Any) -> None:
        unknown = set(keywords) - set(self._KEYWORDS)
        if unknown:
            raise TypeError(f"Param() got unknown keywords: {', '.join(sorted(unknown))}")
        if description is not None:
            keywords["description"] = description
        self.schema = {self._KEYWORDS[key]: value for key, value in keywords.items() if value is not None}
        self.schema.update(extra or {})


class TypeSpec:
    """The schema of a type and the converter from validated JSON to it (``None``: identity)."""

    __slots__ = ("convert", "schema")

    def __init__(self, schema: dict[str, Any], convert: Converter | None = None) -> None:
        self.schema = schema
        self.convert = convert


class SchemaBuilder:
    """Builds schemas for several types sharing one ``$defs`` table (one tool's worth)."""

    def __init__(self) -> None:
        self.defs: dict[str, dict[str, Any]] = {}
        self._named: dict[Any, str] = {}
        self._field_converters: dict[type, dict[str, Converter]] = {}

    def compile(self, tp: Any) -> TypeSpec:
        """The :class:`TypeSpec` of annotation ``tp``; ``TypeError`` if it cannot be expressed."""
        spec = _SIMPLE.get(tp) if type(tp) is type else None
        if spec is not None:  # str, int, float, bool, list, dict: known without asking typing
            return spec
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            base, *extras = typing.get_args(tp)
            spec = self.compile(base)
            return TypeSpec(_constrained(spec.schema, extras), spec.convert)
        if tp is Any or tp is object:
            return TypeSpec({})
        if tp is _NONE_TYPE or tp is None:
            return TypeSpec({"type": "null"})
        simple = _simple(tp)
        if simple is not None:
            return simple
        if origin is Union or origin is types.UnionType:
            return self._union(typing.get_args(tp))
        if origin is Literal:
            return TypeSpec(_literal_schema(typing.get_args(tp)))
        if origin is not None:
            return self._generic(tp, origin, typing.get_args(tp))
        if isinstance(tp, type):
            return self._class(tp)
        raise TypeError(f"cannot build a JSON Schema for {tp!r}")

    def _union(self, members: tuple[Any, ...]) -> TypeSpec:
        specs = [self.compile(member) for member in members]
        optional = any(member is _NONE_TYPE for member in members)
        schema = {"anyOf": [spec.schema for spec in specs]}
        converters = [(member, spec.convert) for member, spec in zip(members, specs, strict=True) if spec.convert]
        if not converters:
            return TypeSpec(schema)
        if len(converters) == 1 and len(members) == 2 and optional:
            inner = converters[0][1]
            return TypeSpec(schema, lambda value: None if value is None else inner(value))
        return TypeSpec(schema, _first_that_works([convert for _, convert in converters]))

    def _generic(self, tp: Any, origin: Any, args: tuple[Any, ...]) -> TypeSpec:
        if origin in (list, set, frozenset) or origin in (Sequence, typing.Sequence) or _is_abc(origin, "Sequence"):
            item = self.compile(args[0]) if args else TypeSpec({})
            schema: dict[str, Any] = {"type": "array", "items": item.schema}
            if origin in (set, frozenset):
                schema["uniqueItems"] = True
            return TypeSpec(schema, _sequence_converter(origin, item.convert))
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                item = self.compile(args[0])
                return TypeSpec({"type": "array", "items": item.schema}, _sequence_converter(tuple, item.convert))
            items = [self.compile(arg) for arg in args]
            schema = {
                "type": "array",
                "prefixItems": [spec.schema for spec in items],
                "minItems": len(items),
                "maxItems": len(items),
            }
            converters = [spec.convert for spec in items]
            return TypeSpec(
                schema, lambda value: tuple(c(v) if c else v for c, v in zip(converters, value, strict=False))
            )
        if origin in (dict, Mapping) or _is_abc(origin, "Mapping"):
            if args and args[0] is not str and not (isinstance(args[0], type) and issubclass(args[0], str)):
                raise TypeError(f"JSON object keys are strings: cannot express {tp!r}")
            value = self.compile(args[1]) if len(args) == 2 else TypeSpec({})
            convert = value.convert
            schema = {"type": "object", "additionalProperties": value.schema or True}  # {} reads as "any"
            if convert is None:
                return TypeSpec(schema)
            return TypeSpec(schema, lambda obj: {key: convert(item) for key, item in obj.items()})
        raise TypeError(f"cannot build a JSON Schema for {tp!r}")

    def _class(self, cls: type) -> TypeSpec:
        if issubclass(cls, enum.Enum):
            values = [member.value for member in cls]
            return TypeSpec({**_literal_schema(tuple(values)), "title": cls.__name__}, cls)
        pydantic = sys.modules.get("pydantic")
        if pydantic is not None and isinstance(cls, type) and issubclass(cls, pydantic.BaseModel):
            return self._pydantic(cls)
        if dataclasses.is_dataclass(cls) or _is_typeddict(cls):
            return self._named_object(cls)
        raise TypeError(f"cannot build a JSON Schema for {cls.__qualname__}")

    def _named_object(self, cls: type) -> TypeSpec:
        name = self._def_name(cls)
        ref = {"$ref": f"#/$defs/{name}"}
        converters = self._field_converters.get(cls)
        if converters is None:
            # Registered before it is built, so that recursive types find themselves.
            self._named[cls] = name
            self._field_converters[cls] = converters = {}
            self.defs[name] = {}
            self.defs[name] = self.object_schema(cls, converters)
        return TypeSpec(ref, _object_converter(cls, converters))

    def object_schema(self, cls: type, converters: dict[str, Converter]) -> dict[str, Any]:
        """The object schema of a dataclass or TypedDict (no other properties allowed); fills
        ``converters`` per field."""
        hints = typing.get_type_hints(cls, include_extras=True)
        properties: dict[str, Any] = {}
        required: list[str] = []
        if dataclasses.is_dataclass(cls):
            fields = [(f.name, _field_default(f)) for f in dataclasses.fields(cls) if f.init]
        else:
            required_keys = getattr(cls, "__required_keys__", frozenset(hints))
            fields = [(name, dataclasses.MISSING if name in required_keys else _NO_JSON_DEFAULT) for name in hints]
        for name, default in fields:
            spec = self.compile(hints[name])
            schema = dict(spec.schema)
            if default is dataclasses.MISSING:
                required.append(name)
            elif default is not _NO_JSON_DEFAULT:
                schema.setdefault("default", default)
            properties[name] = schema
            if spec.convert is not None:
                converters[name] = spec.convert
        # Unknown fields are refused: a dataclass would fail on them, and a TypedDict does not
        # declare them (pydantic models follow their own ``extra`` setting).
        schema = {"type": "object", "properties": properties, "title": cls.__name__, "additionalProperties": False}
        if required:
            schema["required"] = required
        doc = _own_doc(cls)
        if doc:
            schema["description"] = doc
        return schema

    def _pydantic(self, model: Any) -> TypeSpec:
        schema = model.model_json_schema(ref_template="#/$defs/{model}")
        for key, value in schema.pop("$defs", {}).items():
            self.defs.setdefault(key, value)
        name = self._def_name(model)
        self.defs.setdefault(name, schema)
        return TypeSpec({"$ref": f"#/$defs/{name}"}, model.model_validate)

    def _def_name(self, cls: type) -> str:
        name = self._named.get(cls)
        if name is not None:
            return name
        base = cls.__name__
        taken = set(self.defs) | set(self._named.values())
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}{n}"
        return name


class _NoJsonDefault:
    """Marks a default that cannot be shown in a schema (a default_factory, say)."""


_NO_JSON_DEFAULT: Any = _NoJsonDefault()


def _field_default(field: dataclasses.Field[Any]) -> Any:
    if field.default is not dataclasses.MISSING:
        return json_default(field.default)
    if field.default_factory is not dataclasses.MISSING:
        return _NO_JSON_DEFAULT
    return dataclasses.MISSING


def json_default(value: Any) -> Any:
    """A default as JSON for the schema, or the marker that it cannot be shown."""
    if isinstance(value, enum.Enum):
        value = value.value
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, (str, int, float, bool)) for v in value):
        return list(value)
    return _NO_JSON_DEFAULT


def is_json_default(value: Any) -> bool:
    return value is not _NO_JSON_DEFAULT


def _own_doc(cls: type) -> str | None:
    doc = cls.__doc__
    if not doc or (dataclasses.is_dataclass(cls) and doc.startswith(cls.__name__ + "(")):
        return None  # dataclasses invent a docstring from the signature
    if _is_typeddict(cls) and doc == dict.__doc__:
        return None
    return " ".join(doc.split())


def _literal_schema(values: tuple[Any, ...]) -> dict[str, Any]:
    values = tuple(v.value if isinstance(v, enum.Enum) else v for v in values)
    kinds = {_JSON_TYPE.get(type(v)) for v in values}
    schema: dict[str, Any] = {"enum": list(values)} if len(values) != 1 else {"const": values[0]}
    if len(kinds) == 1 and None not in kinds:
        schema = {"type": kinds.pop(), **schema}
    return schema


_JSON_TYPE = {str: "string", int: "integer", float: "number", bool: "boolean", _NONE_TYPE: "null"}


def _constrained(schema: dict[str, Any], extras: list[Any]) -> dict[str, Any]:
    schema = dict(schema)
    for extra in extras:
        if isinstance(extra, str):
            schema["description"] = extra
        elif isinstance(extra, dict):
            schema.update(extra)
        elif isinstance(extra, Param):
            schema.update(extra.schema)
        else:
            schema.update(_foreign_constraint(extra))
    return schema


_ANNOTATED_TYPES = {
    "Gt": ("gt", "exclusiveMinimum"),
    "Ge": ("ge", "minimum"),
    "Lt": ("lt", "exclusiveMaximum"),
    "Le": ("le", "maximum"),
    "MultipleOf": ("multiple_of", "multipleOf"),
}


def _foreign_constraint(extra: Any) -> dict[str, Any]:
    """Constraints from ``annotated_types`` and ``pydantic.Field``, read without importing them."""
    kind = type(extra).__name__
    if kind in _ANNOTATED_TYPES:
        attribute, keyword = _ANNOTATED_TYPES[kind]
        return {keyword: getattr(extra, attribute)}
    if kind in ("MinLen", "MaxLen", "Len"):
        low, high = getattr(extra, "min_length", None), getattr(extra, "max_length", None)
        return {k: v for k, v in (("minLength", low), ("maxLength", high)) if v is not None}
    if kind == "Interval":
        out: dict[str, Any] = {}
        for attribute, keyword in _ANNOTATED_TYPES.values():
            value = getattr(extra, attribute, None)
            if value is not None:
                out[keyword] = value
        return out
    if kind == "FieldInfo":
        out = {}
        if extra.description:
            out["description"] = extra.description
        if extra.title:
            out["title"] = extra.title
        for item in extra.metadata:
            out.update(_foreign_constraint(item))
        return out
    raise TypeError(f"cannot use {extra!r} as a schema constraint")


def _is_typeddict(cls: Any) -> bool:
    """``typing`` and ``typing_extensions`` TypedDicts alike."""
    return isinstance(cls, type) and issubclass(cls, dict) and hasattr(cls, "__total__")


def _is_abc(origin: Any, name: str) -> bool:
    return getattr(origin, "__module__", None) == "collections.abc" and origin.__name__ == name


def _sequence_converter(kind: Any, item: Converter | None) -> Converter | None:
    if kind in (set, frozenset, tuple):
        if item is None:
            return kind  # type: ignore[no-any-return]
        return lambda value: kind(item(v) for v in value)
    if item is None:
        return None
    return lambda value: [item(v) for v in value]


def _object_converter(cls: type, converters: dict[str, Converter]) -> Converter:
    if _is_typeddict(cls):
        if not converters:
            return dict
        return lambda obj: {k: converters[k](v) if k in converters else v for k, v in obj.items()}

    def to_dataclass(obj: dict[str, Any]) -> Any:
        return cls(**{k: converters[k](v) if k in converters else v for k, v in obj.items()})

    return to_dataclass


def _first_that_works(converters: list[Converter]) -> Converter:
    def convert(value: Any) -> Any:
        for candidate in converters:
            try:
                return candidate(value)
            except (TypeError, ValueError):
                continue
        return value

    return convert


_SIMPLE: dict[Any, TypeSpec] = {
    str: TypeSpec({"type": "string"}),
    # JSON Schema counts 2.0 as an integer; the function still gets an int.
    int: TypeSpec({"type": "integer"}, lambda value: int(value) if type(value) is float else value),
    float: TypeSpec({"type": "number"}),
    bool: TypeSpec({"type": "boolean"}),
    list: TypeSpec({"type": "array"}),
    set: TypeSpec({"type": "array", "uniqueItems": True}, set),
    frozenset: TypeSpec({"type": "array", "uniqueItems": True}, frozenset),
    dict: TypeSpec({"type": "object"}),
}


def _simple(tp: Any) -> TypeSpec | None:
    """Scalars with a JSON form. Types from modules the program never imported cannot appear
    in its hints, so those modules are looked up, not imported (start-up time)."""
    spec = _SIMPLE.get(tp)
    if spec is not None or not isinstance(tp, type):
        return spec
    if tp is bytes:
        return TypeSpec({"type": "string", "contentEncoding": "base64"}, _b64decode)
    module = sys.modules.get(tp.__module__)
    name = tp.__name__
    if tp.__module__ == "datetime" and name in ("datetime", "date", "time"):
        kind = {"datetime": "date-time", "date": "date", "time": "time"}[name]
        return TypeSpec({"type": "string", "format": kind}, tp.fromisoformat)  # type: ignore[attr-defined]
    if tp.__module__ == "uuid" and name == "UUID":
        return TypeSpec({"type": "string", "format": "uuid"}, tp)
    if tp.__module__ == "pathlib" and module is not None and issubclass(tp, module.PurePath):
        return TypeSpec({"type": "string"}, tp)
    if tp.__module__ == "decimal" and name == "Decimal":
        return TypeSpec({"type": "number"}, lambda value: tp(str(value)))
    return None


def _b64decode(value: str) -> bytes:
    import base64

    return base64.b64decode(value)
