"""The pure-Python fast path of argument validation only ever accepts what jsonschema-rs accepts."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolwire import Param
from toolwire.tools.tool import Tool
from toolwire.tools.validation import ArgumentsInvalid, Validator, accepts, simple_schema

PRIMITIVES = ["string", "integer", "number", "boolean", "null"]

values = (
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5)
    | st.lists(st.integers(), max_size=2)
    | st.dictionaries(st.text(max_size=2), st.integers(), max_size=2)
)


@st.composite
def simple_schemas(draw: st.DrawFn) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(["a", "b", "c", "d"]), unique=True, max_size=4))
    properties = {name: {"type": draw(st.sampled_from(PRIMITIVES)), "description": "x"} for name in names}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = draw(st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), unique=True, max_size=3))
    if required:
        schema["required"] = required
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    return schema


@settings(max_examples=500, deadline=None)
@given(simple_schemas(), st.dictionaries(st.sampled_from(["a", "b", "c", "d", "e"]), values, max_size=5) | values)
def test_fast_path_never_accepts_what_jsonschema_rejects(schema: dict[str, Any], instance: Any) -> None:
    simple = simple_schema(schema)
    assert simple is not None
    if accepts(simple, instance):
        assert jsonschema_rs.validator_for(schema).is_valid(instance), (schema, instance)


def test_the_fast_path_is_used_only_for_simple_schemas() -> None:
    assert simple_schema(
        {"type": "object", "properties": {"t": {"type": "string", "description": "d"}}, "required": ["t"]}
    )
    for schema in (
        {"type": "object", "properties": {"t": {"type": "string", "minLength": 1}}},
        {"type": "object", "properties": {"t": {"type": ["string", "null"]}}},
        {"type": "object", "properties": {"t": {"$ref": "#/$defs/T"}}, "$defs": {"T": {}}},
        {"type": "object", "properties": {"t": {"enum": ["a"]}}},
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"type": "object", "$schema": "http://json-schema.org/draft-07/schema#"},
        {"type": "array"},
    ):
        assert simple_schema(schema) is None, schema


def test_simple_servers_do_not_need_the_compiled_validator() -> None:
    validator = Validator({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    assert validator.check({"text": "hi"}, "args") == {"text": "hi"}
    assert validator._compiled is None


def test_a_tool_flattens_its_schema_at_its_first_call_not_at_registration() -> None:
    # Read from the validator's state, not by patching simple_schema: in the compiled build
    # the call to it is bound when compiled, and a patch would not be seen.
    from toolwire import Tool
    from toolwire.tools import validation

    def add(a: int, b: int = 1) -> int:
        return a + b

    tool = Tool.from_function(add)
    validator = tool.input_validator
    assert (validator._flattened, validator.simple, validator._compiled) == (False, None, None)
    assert tool.validate_arguments({"a": 1}) == {"a": 1}
    assert validator._flattened and validator.simple == simple_schema(tool.input_schema) is not None
    assert validator._compiled is None  # the flat form accepted it
    assert tool.validate_arguments({"a": "2", "b": 3}) == {"a": 2, "b": 3}  # lenient
    with pytest.raises(validation.ArgumentsInvalid, match='"a" is a required property'):
        tool.validate_arguments({"b": 3})
    assert validator._compiled is not None  # the refusals came from jsonschema-rs


def test_schema_bombs_are_refused_and_real_schemas_are_not() -> None:
    from toolwire.tools.validation import MAX_SCHEMA_EXPANSION, SchemaError, compile_schema, schema_expansion

    levels = {f"l{n}": {"allOf": [{"$ref": f"#/$defs/l{n + 1}"}] * 2} for n in range(30)}
    levels["l30"] = {"type": "string"}
    with pytest.raises(SchemaError, match="too complex to check"):
        compile_schema({"$defs": levels, "$ref": "#/$defs/l0"})
    tree = {
        "$defs": {
            "node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}
        },
        "$ref": "#/$defs/node",
    }
    assert compile_schema(tree).is_valid({"children": [{"children": []}]})
    shared = {"$defs": {"point": {"type": "object", "properties": {"x": {"type": "number"}}}}}
    shared["properties"] = {f"p{n}": {"$ref": "#/$defs/point"} for n in range(500)}
    assert schema_expansion(shared, MAX_SCHEMA_EXPANSION) < MAX_SCHEMA_EXPANSION
    deep: dict[str, object] = {}
    node = deep
    for _ in range(3000):
        node["items"] = node = {}
    assert schema_expansion(deep, MAX_SCHEMA_EXPANSION) > MAX_SCHEMA_EXPANSION


def test_enum_and_alternative_errors_speak_of_the_allowed_values() -> None:
    def paint(
        color: Literal["red", "green", "blue", "cyan", "magenta"],
        size: Literal["s", "m", "l"] | None = None,
        count: int | None = None,
        percent: Annotated[int, Param(le=100)] | None = None,
        code: Literal[tuple(range(30))] = 0,  # type: ignore[valid-type]
    ) -> str:
        return ""

    tool = Tool.from_function(paint, lenient=False)

    def said(arguments: dict[str, Any]) -> str:
        with pytest.raises(ArgumentsInvalid) as caught:
            tool.validate_arguments(arguments)
        return str(caught.value).removeprefix("Invalid arguments for tool 'paint': ")

    assert said({"color": "pink"}) == '"pink" is not one of "red", "green", "blue", "cyan" or "magenta" (at \'color\')'
    assert said({"color": "red", "size": "xl"}) == '"xl" is not one of "s", "m", "l" or null (at \'size\')'
    assert said({"color": "red", "count": "x"}) == "\"x\" is not an integer or null (at 'count')"
    assert said({"color": "red", "percent": 500}) == "500 is greater than the maximum of 100 (at 'percent')"
    listed = ", ".join(str(n) for n in range(20))
    assert said({"color": "red", "code": 99}) == f"99 is not one of {listed} or 10 others (at 'code')"
