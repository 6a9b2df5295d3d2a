"""Real public documents, shipped under tests/openapi/data with their licences: the Petstore
examples of OpenAPI 3.0 and 3.1 (from npm's @readme/oas-examples) and GitHub's REST
description (npm's @octokit/openapi, 1,000+ operations). Every name valid and unique, every
schema valid JSON Schema 2020-12 with an object on top, and a few operations checked whole."""

from __future__ import annotations

import functools
import gzip
from pathlib import Path
from typing import Any

import jsonschema_rs
import orjson
import pytest

from tests.support.openapi_mapping import assert_valid
from toolwire.openapi import MappedDocument, RouteMap, load_document, map_document

DATA = Path(__file__).parent / "data"


@functools.cache
def github() -> dict[str, Any]:
    document: dict[str, Any] = orjson.loads(gzip.decompress((DATA / "api.github.com.json.gz").read_bytes()))
    return document


def by_name(mapped: MappedDocument) -> dict[str, Any]:
    return {operation.name: operation for operation in mapped.operations}


@pytest.mark.parametrize("file", ["petstore-3.0.json", "petstore-3.0.yaml", "petstore-3.1.json"])
def test_the_petstores(file: str) -> None:
    mapped = map_document(load_document(DATA / file))
    assert_valid(mapped.operations)
    assert mapped.title == "Swagger Petstore" and not mapped.skipped
    operations = by_name(mapped)
    assert len(operations) == 20
    get_pet = operations["getPetById"]
    assert (get_pet.method, get_pet.path, get_pet.tags) == ("GET", "/pet/{petId}", ("pet",))
    assert get_pet.input_schema["properties"]["petId"]["type"] == "integer"
    assert get_pet.input_schema["required"] == ["petId"]
    assert get_pet.output_schema is not None and set(get_pet.output_schema["properties"]) >= {"id", "name", "status"}
    find = operations["findPetsByStatus"]
    assert find.output_wrapped and find.output_schema is not None
    assert find.output_schema["properties"]["result"]["type"] == "array"
    assert operations["deletePet"].annotations["destructiveHint"] is True


def test_the_petstore_s_gets_as_resources_and_templates() -> None:
    maps = [RouteMap(methods=("GET",), kind="resource"), RouteMap(methods=("GET",), kind="template")]
    operations = by_name(map_document(load_document(DATA / "petstore-3.1.json"), route_maps=maps))
    assert (operations["getInventory"].kind, operations["getInventory"].uri) == (
        "resource",
        "openapi://swagger-petstore/store/inventory",
    )
    assert operations["getPetById"].uri == "openapi://swagger-petstore/pet/{petId}"
    assert operations["findPetsByStatus"].kind == "tool"  # its status is a required query argument


def test_github_s_rest_description() -> None:
    mapped = map_document(github())
    assert_valid(mapped.operations, jsonschema_rs.meta.validate)  # the same meta-validation, compiled
    assert not mapped.skipped
    assert len(mapped.operations) > 1_000
    operations = by_name(mapped)
    get_repo = operations["repos_get"]
    assert (get_repo.method, get_repo.path, get_repo.tags) == ("GET", "/repos/{owner}/{repo}", ("repos",))
    assert get_repo.input_schema["required"] == ["owner", "repo"]
    assert get_repo.output_schema is not None and "full_name" in get_repo.output_schema["properties"]
    create_issue = operations["issues_create"]
    assert create_issue.body is not None and create_issue.body.argument is None
    assert {"owner", "repo", "title", "body"} <= set(create_issue.input_schema["properties"])
    assert create_issue.input_schema["required"] == ["owner", "repo", "title"]
    assert_valid([get_repo, create_issue])  # and by jsonschema's, for two


def test_github_by_tag() -> None:
    mapped = map_document(github(), route_maps=[RouteMap(tags=("issues",)), RouteMap(kind="exclude")])
    assert 50 < len(mapped.operations) < 100
    assert all(operation.tags == ("issues",) for operation in mapped.operations)
