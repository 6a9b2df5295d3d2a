"""The mapping, rule by rule, as docs/openapi-mapping.md's table states it: names, descriptions,
arguments (parameters and bodies), annotations, outputs and tags."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.openapi_mapping import document, json_body, mapped, ok, one, skipped_reason
from toolwire.openapi import Body
from toolwire.openapi.mapping import MAX_DESCRIPTION
from toolwire.openapi.names import MAX_LENGTH


def names_of(paths: dict[str, Any]) -> list[str]:
    return [operation.name for operation in mapped(document(paths)).operations]


# Names


@pytest.mark.parametrize(
    ("operation_id", "method", "path", "name"),
    [
        ("listPets", "get", "/pets", "listPets"),
        (None, "get", "/pets/{petId}", "get_pets_petId"),
        (None, "delete", "/", "delete"),
        ("repos/get-content", "get", "/x", "repos_get-content"),
        ("list pets (all)", "get", "/x", "list_pets_all"),
        ("宠物", "get", "/pets", "get_pets"),  # nothing usable left: the method and path
        (42, "post", "/v1/things.json", "post_v1_things.json"),  # not a string: ignored
    ],
)
def test_names_come_from_the_operation_id_else_the_method_and_path(
    operation_id: Any, method: str, path: str, name: str
) -> None:
    operation: dict[str, Any] = {"operationId": operation_id} if operation_id is not None else {}
    if "{petId}" in path:
        operation["parameters"] = [{"name": "petId", "in": "path", "schema": {"type": "integer"}}]
    assert one(operation, method, path).name == name


def test_long_names_keep_their_beginning_and_end_with_a_stable_hash() -> None:
    first, second = "a" * 200 + "First", "a" * 200 + "Second"
    paths = {"/one": {"get": {"operationId": first, "responses": ok()}}}
    paths["/two"] = {"get": {"operationId": second, "responses": ok()}}
    names = names_of(paths)
    assert [len(name) for name in names] == [MAX_LENGTH, MAX_LENGTH]
    assert names[0] != names[1] and all(name.startswith("a" * 100) for name in names)
    assert names_of(paths) == names  # the same document, the same names


def test_collisions_are_resolved_in_document_order() -> None:
    paths = {
        "/a": {"get": {"operationId": "fetch", "responses": ok()}},
        "/b": {"get": {"operationId": "fetch", "responses": ok()}},  # a duplicate operationId
        "/c": {"get": {"operationId": "fetch/", "responses": ok()}},  # cleaned into the same name
        "/d": {"get": {"operationId": "fetch_2", "responses": ok()}},  # asks for what /b was given
    }
    assert names_of(paths) == ["fetch", "fetch_2", "fetch_3", "fetch_2_2"]


# Descriptions and titles


def test_the_title_is_the_summary_and_the_description_both() -> None:
    operation = one({"summary": "List pets", "description": "All of them, by page."}, "get", "/pets")
    assert operation.title == "List pets"
    assert operation.description == "List pets\n\nAll of them, by page."
    assert one({"summary": "Same", "description": "Same"}, "get").description == "Same"
    assert one({"deprecated": True, "summary": "Old"}, "get").description == "Deprecated. Old"
    assert one({}, "get").description is None


def test_a_huge_description_is_cut_with_a_note() -> None:
    operation = one({"description": "word " * 1_999_999 + "words"}, "get")  # 10 MB
    assert operation.description is not None
    assert len(operation.description) < MAX_DESCRIPTION + 100
    assert operation.description.endswith("[... cut: 10000000 characters in all]")


# Arguments


def test_parameters_of_every_place_become_arguments() -> None:
    operation = one(
        {
            "parameters": [
                {"name": "petId", "in": "path", "schema": {"type": "integer"}, "description": "The pet"},
                {"name": "limit", "in": "query", "required": True, "schema": {"type": "integer", "maximum": 100}},
                {"name": "tags", "in": "query", "style": "pipeDelimited", "schema": {"type": "array"}},
                {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
                {"name": "session", "in": "cookie", "schema": {"type": "string"}},
                {"name": "Accept", "in": "header", "schema": {"type": "string"}},  # OpenAPI: ignored
            ]
        },
        "get",
        "/pets/{petId}",
    )
    schema = operation.input_schema
    assert schema["properties"] == {
        "petId": {"type": "integer", "description": "The pet"},
        "limit": {"type": "integer", "maximum": 100},
        "tags": {"type": "array"},
        "X-Trace": {"type": "string"},
        "session": {"type": "string"},
    }
    assert schema["required"] == ["petId", "limit"]  # a path parameter is always required
    places = {p.argument: (p.location, p.style, p.explode) for p in operation.parameters}
    assert places == {
        "petId": ("path", "simple", False),
        "limit": ("query", "form", True),
        "tags": ("query", "pipeDelimited", False),
        "X-Trace": ("header", "simple", False),
        "session": ("cookie", "form", True),
    }


def test_the_operation_s_parameters_replace_the_path_item_s() -> None:
    shared = [{"name": "q", "in": "query", "schema": {"type": "string"}}]
    own = [{"name": "q", "in": "query", "schema": {"type": "integer"}}]
    doc = document(
        {"/x": {"parameters": shared, "get": {"parameters": own, "responses": ok()}, "put": {"responses": ok()}}}
    )
    get, put = mapped(doc).operations
    assert get.input_schema["properties"]["q"] == {"type": "integer"}
    assert put.input_schema["properties"]["q"] == {"type": "string"}


def test_a_name_in_two_places_keeps_both() -> None:
    operation = one(
        {
            "parameters": [
                {"name": "id", "in": "path", "schema": {"type": "integer"}},
                {"name": "id", "in": "query", "schema": {"type": "string"}},
                {"name": "id", "in": "header", "schema": {"type": "string"}},
            ],
            "requestBody": json_body({"type": "object", "properties": {"id": {"type": "string"}, "name": {}}}),
        },
        "put",
        "/things/{id}",
    )
    where = {p.argument: (p.location, p.name) for p in operation.parameters}
    assert where == {
        "id": ("path", "id"),
        "query_id": ("query", "id"),
        "header_id": ("header", "id"),
        "body_id": ("body", "id"),
        "name": ("body", "name"),
    }
    assert list(operation.input_schema["properties"]) == list(where)


def test_an_object_body_s_properties_are_arguments() -> None:
    body = {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "age": {}}}
    operation = one({"requestBody": json_body(body)})
    assert operation.body == Body("application/json", required=True, argument=None)
    assert operation.input_schema == {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {}},
        "required": ["name"],
    }
    optional = one({"requestBody": json_body(body, required=False)})  # no body: nothing in it required
    assert "required" not in optional.input_schema


def test_a_body_that_is_not_an_object_is_one_argument() -> None:
    operation = one(
        {"requestBody": {**json_body({"type": "array", "items": {"type": "integer"}}), "description": "Ids"}}
    )
    assert operation.body == Body("application/json", required=True, argument="body")
    assert operation.input_schema["properties"] == {
        "body": {"type": "array", "items": {"type": "integer"}, "description": "Ids"}
    }
    assert operation.input_schema["required"] == ["body"]
    assert not operation.parameters


def test_read_only_properties_stay_out_of_inputs_and_write_only_ones_out_of_outputs() -> None:
    pet = {
        "type": "object",
        "required": ["id", "name", "password"],
        "properties": {
            "id": {"type": "integer", "readOnly": True},
            "name": {"type": "string"},
            "password": {"type": "string", "writeOnly": True},
        },
    }
    operation = one(
        {
            "requestBody": json_body({"$ref": "#/components/schemas/Pet"}),
            "responses": ok("ok", {"$ref": "#/components/schemas/Pet"}),
        },
        schemas={"Pet": pet},
    )
    assert list(operation.input_schema["properties"]) == ["name", "password"]
    assert operation.input_schema["required"] == ["name", "password"]
    assert operation.output_schema is not None
    assert list(operation.output_schema["properties"]) == ["id", "name"]
    assert operation.output_schema["required"] == ["id", "name"]


def test_form_and_multipart_bodies_of_simple_fields() -> None:
    fields = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
    }
    for media_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        operation = one({"requestBody": {"content": {media_type: {"schema": fields}}}})
        assert operation.body == Body(media_type, required=False)
        assert [p.argument for p in operation.parameters] == ["name", "tags"]


def test_a_body_toolwire_cannot_send_skips_the_operation_if_required_else_is_left_out() -> None:
    upload = {"type": "object", "properties": {"file": {"type": "string", "format": "binary"}}}
    bodies = [
        (
            {"application/octet-stream": {}},
            "the request body is application/octet-stream; toolwire sends JSON, form and multipart bodies",
        ),
        ({"application/xml": {}, "text/plain": {}}, "the request body is application/xml, text/plain"),
        ({"multipart/form-data": {"schema": upload}}, "the multipart/form-data field 'file' is a file"),
        ({"application/x-www-form-urlencoded": {"schema": {"type": "string"}}}, "is not an object of fields"),
    ]
    for content, reason in bodies:
        assert reason in skipped_reason({"requestBody": {"required": True, "content": content}})
        operation = one({"requestBody": {"content": content}})
        assert operation.body is None and operation.input_schema == {"type": "object", "properties": {}}


def test_json_wins_over_other_media_types() -> None:
    content = {
        "application/xml": {},
        "application/vnd.api+json": {"schema": {"type": "object", "properties": {"a": {}}}},
    }
    assert one({"requestBody": {"content": content}}).body == Body("application/vnd.api+json")


# References


def test_references_are_written_in_place_unless_they_refer_further() -> None:
    schemas = {
        "Kind": {"type": "string", "enum": ["cat", "dog"]},
        "Owner": {"type": "object", "properties": {"kind": {"$ref": "#/components/schemas/Kind"}}},
        "Pet": {"type": "object", "properties": {"owner": {"$ref": "#/components/schemas/Owner"}}},
    }
    operation = one(
        {"requestBody": json_body({"type": "array", "items": {"$ref": "#/components/schemas/Pet"}})}, schemas=schemas
    )
    assert operation.input_schema["properties"]["body"] == {"type": "array", "items": {"$ref": "#/$defs/Pet"}}
    assert operation.input_schema["$defs"] == {
        "Owner": {"type": "object", "properties": {"kind": {"type": "string", "enum": ["cat", "dog"]}}},
        "Pet": {"type": "object", "properties": {"owner": {"$ref": "#/$defs/Owner"}}},
    }


def test_a_cycle_is_kept_in_defs() -> None:
    node = {
        "type": "object",
        "properties": {
            "value": {"type": "integer"},
            "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
        },
    }
    operation = one({"responses": ok("ok", {"$ref": "#/components/schemas/Node"})}, "get", schemas={"Node": node})
    assert operation.output_schema == {
        "type": "object",
        "properties": {"value": {"type": "integer"}, "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "integer"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
            }
        },
    }
    assert not operation.output_wrapped


# OpenAPI 3.0 schemas as JSON Schema 2020-12


@pytest.mark.parametrize(
    ("schema", "converted"),
    [
        ({"type": "string", "nullable": True}, {"type": ["string", "null"]}),
        ({"type": "string", "enum": ["a"], "nullable": True}, {"type": ["string", "null"], "enum": ["a", None]}),
        (
            {"allOf": [{"type": "string"}], "nullable": True},
            {"anyOf": [{"allOf": [{"type": "string"}]}, {"type": "null"}]},
        ),
        ({"type": "integer", "minimum": 1, "exclusiveMinimum": True}, {"type": "integer", "exclusiveMinimum": 1}),
        ({"type": "integer", "exclusiveMaximum": True, "maximum": 9}, {"type": "integer", "exclusiveMaximum": 9}),
        ({"type": "integer", "maximum": 9, "exclusiveMaximum": False}, {"type": "integer", "maximum": 9}),
        ({"type": "string", "example": "Rex"}, {"type": "string", "examples": ["Rex"]}),
        (
            {"type": "object", "xml": {"name": "x"}, "externalDocs": {"url": "u"}, "x-internal": 1, "properties": {}},
            {"type": "object", "properties": {}},
        ),
        (
            {"type": "string", "description": "d" * 5000},
            {"type": "string", "description": "d" * 2000 + " [... cut: 5000 characters in all]"},
        ),
    ],
)
def test_openapi_3_0_schemas_become_json_schema_2020_12(schema: dict[str, Any], converted: dict[str, Any]) -> None:
    operation = one({"requestBody": json_body(schema)})
    assert operation.input_schema["properties"]["body"] == converted


def test_a_discriminator_s_mapping_becomes_a_const_on_its_property() -> None:
    schemas = {
        "Cat": {"type": "object", "properties": {"kind": {"type": "string"}, "lives": {"type": "integer"}}},
        "Dog": {"type": "object", "properties": {"kind": {"type": "string"}, "good": {"type": "boolean"}}},
    }
    pet = {
        "oneOf": [{"$ref": "#/components/schemas/Cat"}, {"$ref": "#/components/schemas/Dog"}],
        "discriminator": {"propertyName": "kind", "mapping": {"cat": "#/components/schemas/Cat"}},
    }
    operation = one({"requestBody": json_body(pet)}, schemas=schemas)
    body = operation.input_schema["properties"]["body"]
    assert "discriminator" not in body
    assert [branch["allOf"][1] for branch in body["oneOf"]] == [
        {"properties": {"kind": {"const": "cat"}}},
        {"properties": {"kind": {"const": "Dog"}}},  # not in the mapping: the schema's name
    ]
    assert body["oneOf"][0]["allOf"][0] == schemas["Cat"]


def test_openapi_3_1_keeps_type_lists_and_the_siblings_of_ref() -> None:
    schemas = {"Id": {"type": ["integer", "null"]}}
    ref = {"$ref": "#/components/schemas/Id", "description": "The id"}
    operation = one(
        {"requestBody": json_body({"type": "object", "properties": {"id": ref}})}, schemas=schemas, version="3.1.0"
    )
    assert operation.input_schema["properties"]["id"] == {"type": ["integer", "null"], "description": "The id"}
    three_0 = one({"requestBody": json_body({"type": "object", "properties": {"id": ref}})}, schemas=schemas)
    assert three_0.input_schema["properties"]["id"] == {"type": ["integer", "null"]}  # 3.0 ignores siblings


# Outputs


def test_the_output_is_the_first_2xx_json_response() -> None:
    responses = {
        "204": {"description": "nothing"},
        "201": {
            "description": "made",
            "content": {"application/json": {"schema": {"type": "object", "properties": {"id": {}}}}},
        },
        "202": {"description": "later", "content": {"application/json": {"schema": {"type": "string"}}}},
        "default": {"description": "error", "content": {"application/json": {"schema": {"type": "object"}}}},
    }
    operation = one({"responses": responses})
    assert operation.output_schema == {"type": "object", "properties": {"id": {}}}
    assert not operation.output_wrapped


def test_an_output_that_is_not_an_object_is_wrapped() -> None:
    for schema in ({"type": "array", "items": {"type": "string"}}, {"type": ["object", "null"]}, {}):
        operation = one({"responses": ok("ok", schema)}, "get")
        assert operation.output_schema == {"type": "object", "properties": {"result": schema}, "required": ["result"]}
        assert operation.output_wrapped


def test_no_output_schema_without_a_json_2xx_response() -> None:
    text = {"200": {"description": "text", "content": {"text/plain": {"schema": {"type": "string"}}}}}
    for responses in (text, {"404": {"description": "no", "content": {"application/json": {"schema": {}}}}}, {}):
        assert one({"responses": responses}, "get").output_schema is None


# Annotations and tags


@pytest.mark.parametrize(
    ("method", "hints"),
    [
        ("get", {"readOnlyHint": True, "idempotentHint": True}),
        ("head", {"readOnlyHint": True, "idempotentHint": True}),
        ("options", {"readOnlyHint": True, "idempotentHint": True}),
        ("put", {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True}),
        ("delete", {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True}),
        ("post", {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False}),
        ("patch", {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False}),
    ],
)
def test_annotations_come_from_the_method(method: str, hints: dict[str, bool]) -> None:
    assert one({}, method).annotations == {**hints, "openWorldHint": True}


def test_tags_and_info() -> None:
    doc = document(
        {"/x": {"get": {"tags": ["pets", 3, "store"], "responses": ok()}}},
        servers=[
            {"url": "https://{region}.example.com/v1", "variables": {"region": {"default": "eu"}}},
            {"url": "/v2"},
        ],
    )
    doc["info"]["description"] = "An API"
    result = mapped(doc)
    assert result.operations[0].tags == ("pets", "store")
    assert (result.title, result.version, result.description) == ("Test API", "1.0", "An API")
    assert result.servers == ["https://eu.example.com/v1", "/v2"]
