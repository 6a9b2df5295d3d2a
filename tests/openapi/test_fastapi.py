"""A real FastAPI application (tests/openapi/shop.py) served as an MCP server two ways: in
process through ``Server.from_asgi`` (no socket), and over a real socket (uvicorn on
127.0.0.1) through ``Server.from_openapi``; a client speaks MCP to the result."""

from __future__ import annotations

import base64
import contextlib
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from fastapi import FastAPI, Request

from tests.openapi import shop
from tests.support.httpserve import InProcess, process_http
from toolwire import Server
from toolwire.client import Client, ServerError
from toolwire.openapi import OpenAPIError, RouteMap

#: Makes the server under test for the app, with these options.
Make = Callable[..., Server]


@pytest.fixture(params=["asgi", "socket"])
async def make(request: pytest.FixtureRequest) -> AsyncIterator[Make]:
    """``make(**options)``: the shop served through ``from_asgi`` or, over uvicorn on a real
    socket, through ``from_openapi`` (the document as the app publishes it at its URL)."""
    if request.param == "asgi":
        yield lambda **options: Server.from_asgi(shop.app, **options)
        return
    async with InProcess(shop.app, runner="uvicorn") as url:
        base = url.removesuffix("/mcp")
        yield lambda **options: Server.from_openapi(shop.app.openapi(), base_url=base, **options)


async def call(server: Server, tool: str, **arguments: Any) -> Any:
    async with Client(server) as client:
        return await client.call_tool(tool, arguments)


async def test_the_operations_become_tools_with_schemas_annotations_and_tags() -> None:
    server = Server.from_asgi(shop.app)
    assert (server.name, server.version) == ("Shop", "2.1.0")
    async with Client(server) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
    get_item, add_item, delete_item = tools["get_item"], tools["add_item"], tools["delete_item"]
    assert get_item.title == "Get an item" and "One item by its id." in (get_item.description or "")
    assert get_item.input_schema["required"] == ["item_id"]
    assert get_item.output_schema is not None and get_item.output_schema["type"] == "object"
    assert get_item.annotations is not None and get_item.annotations["readOnlyHint"] is True
    assert delete_item.annotations is not None and delete_item.annotations["destructiveHint"] is True
    assert set(add_item.input_schema["properties"]) >= {"name", "color", "size", "tags", "note"}
    assert server.registry.get("get_item").tags == frozenset({"items"})


async def test_path_parameter_and_a_json_answer_as_structured_content(make: Make) -> None:
    result = await call(make(), "get_item", item_id=1)
    assert not result.is_error
    assert result.structured == {
        "id": 1,
        "name": "kettle",
        "color": "red",
        "size": {"width": 20.0, "height": 25.0},
        "tags": ["kitchen"],
        "note": None,
    }
    assert '"kettle"' in result.text


async def test_enum_and_list_query_parameters_and_a_list_answer_wrapped(make: Make) -> None:
    result = await call(make(), "list_items", color="red", tag=["kitchen"])
    assert [item["name"] for item in result.structured["result"]] == ["kettle"]
    assert (await call(make(), "list_items", tag=["kitchen", "garden"])).structured == {"result": []}


async def test_a_nested_body_with_optional_fields_and_a_header(make: Make) -> None:
    arguments = {"name": "cup", "color": "green", "size": {"width": 8, "height": 9}, "tags": ["tea"]}
    result = await call(make(), "add_item", **arguments, **{"x-request-id": "r-42"})
    assert not result.is_error, result.text
    assert result.structured["size"] == {"width": 8.0, "height": 9.0}
    assert result.structured["note"] == "request r-42"
    assert shop.ITEMS[result.structured["id"]].tags == ["tea"]


async def test_arguments_are_validated_before_anything_is_sent(make: Make) -> None:
    before = dict(shop.ITEMS)
    result = await call(make(), "add_item", name="cup", color="purple", size={"width": 1, "height": 1})
    assert result.is_error and "color" in result.text and "purple" in result.text
    assert before == shop.ITEMS


