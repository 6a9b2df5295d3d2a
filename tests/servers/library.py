"""A server with resources, resource templates, prompts and completion, for the tests of
those features (in memory and over stdio: ``toolwire run tests/servers/library.py``)."""

from __future__ import annotations

from typing import Any

from toolwire import (
    Completion,
    Context,
    PromptResult,
    ResourceNotFound,
    Server,
    annotations,
    assistant_message,
    image,
    resource_contents,
    user_message,
)

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
BOOKS = {1: "Dune", 2: "Emma", 3: "Ulysses", 10: "Beloved"}
GENRES = ["fantasy", "fiction", "history", "horror", "poetry"]

server = Server("library", "1.0.0")


@server.resource(
    "library://readme",
    title="Read me",
    mime_type="text/markdown",
    annotations=annotations(audience=["user"], priority=0.9, last_modified="2026-01-12T15:00:58Z"),
    icons=[{"src": "https://example.com/book.png", "mimeType": "image/png"}],
    meta={"com.example/shelf": "front"},
)
def readme() -> str:
    """How to use the library."""
    return "# The library\nAsk for books by id."


@server.resource("library://logo", size=len(PNG))
def logo() -> bytes:
    return PNG


@server.resource("library://catalog")
def catalog() -> dict[str, Any]:
    return {"books": len(BOOKS)}


@server.resource("library://shelves")
def shelves() -> list[Any]:
    return [resource_contents("A-M", uri="library://shelves/1"), resource_contents(b"N-Z", uri="library://shelves/2")]


@server.resource("library://books/{id}", mime_type="text/plain", complete={"id": [str(key) for key in BOOKS]})
def book(id: int) -> str:
    """A book's title by its id."""
    if id not in BOOKS:
        raise ResourceNotFound(f"library://books/{id}")
    return BOOKS[id]


@server.resource("library://search{?genre,year}", name="search")
def search(genre: str = "any", year: int = 0) -> str:
    return f"genre={genre} year={year}"


@server.resource("library://secret")
async def secret(ctx: Context) -> str:
    answer = await ctx.elicit("Password?", {"type": "object", "properties": {"password": {"type": "string"}}})
    if not answer.accepted or answer.content != {"password": "open sesame"}:
        return "denied"
    return "the treasure"


def genre_completer(value: str, arguments: dict[str, str]) -> Completion:
    found = [genre for genre in GENRES if genre.startswith(value)]
    if arguments.get("audience") == "kids":
        found = [genre for genre in found if genre != "horror"]
    return Completion(found, total=len(found))


@server.prompt(title="Recommend a book", complete={"genre": genre_completer, "audience": ["adults", "kids"]})
def recommend(genre: str, audience: str = "adults", count: int = 1) -> list[Any]:
    """Ask for book recommendations.

    Args:
        genre: The genre to pick from
        audience: Who the books are for
        count: How many books
    """
    return [
        user_message(f"Recommend {count} {genre} book(s) for {audience}."),
        assistant_message("Here are my picks:"),
    ]


@server.prompt
def cover() -> PromptResult:
    """Describe a cover."""
    return PromptResult([user_message(image(PNG)), "What does this cover show?"], description="A cover to describe")


@server.prompt(name="ask-name")
async def ask_name(ctx: Context) -> str:
    answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"Greet {answer.content['name'] if answer.content else 'nobody'}"


@server.prompt
def broken() -> str:
    raise RuntimeError("the prompt store is down")


@server.tool
def change(uri: str = "library://readme") -> str:
    """Announce that a resource changed, and change the prompt list."""
    server.resource_updated(uri)
    if "extra" in server.prompts:
        server.remove_prompt("extra")
    else:
        server.add_prompt(lambda: "extra", name="extra")
    return "changed"


@server.tool
def linked() -> list[Any]:
    """A tool result that links one registered resource."""
    return [server.link_resource("library://readme")]


@server.tool
async def embedded() -> list[Any]:
    """A tool result that embeds a registered resource."""
    return await server.embed_resource("library://books/2")
