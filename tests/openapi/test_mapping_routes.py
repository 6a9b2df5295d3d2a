"""Route maps (what is served, and as what: the first map that matches decides) and
per-operation overrides (name, title, description, annotations, tags)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.openapi_mapping import document, mapped, ok
from toolwire.openapi import OpenAPIError, Override, RouteMap, map_document

ID = {"name": "id", "in": "path", "schema": {"type": "integer"}}
PATHS: dict[str, Any] = {
    "/pets": {
        "get": {"operationId": "listPets", "tags": ["pets"], "responses": ok()},
        "post": {"operationId": "addPet", "tags": ["pets"], "responses": ok()},
    },
    "/pets/{id}": {
        "parameters": [ID],
        "get": {"operationId": "getPet", "tags": ["pets"], "responses": ok()},
        "delete": {"operationId": "deletePet", "tags": ["pets", "admin"], "responses": ok()},
    },
    "/search": {
        "get": {
            "operationId": "search",
            "parameters": [{"name": "q", "in": "query", "required": True, "schema": {"type": "string"}}],
            "responses": ok(),
        }
    },
    "/admin/stats": {"get": {"operationId": "stats", "tags": ["admin"], "responses": ok()}},
}


def served(*route_maps: RouteMap) -> dict[str, tuple[str, str | None]]:
    """Each operation served, by name: its kind and URI."""
    result = mapped(document(PATHS), route_maps=route_maps)
    return {operation.name: (operation.kind, operation.uri) for operation in result.operations}


def test_by_default_every_operation_is_a_tool() -> None:
    assert set(served().values()) == {("tool", None)}
    assert list(served()) == ["listPets", "addPet", "getPet", "deletePet", "search", "stats"]


def test_exclude_by_tag_pattern_and_method() -> None:
    assert list(served(RouteMap(tags=("admin",), kind="exclude"))) == ["listPets", "addPet", "getPet", "search"]
    assert list(served(RouteMap(pattern=r"^/pets", kind="exclude"))) == ["search", "stats"]
    assert list(served(RouteMap(methods=("GET",), kind="exclude"))) == ["addPet", "deletePet"]
    assert list(served(RouteMap(methods="delete", tags=("pets", "admin"), kind="exclude"))) == [
        "listPets",
        "addPet",
        "getPet",
        "search",
        "stats",
    ]


def test_the_first_matching_map_wins() -> None:
    keep_stats = RouteMap(pattern=r"^/admin/stats$", kind="tool")
    kept = served(keep_stats, RouteMap(tags=("admin",), kind="exclude"))
    assert list(kept) == ["listPets", "addPet", "getPet", "search", "stats"]
    assert "stats" not in served(RouteMap(tags=("admin",), kind="exclude"), keep_stats)


def test_an_allow_list_is_a_last_map_that_excludes_the_rest() -> None:
    assert list(served(RouteMap(tags=("pets",)), RouteMap(kind="exclude"))) == [
        "listPets",
        "addPet",
        "getPet",
        "deletePet",
    ]


def test_gets_as_resources_and_templates() -> None:
    kinds = served(RouteMap(methods=("GET",), kind="resource"), RouteMap(methods=("GET",), kind="template"))
    assert kinds == {
        "listPets": ("resource", "openapi://test-api/pets"),
        "addPet": ("tool", None),
        "getPet": ("template", "openapi://test-api/pets/{id}"),
        "deletePet": ("tool", None),
        "search": ("tool", None),  # a required query argument: no URI carries it
        "stats": ("resource", "openapi://test-api/admin/stats"),
    }


def test_a_map_whose_kind_does_not_fit_passes_to_the_next() -> None:
    kinds = served(RouteMap(kind="template"), RouteMap(pattern="^/pets$", kind="exclude"))
    assert kinds["getPet"] == ("template", "openapi://test-api/pets/{id}")
    assert "listPets" not in kinds  # not a template: the next map excluded it
    assert kinds["deletePet"] == ("tool", None)  # not a GET


def test_a_route_map_is_checked_when_made() -> None:
    with pytest.raises(ValueError, match="is not a regular expression"):
        RouteMap(pattern="(")
    with pytest.raises(ValueError, match="kind is one of tool, resource, template, exclude"):
        RouteMap(kind="prompt")  # type: ignore[arg-type]


def test_overrides_by_operation_id_or_name() -> None:
    doc = document(
        {
            "/pets": {"get": {"operationId": "listPets", "tags": ["pets"], "responses": ok()}},
            "/toys": {"get": {"tags": ["toys"], "responses": ok()}},
        }
    )
    overrides = {
        "listPets": Override(name="pets", title="Pets", description="All pets", tags=("animals",)),
        "get_toys": Override(annotations={"openWorldHint": False, "title": "Toys"}),
    }
    pets, toys = mapped(doc, overrides=overrides).operations
    assert (pets.name, pets.title, pets.description, pets.tags) == ("pets", "Pets", "All pets", ("animals",))
    assert pets.operation_id == "listPets"
    assert toys.name == "get_toys" and toys.tags == ("toys",)
    assert toys.annotations == {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False, "title": "Toys"}


def test_overridden_tags_are_what_route_maps_see() -> None:
    doc = document({"/pets": {"get": {"operationId": "listPets", "tags": ["pets"], "responses": ok()}}})
    result = mapped(
        doc, route_maps=[RouteMap(tags=("hidden",), kind="exclude")], overrides={"listPets": Override(tags=("hidden",))}
    )
    assert result.operations == []


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"nothing": Override(title="x")}, "the override 'nothing' fits no operation: no operation has it"),
        (
            {"a b": Override(title="x")},
            r"2 operations have it as their operationId: use their names instead \(a_b, a_b_2\)",
        ),
        ({"one": Override(name="bad name")}, "the override for 'one': invalid tool name 'bad name'"),
        ({"one": Override(name="a_b_2")}, "names it 'a_b_2': another operation's name"),
    ],
)
def test_an_override_that_does_not_fit_is_an_error(overrides: dict[str, Override], message: str) -> None:
    doc = document(
        {
            "/a": {"get": {"operationId": "a b", "responses": ok()}},
            "/b": {"get": {"operationId": "a b", "responses": ok()}},
            "/c": {"get": {"operationId": "one", "responses": ok()}},
        }
    )
    with pytest.raises(OpenAPIError, match=message):
        map_document(doc, overrides=overrides)
