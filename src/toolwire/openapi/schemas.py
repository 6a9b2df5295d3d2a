"""OpenAPI schemas as JSON Schema 2020-12, the dialect of MCP's ``inputSchema`` and ``outputSchema``.

Each schema is rebuilt keyword by keyword; what is not JSON Schema is left out:

- ``$ref`` (local: ``#/...``). A target that refers to nothing else is written in place; one
  that does (and so every cycle) is kept once under the tool's ``$defs`` and referred to as
  ``{"$ref": "#/$defs/Name"}``: a schema never grows without bound, whatever the document.
  Each target is converted once per document and direction, however many operations use it.
- OpenAPI 3.0: ``nullable: true`` adds ``"null"`` to ``type`` (and ``None`` to ``enum``), or
  becomes ``anyOf [..., {"type": "null"}]`` where there is no type; a boolean
  ``exclusiveMinimum``/``exclusiveMaximum`` becomes the number it qualifies; siblings of
  ``$ref`` are ignored, as 3.0 says (3.1 keeps them).
- ``example`` becomes ``examples``; ``discriminator``, ``xml``, ``externalDocs``, ``x-...``
  and any other keyword JSON Schema does not know are dropped, but a discriminator's mapping
  becomes a ``const`` on its property in each ``oneOf``/``anyOf`` branch, so the model sees
  which value picks which branch.
- Inputs leave ``readOnly`` properties out, outputs ``writeOnly`` ones.
- A description longer than :data:`MAX_SCHEMA_DESCRIPTION` characters is cut, with a note.

What cannot be converted (a missing or external reference, a keyword of the wrong type, a
schema nested deeper than :data:`MAX_DEPTH`) raises :class:`Unusable`, whose message says
where: the mapping skips the operation with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

#: Which side of the call a schema describes: ``readOnly`` properties are left out of inputs,
#: ``writeOnly`` ones out of outputs.
Direction = Literal["input", "output"]

MAX_DEPTH = 64
MAX_SCHEMA_DESCRIPTION = 2_000
#: Hops a chain of references (``$ref`` to a ``$ref``...) may take.
MAX_HOPS = 32

_SCHEMA_MAPS = ("properties", "patternProperties", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
#: Keywords whose value holds schemas.
_SUBSCHEMAS = frozenset(
    {
        *_SCHEMA_MAPS,
        *_SCHEMA_LISTS,
        *("additionalProperties", "items", "not", "contains", "propertyNames", "if", "then", "else"),
        *("unevaluatedItems", "unevaluatedProperties", "contentSchema"),
    }
)
_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})
#: Keywords that describe without constraining: these merge into an inlined ``$ref`` target.
_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly"})
_COMPONENT_SCHEMAS = "#/components/schemas/"


class Unusable(Exception):
    """What makes an operation impossible to map; the message is the reason given for the skip."""


def cut(text: str, most: int) -> str:
    """``text``, or its first ``most`` characters (at a space when one is near) and a note."""
    if len(text) <= most:
        return text
    head = text[:most]
    space = head.rfind(" ", most - 200)
    return f"{head[:space] if space > 0 else head} [... cut: {len(text)} characters in all]"


def kind(value: Any) -> str:
    """What ``value`` is, in JSON's words (for messages)."""
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "a list", str: "a string", type(None): "null"}.get(type(value), "a number")


