"""Small documents for the mapping tests, and the checks every mapped operation must pass."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jsonschema import Draft202012Validator

from toolwire.openapi import MappedDocument, Operation, map_document
from toolwire.tools.tool import check_name


def document(
    paths: dict[str, Any], schemas: dict[str, Any] | None = None, version: str = "3.0.3", **top: Any
) -> dict[str, Any]:
    """An OpenAPI document with ``paths`` and the component ``schemas``."""
    return {
        "openapi": version,
        "info": {"title": "Test API", "version": "1.0"},
        "paths": paths,
        "components": {"schemas": schemas or {}},
        **top,
    }


def ok(description: str = "ok", schema: Any = None) -> dict[str, Any]:
    """Responses with one 200, JSON when ``schema`` is given."""
    response: dict[str, Any] = {"description": description}
    if schema is not None:
        response["content"] = {"application/json": {"schema": schema}}
    return {"200": response}


def json_body(schema: Any, required: bool = True) -> dict[str, Any]:
    return {"required": required, "content": {"application/json": {"schema": schema}}}


def mapped(doc: dict[str, Any], **options: Any) -> MappedDocument:
    """``doc`` mapped, with every operation checked valid (names and schemas)."""
    result = map_document(doc, **options)
    assert_valid(result.operations)
    return result


def one(operation: dict[str, Any], method: str = "post", path: str = "/things", **kwargs: Any) -> Operation:
    """The one operation ``method path`` of a document that has only it; none skipped."""
    result = mapped(document({path: {method: {"responses": ok(), **operation}}}, **kwargs))
    assert not result.skipped, result.skipped
    (found,) = result.operations
    return found


def skipped_reason(operation: dict[str, Any], method: str = "post", path: str = "/things", **kwargs: Any) -> str:
    """Why the one operation of a document was skipped (it must be)."""
    result = mapped(document({path: {method: {"responses": ok(), **operation}}}, **kwargs))
    assert not result.operations, result.operations
    (skip,) = result.skipped
    assert (skip.method, skip.path) == (method.upper(), path)
    return skip.reason


def assert_valid(
    operations: list[Operation], check_schema: Callable[[Any], None] = Draft202012Validator.check_schema
) -> None:
    """Every name valid and unique, every schema valid JSON Schema 2020-12 (by ``check_schema``,
    jsonschema's meta-validation unless told) with an object on top (each of ``$defs`` checked
    once: the operations of a document share them)."""
    names = [operation.name for operation in operations]
    assert len(set(names)) == len(names), "names are not unique"
    checked: set[int] = set()
    for operation in operations:
        check_name(operation.name)
        for schema in (operation.input_schema, operation.output_schema):
            if schema is None:
                continue
            assert schema["type"] == "object", operation.name
            check_schema({key: value for key, value in schema.items() if key != "$defs"})
            for definition in schema.get("$defs", {}).values():
                if id(definition) not in checked:
                    check_schema(definition)
                    checked.add(id(definition))
