"""inputSchema and outputSchema from type hints and docstrings, and conversion back to Python."""

from __future__ import annotations
import __future__

import datetime
import enum
import functools
import typing
from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, Literal

import annotated_types
import pydantic
import pytest
from typing_extensions import TypedDict

from toolwire import Context, Param, Tool
from toolwire import ToolResult as ToolResultType
from toolwire.tools.signature import parse_docstring, type_hints
from toolwire.tools.validation import ArgumentsInvalid, SchemaError, Validator


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


@dataclass
class Point:
    """A point on the plane."""

    x: float
    y: float = 0.0


@dataclass
class Shape:
    name: str
    points: list[Point] = field(default_factory=list)
    color: Color = Color.RED


class Address(TypedDict, total=False):
    street: str
    city: str


class Person(pydantic.BaseModel):
    name: str = pydantic.Field(description="Full name")
    age: int = pydantic.Field(ge=0)
    address: Address | None = None


def schema_of(fn: Any) -> dict[str, Any]:
    return Tool.from_function(fn).input_schema


def test_primitives_defaults_and_required() -> None:
    def f(a: str, b: int, c: float = 1.5, d: bool = False, e: None = None) -> None: ...

    schema = schema_of(f)
    assert schema["type"] == "object"
    assert schema["required"] == ["a", "b"]
    props = schema["properties"]
    assert props["a"] == {"type": "string"}
    assert props["b"] == {"type": "integer"}
    assert props["c"] == {"type": "number", "default": 1.5}
    assert props["d"] == {"type": "boolean", "default": False}