class Schemas:
    """The converter for one document: :meth:`convert` a schema, :meth:`defs` the ``$defs``
    it needs, :meth:`resolve` any other reference (parameters, bodies, responses)."""

    def __init__(self, document: dict[str, Any], openapi30: bool) -> None:
        self.document = document
        self.openapi30 = openapi30
        #: Converted targets by (pointer, direction): the schema, the targets it refers to
        #: through ``$defs`` and whether it refers to nothing; or why it cannot be converted.
        self.targets: dict[tuple[str, Direction], tuple[Any, frozenset[str], bool] | Unusable] = {}
        #: ``$ref`` met so far (a target that meets none while converted refers to nothing).
        self.references = 0
        self.in_progress: set[tuple[str, Direction]] = set()
        self.closures: dict[tuple[str, Direction], frozenset[str]] = {}

    def resolve(self, value: Any, where: str) -> Any:
        """``value``, or what its ``$ref`` (chain) points at; :class:`Unusable` for a missing,
        external or endless reference."""
        for _ in range(MAX_HOPS):
            if not (isinstance(value, dict) and "$ref" in value):
                return value
            value = self.target(value["$ref"], where)
        raise Unusable(f"{where}: references lead to references more than {MAX_HOPS} times")

    def target(self, ref: Any, where: str) -> Any:
        """What the local reference ``ref`` points at; :class:`Unusable` if nothing."""
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise Unusable(
                f"{where} refers to {str(ref)[:200]!r}, outside the document: toolwire follows local references only"
            )
        node: Any = self.document
        for part in ref[1:].split("/")[1:] if ref != "#" else []:
            key = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                raise Unusable(f"{where} refers to {ref[:200]!r}, which is not in the document")
        return node

    def convert(self, schema: Any, direction: Direction, where: str, uses: set[str], depth: int = 0) -> Any:
        """``schema`` as JSON Schema 2020-12; the ``$defs`` names it refers to are added to ``uses``."""
        if isinstance(schema, bool):
            return schema
        if not isinstance(schema, dict):
            raise Unusable(f"{where}: a schema is an object, not {kind(schema)}")
        if depth > MAX_DEPTH:
            raise Unusable(f"{where}: the schema is nested more than {MAX_DEPTH} levels deep")
        if "$ref" in schema:
            return self._reference(schema, direction, where, uses, depth)
        out: dict[str, Any] = {}
        for keyword, value in schema.items():
            check = _CHECKS.get(keyword)
            if check is not None:
                checked = check(value, where, keyword)
                if checked is not _DROP:
                    out[keyword] = checked
            elif keyword in _SUBSCHEMAS:
                self._subschemas(out, keyword, value, schema, direction, f"{where}.{keyword}", uses, depth)
            elif keyword == "example" and "examples" not in schema:
                out["examples"] = [value]
        for keyword, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if schema.get(keyword) is True and bound in out:  # OpenAPI 3.0's form
                out[keyword] = out.pop(bound)
        if "required" in out and "properties" in out:  # a property left out is no longer required
            left_out = set(schema["properties"]) - set(out["properties"])
            if left_out:
                out["required"] = [name for name in out["required"] if name not in left_out]
        if self.openapi30 and schema.get("nullable") is True:
            out = _nullable(out)
        return out

    def convert_top(self, schema: Any, direction: Direction, where: str, uses: set[str]) -> Any:
        """:meth:`convert`, but a ``$ref`` on top is replaced by its target (converted once per
        document): the top of an input or output schema is the object itself."""
        ref = schema.get("$ref") if isinstance(schema, dict) else None
        if ref is None:
            return self.convert(schema, direction, where, uses)
        self._converted(ref, direction, where)
        found = self.targets[(ref, direction)]
        assert not isinstance(found, Unusable)  # _converted raised it
        uses |= found[1]
        return found[0]

    def _subschemas(
        self,
        out: dict[str, Any],
        keyword: str,
        value: Any,
        schema: dict[str, Any],
        direction: Direction,
        where: str,
        uses: set[str],
        depth: int,
    ) -> None:
        """Writes ``keyword`` (of ``schema``), whose value holds schemas, converted into ``out``."""
        if keyword in _SCHEMA_MAPS:
            if not isinstance(value, dict):
                raise Unusable(f"{where} is {kind(value)}, not an object of schemas")
            left_out = "readOnly" if direction == "input" else "writeOnly"
            converted = out[keyword] = {}
            for name, item in value.items():
                place = f"{where}.{name}"
                if keyword != "properties" or not self._flagged(item, left_out, place):
                    converted[name] = self.convert(item, direction, place, uses, depth + 1)
        elif keyword in _SCHEMA_LISTS:
            if keyword in ("oneOf", "anyOf") and isinstance(schema.get("discriminator"), dict):
                value = self._discriminated(value, schema["discriminator"])
            out[keyword] = self._list(value, direction, where, uses, depth)
        elif isinstance(value, list) and keyword == "items":  # draft 4's tuple form
            out["prefixItems"] = self._list(value, direction, where, uses, depth)
        else:
            out[keyword] = self.convert(value, direction, where, uses, depth + 1)

    def _list(self, value: Any, direction: Direction, where: str, uses: set[str], depth: int) -> list[Any]:
        if not isinstance(value, list) or not value:
            raise Unusable(f"{where} is {kind(value) if value != [] else 'empty'}, not a list of schemas")
        return [self.convert(item, direction, f"{where}[{index}]", uses, depth + 1) for index, item in enumerate(value)]

    def _flagged(self, schema: Any, flag: str, where: str) -> bool:
        """Whether ``schema`` (or what it refers to) is marked ``flag`` (``readOnly``/``writeOnly``)."""
        if isinstance(schema, dict) and schema.get(flag) is True:
            return True
        target = self.resolve(schema, where)
        return isinstance(target, dict) and target.get(flag) is True

    def _reference(self, schema: dict[str, Any], direction: Direction, where: str, uses: set[str], depth: int) -> Any:
        """A ``$ref`` schema: the target in place when it refers to nothing, else ``$ref`` to ``$defs``."""
        ref = schema["$ref"]
        self.references += 1
        target = self._converted(ref, direction, where)
        siblings: dict[str, Any] = {}
        if not self.openapi30:
            siblings = self.convert({k: v for k, v in schema.items() if k != "$ref"}, direction, where, uses, depth + 1)
        if target is None:
            uses.add(ref)
            return {"$ref": "#/$defs/" + _pointer_part(def_name(ref)), **siblings}
        if not siblings:
            return target
        if set(siblings) <= _ANNOTATIONS and isinstance(target, dict):
            return {**target, **siblings}
        return {**siblings, "allOf": [*siblings.get("allOf", []), target]}

    def _converted(self, ref: Any, direction: Direction, where: str) -> Any:
        """The converted target of ``ref`` if it refers to nothing else (to be written in
        place), else ``None`` (to be referred to through ``$defs``)."""
        key = (ref, direction)
        if key in self.in_progress:
            return None
        found = self.targets.get(key)
        if found is None:
            raw = self.target(ref, where)
            self.in_progress.add(key)
            references = self.references
            try:
                used: set[str] = set()
                converted = self.convert(raw, direction, f"{str(ref)[:200]}", used)
                found = (converted, frozenset(used), self.references == references)
            except Unusable as exc:
                found = exc
            finally:
                self.in_progress.discard(key)
            self.targets[key] = found
        if isinstance(found, Unusable):
            raise Unusable(str(found))
        return found[0] if found[2] else None

    def defs(self, uses: set[str], direction: Direction) -> dict[str, Any]:
        """The ``$defs`` a schema that refers to ``uses`` needs (and what those refer to)."""
        names: set[str] = set()
        for ref in uses:
            names |= self._closure(ref, direction)
        return {def_name(ref): self._schema_of(ref, direction) for ref in sorted(names)}

    def _schema_of(self, ref: str, direction: Direction) -> Any:
        found = self.targets[(ref, direction)]
        assert not isinstance(found, Unusable)
        return found[0]

    def _closure(self, ref: str, direction: Direction) -> frozenset[str]:
        key = (ref, direction)
        closure = self.closures.get(key)
        if closure is None:
            seen, todo = {ref}, [ref]
            while todo:
                found = self.targets[(todo.pop(), direction)]
                assert not isinstance(found, Unusable)
                for used in found[1] - seen:
                    seen.add(used)
                    todo.append(used)
            closure = self.closures[key] = frozenset(seen)
        return closure

    def _discriminated(self, branches: Any, discriminator: dict[str, Any]) -> Any:
        """``branches`` with the discriminator's value as a ``const`` on its property in each
        branch that is a reference (by the mapping, else the target's name)."""
        prop, mapping = discriminator.get("propertyName"), discriminator.get("mapping", {})
        if not isinstance(prop, str) or not isinstance(branches, list) or not isinstance(mapping, dict):
            return branches
        values: dict[str, list[str]] = {}
        for value, target in mapping.items():
            if isinstance(target, str):
                values.setdefault(target if target.startswith("#") else _COMPONENT_SCHEMAS + target, []).append(value)
        marked = []
        for branch in branches:
            ref = branch.get("$ref") if isinstance(branch, dict) else None
            if not isinstance(ref, str):
                marked.append(branch)
                continue
            named = values.get(ref) or [ref.rpartition("/")[2]]
            const = {"const": named[0]} if len(named) == 1 else {"enum": named}
            marked.append({"allOf": [branch, {"properties": {prop: const}}]})
        return marked


