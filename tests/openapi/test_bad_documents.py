"""Bad documents never crash the mapping: what is wrong with the whole document is an
OpenAPIError; what is wrong with one operation skips that operation with a reason that names
what and where, and the others are mapped. Then the same over random documents."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.openapi_mapping import assert_valid, document, json_body, mapped, ok, one, skipped_reason
from toolwire.openapi import OpenAPIError, map_document
from toolwire.openapi.schemas import MAX_DEPTH

REF = "#/components/schemas/"


def test_cycles_of_any_length_are_kept_in_defs() -> None:
    schemas = {
        "Self": {"type": "object", "properties": {"me": {"$ref": REF + "Self"}}},
        "A": {"type": "object", "properties": {"b": {"$ref": REF + "B"}}},
        "B": {"type": "array", "items": {"$ref": REF + "C"}},
        "C": {"anyOf": [{"$ref": REF + "A"}, {"type": "null"}]},
    }
    body = {"type": "object", "properties": {"self": {"$ref": REF + "Self"}, "a": {"$ref": REF + "A"}}}
    operation = one({"requestBody": json_body(body), "responses": ok("ok", {"$ref": REF + "C"})}, schemas=schemas)
    assert set(operation.input_schema["$defs"]) == {"Self", "A", "B", "C"}
    assert operation.input_schema["properties"]["a"] == {"$ref": "#/$defs/A"}
    assert operation.output_schema is not None and operation.output_wrapped


def test_a_reference_to_itself_and_references_in_a_loop_are_skipped() -> None:
    reason = skipped_reason(
        {"requestBody": json_body({"$ref": REF + "Loop"})}, schemas={"Loop": {"$ref": REF + "Loop"}}
    )
    assert reason == "the request body's application/json schema: references lead to references more than 32 times"
    doc = document({"/x": {"get": {"parameters": [{"$ref": "#/components/parameters/p"}], "responses": ok()}}})
    doc["components"]["parameters"] = {
        "p": {"$ref": "#/components/parameters/q"},
        "q": {"$ref": "#/components/parameters/p"},
    }
    assert "references lead to references" in mapped(doc).skipped[0].reason


@pytest.mark.parametrize(
    ("operation", "reason"),
    [
        (
            {"requestBody": json_body({"$ref": REF + "Missing"})},
            "refers to '#/components/schemas/Missing', which is not in the document",
        ),
        (
            {"requestBody": json_body({"type": "object", "properties": {"a": {"$ref": REF + "Pet"}}})},
            "#/components/schemas/Pet.properties.owner refers to '#/components/schemas/Owner', which is not in the document",
        ),
        (
            {"responses": ok("ok", {"$ref": REF + "Gone"})},
            "the 200 response's schema refers to '#/components/schemas/Gone'",
        ),
        (
            {"parameters": [{"$ref": "#/components/parameters/limit"}]},
            "refers to '#/components/parameters/limit', which is not",
        ),
        (
            {"requestBody": {"$ref": "#/components/requestBodies/Pet"}},
            "the request body refers to '#/components/requestBodies/Pet'",
        ),
        ({"requestBody": json_body({"$ref": "other.yaml#/Pet"})}, "refers to 'other.yaml#/Pet', outside the document"),
        ({"requestBody": json_body({"$ref": 7})}, "refers to '7', outside the document"),
    ],
)
def test_a_missing_or_external_reference_skips_the_operation_naming_it(operation: dict[str, Any], reason: str) -> None:
    schemas = {"Pet": {"type": "object", "properties": {"owner": {"$ref": REF + "Owner"}}}}
    assert reason in skipped_reason(operation, schemas=schemas)


def test_a_skip_leaves_the_other_operations_mapped() -> None:
    doc = document(
        {
            "/good": {"get": {"operationId": "good", "responses": ok()}},
            "/bad": {"post": {"requestBody": json_body({"$ref": REF + "Missing"}), "responses": ok()}},
            "/also": {"get": {"operationId": "also", "responses": ok("ok", {"$ref": REF + "Fine"})}},
        },
        {"Fine": {"type": "object"}},
    )
    result = mapped(doc)
    assert [operation.name for operation in result.operations] == ["good", "also"]
    assert [(skip.method, skip.path) for skip in result.skipped] == [("POST", "/bad")]


@pytest.mark.parametrize(
    ("operation", "reason"),
    [
        ({"parameters": {"limit": {}}}, "the operation's parameters are an object, not a list"),
        ({"parameters": ["limit"]}, "the operation's parameter 0 is a string, not an object"),
        (
            {"parameters": [{"name": "limit"}]},
            "the parameter 'limit' has 'in' 'None', not path, query, header or cookie",
        ),
        ({"parameters": [{"in": "query"}]}, "the operation's parameter 0 has no name"),
        ({"parameters": [{"name": "q", "in": "body"}]}, "has 'in' 'body'"),
        (
            {"parameters": [{"name": "q", "in": "query", "content": {"application/json": {}}}]},
            "the parameter 'q' is described by 'content', which toolwire does not send yet",
        ),
        (
            {"parameters": [{"name": "q", "in": "query", "schema": "string"}]},
            "the parameter 'q''s schema: a schema is an object, not a string",
        ),
        (
            {"requestBody": json_body({"type": "object", "properties": []})},
            "schema.properties is a list, not an object of schemas",
        ),
        (
            {"requestBody": json_body({"type": "object", "required": "name"})},
            "schema.required is a string, not a list of property names",
        ),
        ({"requestBody": json_body({"type": "thing"})}, "schema.type is 'thing': a type is one of array, boolean"),
        ({"requestBody": json_body({"type": "string", "maxLength": -1})}, "schema.maxLength is '-1', not a count"),
        ({"requestBody": json_body({"type": "string", "maxLength": True})}, "schema.maxLength is 'True', not a count"),
        ({"requestBody": json_body({"type": "number", "minimum": "0"})}, "schema.minimum is a string, not a number"),
        ({"requestBody": json_body({"enum": "a"})}, "schema.enum is a string, not a list"),
        ({"requestBody": json_body({"allOf": []})}, "schema.allOf is empty, not a list of schemas"),
        (
            {"requestBody": json_body({"type": "string", "description": 5})},
            "schema.description is a number, not a string",
        ),
        ({"requestBody": {"required": True}}, "the request body is an object without a 'content' object"),
        ({"requestBody": "json"}, "the request body is a string without a 'content' object"),
    ],
)
def test_wrong_types_skip_the_operation_saying_where(operation: dict[str, Any], reason: str) -> None:
    assert reason in skipped_reason(operation)


def test_what_cannot_be_an_operation_is_skipped_and_what_is_optional_is_ignored() -> None:
    doc = document(
        {
            "/list": ["get"],
            "no-slash": {"get": {"responses": ok()}},
            "/string": {"get": "listThings", "summary": "a path item's summary is not an operation"},
            "/odd": {
                "get": {
                    "operationId": ["x"],
                    "summary": 5,
                    "tags": "pets",
                    "deprecated": "yes",
                    "responses": ["200"],
                }
            },
            "/missing/{id}": {"get": {"responses": ok()}},
        }
    )
    doc["info"] = "not an object"
    doc["servers"] = {"url": "https://example.com"}
    result = mapped(doc)
    assert [(skip.method, skip.path, skip.reason) for skip in result.skipped] == [
        ("*", "/list", "the path item is a list, not an object"),
        ("*", "no-slash", "the path does not begin with '/'"),
        ("GET", "/string", "the operation is a string, not an object"),
        ("GET", "/missing/{id}", "the path has {id} but no parameter describes it (add one with 'in: path')"),
    ]
    (odd,) = result.operations
    assert (odd.name, odd.title, odd.tags, odd.output_schema, odd.description) == ("get_odd", None, (), None, None)
    assert (result.title, result.servers) == ("", [])


def test_a_schema_nested_without_end_is_skipped() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(MAX_DEPTH * 20):
        deep = {"type": "array", "items": deep}
    assert f"nested more than {MAX_DEPTH} levels deep" in skipped_reason({"requestBody": json_body(deep)})


def test_ten_megabyte_descriptions_everywhere_are_cut() -> None:
    huge = "x" * 10_000_000
    body = {"type": "object", "description": huge, "properties": {"a": {"type": "string", "description": huge}}}
    operation = one(
        {
            "summary": huge,
            "description": huge,
            "parameters": [{"name": "q", "in": "query", "description": huge, "schema": {"type": "string"}}],
            "requestBody": json_body(body),
        }
    )
    assert len(str(operation)) < 20_000
    doc = document({})
    doc["info"] = {"title": huge, "version": huge, "description": huge}
    result = map_document(doc)
    assert len(result.title) + len(result.version) + len(result.description or "") < 10_000


def test_duplicate_operation_ids_get_distinct_names() -> None:
    doc = document({f"/p{index}": {"get": {"operationId": "same", "responses": ok()}} for index in range(5)})
    assert [operation.name for operation in mapped(doc).operations] == ["same", "same_2", "same_3", "same_4", "same_5"]


def test_the_document_is_not_changed() -> None:
    doc = document(
        {
            "/x/{id}": {
                "put": {
                    "parameters": [{"name": "id", "in": "path"}],
                    "requestBody": json_body({"$ref": REF + "A"}),
                    "responses": ok("ok", {"$ref": REF + "A"}),
                }
            }
        },
        {
            "A": {
                "type": "object",
                "nullable": True,
                "properties": {"id": {"type": "integer", "readOnly": True}, "x": {"example": 1}},
            }
        },
    )
    before = copy.deepcopy(doc)
    mapped(doc)
    assert doc == before


# Random documents: whatever they hold, an OpenAPIError or operations that are valid.

KEYS = [
    "type", "properties", "items", "required", "$ref", "nullable", "allOf", "oneOf", "discriminator", "enum",
    "name", "in", "schema", "content", "application/json", "multipart/form-data", "description", "readOnly",
    "minimum", "exclusiveMinimum", "parameters", "requestBody", "responses", "200", "get", "A", "propertyName",
    "mapping", "additionalProperties", "format",
]  # fmt: skip
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.sampled_from(["", "string", "object", "#/components/schemas/A", "path", "query"]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.sampled_from(KEYS), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operation=JSON, schema=JSON, version=st.sampled_from(["3.0.3", "3.1.0"]))
def test_random_documents_never_crash(operation: Any, schema: Any, version: str) -> None:
    doc = document(
        {"/x/{id}": {"get": operation, "post": {"requestBody": json_body(schema), "responses": ok("ok", schema)}}},
        {"A": schema},
        version,
    )
    try:
        result = map_document(doc)
    except OpenAPIError:
        return
    assert_valid(result.operations)
    assert len(result.operations) + len(result.skipped) == 2
