"""A real FastAPI application for the OpenAPI tests: a small shop with path, query, header and
body parameters, enums, nested models, lists, optional fields, a form and a file-free
multipart form, errors (404, 422, 500), a slow endpoint, one that needs a bearer token, and a
few that answer what they received (to see what reached the upstream).

``python -m uvicorn tests.openapi.shop:app`` serves it; the tests serve it in process too.
"""

from __future__ import annotations

import asyncio
import enum
from typing import Annotated, Any

from fastapi import FastAPI, Form, Header, HTTPException, Query, Request
from fastapi.responses import PlainTextResponse, RedirectResponse, Response
from pydantic import BaseModel

#: The bearer token ``GET /private`` wants.
SECRET = "shop-secret-token"
#: A 1x1 PNG.
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


class Color(enum.StrEnum):
    red = "red"
    green = "green"
    blue = "blue"


class Size(BaseModel):
    width: float
    height: float


class ItemIn(BaseModel):
    name: str
    color: Color
    size: Size
    tags: list[str] = []
    note: str | None = None


class Item(ItemIn):
    id: int


app = FastAPI(
    title="Shop",
    version="2.1.0",
    description="A small shop: items, orders and a few oddities.",
    servers=[{"url": "/"}],
)
ITEMS: dict[int, Item] = {
    1: Item(id=1, name="kettle", color=Color.red, size=Size(width=20, height=25), tags=["kitchen"]),
    2: Item(id=2, name="lamp", color=Color.blue, size=Size(width=15, height=40)),
}


@app.get("/items/{item_id}", tags=["items"], summary="Get an item", operation_id="get_item")
async def get_item(item_id: int) -> Item:
    """One item by its id."""
    if item_id not in ITEMS:
        raise HTTPException(404, f"no item {item_id}")
    return ITEMS[item_id]


@app.get("/items", tags=["items"], summary="List items", operation_id="list_items")
async def list_items(
    color: Color | None = None,
    tag: Annotated[list[str], Query()] = [],  # noqa: B006 (FastAPI copies defaults)
    limit: int = 10,
) -> list[Item]:
    """Items, filtered by colour and tags."""
    found = [item for item in ITEMS.values() if color is None or item.color == color]
    found = [item for item in found if all(t in item.tags for t in tag)]
    return found[:limit]


@app.post("/items", tags=["items"], summary="Add an item", status_code=201, operation_id="add_item")
async def add_item(item: ItemIn, x_request_id: Annotated[str | None, Header()] = None) -> Item:
    """Add an item; it gets the next id."""
    if item.name == "forbidden":
        raise HTTPException(422, "an item cannot be called 'forbidden': choose another name")
    created = Item(id=max(ITEMS) + 1, **item.model_dump())
    ITEMS[created.id] = created
    if x_request_id is not None:
        created.note = f"request {x_request_id}"
    return created


@app.delete("/items/{item_id}", tags=["items"], status_code=204, operation_id="delete_item")
async def delete_item(item_id: int) -> Response:
    ITEMS.pop(item_id, None)
    return Response(status_code=204)


@app.post("/login", tags=["forms"], operation_id="login")
async def login(
    username: Annotated[str, Form()], password: Annotated[str, Form()], remember: Annotated[bool, Form()] = False
) -> dict[str, Any]:
    """A form (application/x-www-form-urlencoded)."""
    return {"user": username, "password_length": len(password), "remember": remember}


@app.post(
    "/feedback",
    operation_id="feedback",
    tags=["forms"],
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {
                            "subject": {"type": "string"},
                            "stars": {"type": "integer"},
                            "labels": {"type": "array", "items": {"type": "string"}},
                        },
                        "required": ["subject"],
                    }
                }
            },
        }
    },
)
async def feedback(request: Request) -> dict[str, Any]:
    """A file-free multipart form, read as it arrives."""
    assert request.headers["content-type"].startswith("multipart/form-data")
    form = await request.form()
    return {"subject": form["subject"], "stars": form.get("stars"), "labels": form.getlist("labels")}


@app.get("/fail", tags=["oddities"], operation_id="fail")
async def fail() -> dict[str, Any]:
    raise HTTPException(500, "the database is down: try again in a minute")


@app.get("/overloaded", tags=["oddities"], operation_id="overloaded")
async def overloaded() -> PlainTextResponse:
    return PlainTextResponse("o" * 10_002, status_code=503)


@app.get("/slow", tags=["oddities"], operation_id="slow")
async def slow() -> dict[str, Any]:
    """Never answers: it waits for a future nobody sets (until the caller gives up)."""
    await asyncio.get_running_loop().create_future()
    return {"finally": True}


@app.get("/private", tags=["oddities"], operation_id="private")
async def private(authorization: Annotated[str | None, Header()] = None) -> dict[str, Any]:
    if authorization != f"Bearer {SECRET}":
        raise HTTPException(401, "a valid bearer token is needed", headers={"WWW-Authenticate": "Bearer"})
    return {"secret": "the shop opens at nine"}


@app.get("/received", tags=["oddities"], operation_id="received")
async def received(request: Request) -> dict[str, Any]:
    """What reached the upstream: the target, and the headers that carry credentials."""
    return {
        "target": request.url.path + ("?" + request.url.query if request.url.query else ""),
        "authorization": request.headers.get("authorization"),
        "x_api_key": request.headers.get("x-api-key"),
    }


@app.get("/text", tags=["oddities"], response_class=PlainTextResponse, operation_id="text")
async def text() -> PlainTextResponse:
    return PlainTextResponse("plain words, not JSON")


@app.get("/pixel", tags=["oddities"], response_class=Response, operation_id="pixel")
async def pixel() -> Response:
    return Response(PIXEL, media_type="image/png")


@app.get("/big", tags=["oddities"], response_class=PlainTextResponse, operation_id="big")
async def big() -> PlainTextResponse:
    return PlainTextResponse("x" * 3_000_000)


@app.get("/moved", tags=["oddities"], operation_id="moved")
async def moved() -> RedirectResponse:
    return RedirectResponse("/items/1", status_code=307)


@app.get("/away", tags=["oddities"], operation_id="away")
async def away() -> RedirectResponse:
    return RedirectResponse("http://elsewhere.invalid/steal", status_code=302)