def def_name(ref: str) -> str:
    """The key a reference's target has under ``$defs``: a component schema's name, else the pointer."""
    return ref[len(_COMPONENT_SCHEMAS) :] if ref.startswith(_COMPONENT_SCHEMAS) else ref[1:]


def _pointer_part(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


#: What :meth:`Schemas.convert` leaves out of the schema it writes.
_DROP = object()


def _text(value: Any, where: str, keyword: str) -> Any:
    if not isinstance(value, str):
        raise Unusable(f"{where}.{keyword} is {kind(value)}, not a string")
    return cut(value, MAX_SCHEMA_DESCRIPTION) if keyword == "description" else value


def _count(value: Any, where: str, keyword: str) -> Any:
    if type(value) is not int or value < 0:  # a boolean is not a count
        raise Unusable(f"{where}.{keyword} is {str(value)[:40]!r}, not a count (a whole number, 0 or more)")
    return value


def _number(value: Any, where: str, keyword: str) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Unusable(f"{where}.{keyword} is {kind(value)}, not a number")
    return value


def _exclusive(value: Any, where: str, keyword: str) -> Any:
    """A number; OpenAPI 3.0's boolean qualifies ``minimum``/``maximum`` (see :meth:`Schemas.convert`)."""
    return _DROP if isinstance(value, bool) else _number(value, where, keyword)


def _flag(value: Any, where: str, keyword: str) -> Any:
    if not isinstance(value, bool):
        raise Unusable(f"{where}.{keyword} is {kind(value)}, not true or false")
    return value


def _any(value: Any, where: str, keyword: str) -> Any:
    return value


def _values(value: Any, where: str, keyword: str) -> Any:
    if not isinstance(value, list):
        raise Unusable(f"{where}.{keyword} is {kind(value)}, not a list")
    return value


def _names(value: Any, where: str, keyword: str) -> Any:
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise Unusable(f"{where}.{keyword} is {kind(value)}, not a list of property names")
    return list(dict.fromkeys(value))


def _dependent(value: Any, where: str, keyword: str) -> Any:
    if not isinstance(value, dict):
        raise Unusable(f"{where}.{keyword} is {kind(value)}, not an object")
    return {name: _names(names, f"{where}.{keyword}", name) for name, names in value.items()}


def _type(value: Any, where: str, keyword: str) -> Any:
    if isinstance(value, str) and value in _TYPES:
        return value
    if not isinstance(value, list) or not value or not all(isinstance(t, str) and t in _TYPES for t in value):
        raise Unusable(f"{where}.type is {str(value)[:100]!r}: a type is one of {', '.join(sorted(_TYPES))} or a list")
    return list(dict.fromkeys(value))


#: The keywords whose value is not a schema, with the check (and conversion) of their value;
#: other keywords than these and :data:`_SUBSCHEMAS` are left out (``example`` aside).
_CHECKS: dict[str, Callable[[Any, str, str], Any]] = {
    **dict.fromkeys(("title", "description", "pattern", "format", "contentMediaType", "contentEncoding"), _text),
    **dict.fromkeys(("$comment",), _text),
    **dict.fromkeys(("maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties"), _count),
    **dict.fromkeys(("minContains", "maxContains"), _count),
    **dict.fromkeys(("minimum", "maximum", "multipleOf"), _number),
    **dict.fromkeys(("exclusiveMinimum", "exclusiveMaximum"), _exclusive),
    **dict.fromkeys(("uniqueItems", "deprecated", "readOnly", "writeOnly"), _flag),
    **dict.fromkeys(("const", "default"), _any),
    **dict.fromkeys(("enum", "examples"), _values),
    "type": _type,
    "required": _names,
    "dependentRequired": _dependent,
}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also accepts ``null`` (OpenAPI 3.0's ``nullable: true``)."""
    kind_ = schema.get("type")
    if isinstance(kind_, str | list):
        types = [kind_] if isinstance(kind_, str) else kind_
        schema = {**schema, "type": types if "null" in types else [*types, "null"]}
        if isinstance(schema.get("enum"), list) and None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
        return schema
    if any(key in schema for key in ("allOf", "anyOf", "oneOf", "$ref", "enum", "const")):
        return {"anyOf": [schema, {"type": "null"}]}
    return schema