async def test_form_and_file_free_multipart_bodies(make: Make) -> None:
    login = await call(make(), "login", username="ada", password="secret", remember=True)
    assert login.structured == {"user": "ada", "password_length": 6, "remember": True}
    feedback = await call(make(), "feedback", subject="fine", stars=5, labels=["fast", "cheap"])
    assert feedback.structured == {"subject": "fine", "stars": "5", "labels": ["fast", "cheap"]}


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        (
            "get_item",
            {"item_id": 404},
            'GET /items/{item_id} failed: HTTP 404 Not Found: {"detail":"no item 404"}',
        ),
        (
            "add_item",
            {"name": "forbidden", "color": "red", "size": {"width": 1, "height": 1}},
            "POST /items failed: HTTP 422 Unprocessable Entity: "
            '{"detail":"an item cannot be called \'forbidden\': choose another name"}',
        ),
        (
            "fail",
            {},
            'GET /fail failed: HTTP 500 Internal Server Error: {"detail":"the database is down: try again in a minute"}',
        ),
    ],
)
async def test_upstream_errors_are_tool_errors_carrying_status_and_body(
    make: Make, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    result = await call(make(), tool, **arguments)
    assert result.is_error and result.structured is None
    assert result.text == expected


async def test_an_error_body_is_trimmed_for_the_model_and_a_given_client_is_used() -> None:
    import httpx

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=shop.app), base_url="http://shop.local") as client:
        result = await call(Server.from_openapi(shop.app.openapi(), client=client), "overloaded")
    assert result.is_error and result.text.startswith("GET /overloaded failed: HTTP 503 Service Unavailable: ")
    assert result.text.endswith(f"... ({10_000 + 2 - 2_000} more characters)") and len(result.text) < 2_200


async def test_a_slow_api_times_out_as_a_tool_error(make: Make) -> None:
    result = await call(make(timeout=0.5), "slow")
    assert result.is_error and result.text == "GET /slow: the API did not answer in full within 0.5 s"


async def test_an_answer_past_the_size_cap_is_not_read_further(make: Make) -> None:
    result = await call(make(max_response_bytes=1_000_000), "big")
    assert result.is_error and "answered more than 1000000 bytes" in result.text


async def test_redirects_are_followed_on_the_same_origin_only(make: Make) -> None:
    moved = await call(make(), "moved")
    assert not moved.is_error and moved.structured["result"]["name"] == "kettle"
    away = await call(make(headers={"X-Api-Key": "k"}), "away")
    assert away.is_error
    assert "redirected to http://elsewhere.invalid/steal, another origin: not followed" in away.text


async def test_text_images_and_empty_answers(make: Make) -> None:
    server = make()
    assert (await call(server, "text")).text == "plain words, not JSON"
    pixel = await call(server, "pixel")
    assert pixel.raw["content"] == [
        {"type": "image", "data": base64.b64encode(shop.PIXEL).decode(), "mimeType": "image/png"}
    ]
    shop.ITEMS[99] = shop.ITEMS[2].model_copy(update={"id": 99})
    deleted = await call(server, "delete_item", item_id=99)
    assert not deleted.is_error and deleted.raw["content"] == [] and 99 not in shop.ITEMS


async def test_upstream_credentials_static_headers_and_a_bearer_from_the_environment(
    make: Make, monkeypatch: pytest.MonkeyPatch
) -> None:
    refused = await call(make(), "private")
    assert refused.is_error and "HTTP 401" in refused.text and "a valid bearer token is needed" in refused.text
    with_header = await call(make(headers={"Authorization": f"Bearer {shop.SECRET}"}), "private")
    assert with_header.structured == {"secret": "the shop opens at nine"}
    monkeypatch.setenv("SHOP_TOKEN", shop.SECRET)
    assert (await call(make(bearer_env="SHOP_TOKEN"), "private")).structured == {"secret": "the shop opens at nine"}


def test_a_bearer_variable_that_is_not_set_is_refused_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SHOP_TOKEN", raising=False)
    with pytest.raises(OpenAPIError, match=r"the environment variable SHOP_TOKEN \(.*\) is not set"):
        Server.from_asgi(shop.app, bearer_env="SHOP_TOKEN")


async def test_the_callers_own_token_is_never_forwarded_upstream(monkeypatch: pytest.MonkeyPatch) -> None:
    """The MCP caller authenticates to this server with its token; the API gets only the
    credentials configured for it (the spec's rule against token passthrough)."""
    monkeypatch.setenv("SHOP_TOKEN", "upstream-token")
    async with InProcess(shop.app, runner="uvicorn") as api:
        configured = Server.from_openapi(
            shop.app.openapi(), base_url=api.removesuffix("/mcp"), headers={"X-Api-Key": "upstream-key"}
        )
        bearer = Server.from_openapi(shop.app.openapi(), base_url=api.removesuffix("/mcp"), bearer_env="SHOP_TOKEN")
        for server, expected in ((configured, None), (bearer, "Bearer upstream-token")):
            async with InProcess(server.http_app()) as mcp:
                caller = {"Authorization": "Bearer the-callers-own-token", "X-Api-Key": "the-callers-key"}
                async with Client(mcp, headers=caller) as client:
                    result = await client.call_tool("received", {})
            assert result.structured["authorization"] == expected
            assert result.structured["x_api_key"] == ("upstream-key" if server is configured else None)