def test_containers_optional_literal_enum() -> None:
    def f(
        tags: list[str],
        scores: dict[str, float],
        pair: tuple[int, str],
        unique: set[int],
        maybe: int | None = None,
        mode: Literal["fast", "slow"] = "fast",
        color: Color = Color.GREEN,
    ) -> None: ...

    props = schema_of(f)["properties"]
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["scores"] == {"type": "object", "additionalProperties": {"type": "number"}}
    assert props["pair"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert props["unique"] == {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}
    assert props["maybe"] == {"anyOf": [{"type": "integer"}, {"type": "null"}]}
    assert props["mode"] == {"type": "string", "enum": ["fast", "slow"], "default": "fast"}
    assert props["color"]["enum"] == ["red", "green"]
    assert props["color"]["default"] == "green"


def test_annotated_constraints_of_every_kind() -> None:
    def f(
        a: Annotated[int, Param(ge=1, le=100, description="how many")],
        b: Annotated[str, annotated_types.MinLen(2), annotated_types.MaxLen(5)],
        c: Annotated[float, pydantic.Field(gt=0, description="positive")],
        d: Annotated[str, "plain description", {"format": "email"}],
    ) -> None: ...

    props = schema_of(f)["properties"]
    assert props["a"] == {"type": "integer", "minimum": 1, "maximum": 100, "description": "how many"}
    assert props["b"] == {"type": "string", "minLength": 2, "maxLength": 5}
    assert props["c"] == {"type": "number", "exclusiveMinimum": 0, "description": "positive"}
    assert props["d"] == {"type": "string", "description": "plain description", "format": "email"}


def test_nested_dataclasses_typeddict_and_pydantic_use_defs() -> None:
    def f(shape: Shape, address: Address, person: Person) -> None: ...

    schema = schema_of(f)
    defs = schema["$defs"]
    assert schema["properties"]["shape"] == {"$ref": "#/$defs/Shape"}
    assert defs["Shape"]["properties"]["points"]["items"] == {"$ref": "#/$defs/Point"}
    assert defs["Point"]["required"] == ["x"]
    assert defs["Point"]["description"] == "A point on the plane."
    assert "required" not in defs["Address"]
    assert defs["Person"]["properties"]["age"]["minimum"] == 0
    assert "Address" in defs  # shared by the TypedDict parameter and the pydantic model


async def test_arguments_are_converted_to_the_declared_types() -> None:
    seen: dict[str, Any] = {}

    def f(shape: Shape, person: Person, when: datetime.date, color: Color, pair: tuple[int, int]) -> str:
        seen.update(shape=shape, person=person, when=when, color=color, pair=pair)
        return "ok"

    tool = Tool.from_function(f)
    arguments = tool.validate_arguments(
        {
            "shape": {"name": "tri", "points": [{"x": 1, "y": 2}]},
            "person": {"name": "Ada", "age": 36},
            "when": "2024-05-01",
            "color": "green",
            "pair": [1, 2],
        }
    )
    await tool.call(arguments)
    assert seen["shape"] == Shape("tri", [Point(1, 2)])
    assert seen["person"] == Person(name="Ada", age=36)
    assert seen["when"] == datetime.date(2024, 5, 1)
    assert seen["color"] is Color.GREEN
    assert seen["pair"] == (1, 2)


def test_docstring_styles() -> None:
    google = parse_docstring(
        """Add two numbers.

        More detail here.

        Args:
            a: the first
                number, continued
            b (int): the second
        Returns:
            the sum
        """
    )
    assert google.description == "Add two numbers.\n\nMore detail here."
    assert google.params == {"a": "the first number, continued", "b": "the second"}
    sphinx = parse_docstring("Do it.\n\n:param x: the x\n:param int y: the y\n:returns: nothing")
    assert sphinx.params == {"x": "the x", "y": "the y"}
    numpy = parse_docstring("Do it.\n\nParameters\n----------\nx : int\n    the x value\n")
    assert numpy.params == {"x": "the x value"}
    chinese = parse_docstring("将两个数字相加。\n\n参数:\n    a: 第一个数字\n    b: 第二个数字\n")
    assert chinese.description == "将两个数字相加。"
    assert chinese.params == {"a": "第一个数字", "b": "第二个数字"}


def test_output_schema_rules() -> None:
    def text() -> str: ...
    def number() -> int: ...
    def point() -> Point: ...
    def anything() -> Any: ...

    assert Tool.from_function(text).output_schema is None
    assert Tool.from_function(anything).output_schema is None
    assert Tool.from_function(number).output_schema == {"type": "integer"}
    assert Tool.from_function(number).wrap_structured is True
    assert Tool.from_function(point).output_schema["type"] == "object"  # inlined, not a $ref
    assert Tool.from_function(point).wrap_structured is False
    assert Tool.from_function(text, structured_output=True).output_schema == {"type": "string"}


class Opaque:
    pass


def test_unsupported_types_fail_at_registration_with_the_type_named() -> None:
    def f(x: Opaque) -> None: ...

    with pytest.raises(TypeError, match="Opaque"):
        Tool.from_function(f)

    def g(*args: int) -> None: ...

    with pytest.raises(TypeError, match=r"\*args"):
        Tool.from_function(g)

    def h(x: dict[int, str]) -> None: ...

    with pytest.raises(TypeError, match="keys are strings"):
        Tool.from_function(h)


def test_context_parameter_is_not_in_the_schema() -> None:
    def f(x: int, ctx: Context) -> None: ...

    tool = Tool.from_function(f)
    assert list(tool.input_schema["properties"]) == ["x"]
    assert tool.wants_context


def test_lenient_validation_coerces_only_top_level_strings() -> None:
    def f(n: int, x: float, flag: bool, data: dict[str, int], items: list[int], name: str) -> None: ...

    tool = Tool.from_function(f)
    args = tool.validate_arguments(
        {"n": "5", "x": "2.5", "flag": "true", "data": '{"a": 1}', "items": "[1, 2]", "name": "bob"}
    )
    assert args == {"n": 5, "x": 2.5, "flag": True, "data": {"a": 1}, "items": [1, 2], "name": "bob"}
    with pytest.raises(ArgumentsInvalid, match="n"):
        tool.validate_arguments({"n": "five", "x": 1, "flag": True, "data": {}, "items": [], "name": "a"})
    with pytest.raises(ArgumentsInvalid):  # numbers are never turned into strings
        tool.validate_arguments({"n": 1, "x": 1, "flag": True, "data": {}, "items": [], "name": 7})
    with pytest.raises(ArgumentsInvalid):  # nested values are strict
        tool.validate_arguments({"n": 1, "x": 1, "flag": True, "data": {"a": "1"}, "items": [], "name": "a"})


def test_strict_tools_do_not_coerce() -> None:
    def f(n: int) -> None: ...

    with pytest.raises(ArgumentsInvalid, match="is not of type"):
        Tool.from_function(f, lenient=False).validate_arguments({"n": "5"})


def test_validation_messages_name_the_field_and_rule() -> None:
    def f(count: Annotated[int, Param(ge=1, le=10)], name: str) -> None: ...

    tool = Tool.from_function(f)
    with pytest.raises(ArgumentsInvalid) as caught:
        tool.validate_arguments({"count": 50})
    message = str(caught.value)
    assert "Invalid arguments for tool 'f'" in message
    assert "'name' is a required property" in message.replace('"', "'")
    assert "maximum of 10 (at 'count')" in message


def test_bad_schemas_are_refused_with_a_clear_error() -> None:
    with pytest.raises(SchemaError, match=r"meta-schema|unsupported"):
        Validator({"$schema": "https://example.com/unknown", "type": "object"}).compile()
    with pytest.raises(SchemaError, match=r"Retriev|retriev"):  # network $ref never fetched
        Validator({"$ref": "https://example.com/schema.json"}).compile()


def test_unresolvable_hints_fail_at_registration() -> None:
    def f(x: Undefined) -> None: ...  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(TypeError, match="Undefined"):
        Tool.from_function(f)


async def test_integral_floats_reach_int_parameters_as_int() -> None:
    seen: list[object] = []

    def f(n: int, many: list[int]) -> None:
        seen.extend([n, *many])

    tool = Tool.from_function(f)
    await tool.call(tool.validate_arguments({"n": 2.0, "many": [1e2, 3]}))
    assert seen == [2, 100, 3] and all(type(value) is int for value in seen)


def test_output_schema_from_a_type() -> None:
    def f() -> ToolResultType: ...

    tool = Tool.from_function(f, output_schema=Point)
    assert tool.output_schema is not None and tool.output_schema["required"] == ["x"]


def test_a_mapping_of_anything_says_so() -> None:

    from toolwire.tools.tool import Tool

    def keep(data: dict[str, Any]) -> str:
        return "kept"

    assert Tool.from_function(keep).input_schema["properties"]["data"] == {
        "type": "object",
        "additionalProperties": True,
    }


#: Functions whose hints ``type_hints`` reads directly or hands to ``typing``; each is compiled
#: with and without ``from __future__ import annotations`` (where both compile).
HINTED = [
    "def f(a: str, b: int = 1, c: 'float' = 1.0, d: None = None, e: 'None' = None) -> 'None': ...",
    "def f(a: Point, b: 'Point', c: 'Shape') -> Color: ...",
    "def f(a: list[int], b: 'dict[str, int]', c: 'int | None', d: 'Annotated[int, 1]') -> Any: ...",
    "def f(a: 'str') -> None: ...",
    "def f(a: 'str', b: 'bytes') -> 'shadowed': ...",
    "def f(a: 'Generic') -> None: ...",
    "def f(a: 'True') -> None: ...",
    "def f(a: 'class') -> None: ...",
    "def f(a: 'Missing') -> None: ...",
    "def f(a: ' str') -> None: ...",
]


def _outcome(read: Any, function: Any) -> Any:
    try:
        return read(function)
    except Exception as exc:
        return type(exc), str(exc)


@pytest.mark.parametrize("future", [False, True])
@pytest.mark.parametrize("source", HINTED)
def test_type_hints_are_what_typing_gives_errors_included(source: str, future: bool) -> None:
    def typing_hints(function: Any) -> dict[str, Any]:
        return typing.get_type_hints(function, include_extras=True)

    names = {"Point": Point, "Shape": Shape, "Color": Color, "Any": Any, "Annotated": Annotated}
    namespaces = [
        {**names, "Generic": typing.Generic, "shadowed": int, "str": bytes, "class": int, " str": int},
        {**names, "__builtins__": {"bytes": float}},  # builtins of one's own: no str
    ]
    for namespace in namespaces:
        try:
            flags = __future__.annotations.compiler_flag if future else 0
            exec(compile(source, "<hinted>", "exec", flags=flags, dont_inherit=True), namespace)
        except (NameError, TypeError):
            continue  # evaluated at definition time: the name is missing
        function: Any = namespace["f"]
        wrapped = functools.wraps(function)(lambda: None)
        for candidate in (function, wrapped):
            assert _outcome(type_hints, candidate) == _outcome(typing_hints, candidate), source


def test_a_hint_typing_refuses_still_fails_at_registration() -> None:
    def f(x: Generic) -> None: ...  # type: ignore[valid-type]

    with pytest.raises(TypeError, match="Generic"):
        Tool.from_function(f)


def test_hints_naming_plain_classes_are_read_without_evaluating_them(monkeypatch: pytest.MonkeyPatch) -> None:
    def f(a: str, b: Point, c: None = None) -> None: ...

    monkeypatch.setattr(typing, "get_type_hints", None)
    assert type_hints(f) == {"a": str, "b": Point, "c": type(None), "return": type(None)}


def test_header_annotations_are_found_and_checked_at_registration() -> None:
    def mirrored(region: Annotated[str, {"x-mcp-header": "Region", "examples": [object()]}], n: int = 1) -> None: ...

    assert Tool.from_function(mirrored).header_parameters == {"Region": ("region",)}

    def plain(region: str, n: int = 1) -> None: ...

    assert Tool.from_function(plain).header_parameters == {}

    def twice(a: Annotated[str, {"x-mcp-header": "Region"}], b: Annotated[int, {"x-mcp-header": "region"}]) -> None: ...

    with pytest.raises(ValueError, match="tool 'twice': x-mcp-header 'region' appears twice"):
        Tool.from_function(twice)

    def listed(items: Annotated[list[str], {"x-mcp-header": "Items"}]) -> None: ...

    with pytest.raises(ValueError, match="tool 'listed': x-mcp-header 'Items' is on a 'array'"):
        Tool.from_function(listed)