async def test_get_operations_as_resources_and_templates(make: Make) -> None:
    server = make(
        route_maps=[
            RouteMap(methods=("GET",), pattern=r"^/items/\{item_id\}$", kind="template"),
            RouteMap(methods=("GET",), pattern="^/text$", kind="resource"),
        ]
    )
    async with Client(server) as client:
        templates = [template.uri_template for template in await client.list_resource_templates()]
        resources = [resource.uri for resource in await client.list_resources()]
        assert templates == ["openapi://shop/items/{item_id}"] and resources == ["openapi://shop/text"]
        item = await client.read_resource("openapi://shop/items/2")
        text = await client.read_resource("openapi://shop/text")
        with pytest.raises(ServerError, match="openapi://shop/items/404") as missing:
            await client.read_resource("openapi://shop/items/404")
    assert item[0].mime_type == "application/json" and '"lamp"' in (item[0].text or "")
    assert text[0].text == "plain words, not JSON" and text[0].mime_type == "text/plain"
    assert "get_item" not in {tool.name for tool in server.registry.all()}
    assert 'the API answered HTTP 404: {"detail":"no item 404"}' in str(missing.value)


async def test_the_base_url_comes_from_the_documents_servers_resolved_against_its_url() -> None:
    # from_openapi reads a URL before it returns: the API runs in a process of its own
    with process_http(sys.executable, "-m", "uvicorn", "tests.openapi.shop:app", "--port", path="") as api:
        server = Server.from_openapi(f"{api}/openapi.json")
        assert (await call(server, "get_item", item_id=2)).structured["name"] == "lamp"


def test_no_usable_base_url_asks_for_one() -> None:
    with pytest.raises(OpenAPIError, match="relative and the document was not read from a URL: give base_url="):
        Server.from_openapi(shop.app.openapi())
    no_servers = {key: value for key, value in shop.app.openapi().items() if key != "servers"}
    with pytest.raises(OpenAPIError, match="the document names no server: give base_url="):
        Server.from_openapi(no_servers)


def starlette_app(published: bool) -> Any:
    """A Starlette application (no ``openapi()`` method): ``GET /hello/{name}``, and its
    document at ``/openapi.json`` when ``published``."""
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    document = {
        "openapi": "3.1.0",
        "info": {"title": "Hello", "version": "1"},
        "paths": {
            "/hello/{name}": {
                "get": {
                    "operationId": "hello",
                    "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
                    "responses": {"200": {"description": "a greeting", "content": {"text/plain": {}}}},
                }
            }
        },
    }

    async def hello(request: Request) -> Any:
        from starlette.responses import PlainTextResponse

        return PlainTextResponse(f"hello, {request.path_params['name']}")

    async def openapi(request: Request) -> Any:
        return JSONResponse(document)

    routes = [Route("/hello/{name}", hello)] + ([Route("/openapi.json", openapi)] if published else [])
    return Starlette(routes=routes)


async def test_an_asgi_app_without_openapi_method_is_read_from_its_openapi_json() -> None:
    server = Server.from_asgi(starlette_app(published=True))
    assert (await call(server, "hello", name="Zoë")).text == "hello, Zoë"
    with pytest.raises(OpenAPIError, match=r"publishes no OpenAPI document: GET /openapi.json answered HTTP 404"):
        Server.from_asgi(starlette_app(published=False))


async def test_the_applications_own_lifespan_runs_with_the_server() -> None:
    events: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, str]]:
        events.append("started")
        yield {"greeting": "hello"}
        events.append("stopped")

    app = FastAPI(title="Greeter", version="1", lifespan=lifespan)

    @app.get("/greet", operation_id="greet")
    async def greet(request: Request) -> dict[str, str]:
        return {"said": request.state.greeting}

    async with Client(Server.from_asgi(app)) as client:
        assert (await client.call_tool("greet", {})).structured == {"said": "hello"}
        assert events == ["started"]
    assert events == ["started", "stopped"]
