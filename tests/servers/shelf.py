"""A server whose resources and prompts are offered as tools too (``resources_as_tools``,
``prompts_as_tools``), for tests/server/test_transforms.py: a text resource, an image, a
long text, one hidden by a tag, one needing the scope ``staff``, a template, a child mounted
under ``archive``, and a prompt with arguments. ``proxied``: ``bare`` (the server without
those tools) through a proxy that adds them."""

from __future__ import annotations

import sys
from pathlib import Path

from toolwire import ResourceNotFound, Server
from toolwire.proxy import proxy

#: The smallest PNG there is (one transparent pixel).
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002"
    "0000050001e226059b0000000049454e44ae426082"
)


def shelf() -> Server:
    """The server, without the tools made of its resources and prompts."""
    server = Server("shelf", exclude_tags=["draft"])
    server.add_resource("notes://today", "buy bread", mime_type="text/plain")
    server.add_resource("pictures://pixel", PIXEL, mime_type="image/png")
    server.add_resource("notes://long", "x" * 300_000, mime_type="text/plain")
    server.add_resource("notes://draft", "not yet", tags=["draft"])
    server.add_resource("notes://payroll", "secret numbers", scopes=["staff"])

    @server.resource("books://{isbn}")
    def book(isbn: str) -> str:
        """A book by its ISBN."""
        if isbn != "42":
            raise ResourceNotFound(f"books://{isbn}", "no such book")
        return "The Hitchhiker's Guide"

    @server.prompt
    def review(title: str, tone: str = "kind") -> str:
        """Ask for a review of a book."""
        return f"Write a {tone} review of {title}."

    archive = Server("archive")
    archive.add_resource("notes://old", "written long ago")
    server.mount(archive, "archive")
    return server


server = shelf()
server.resources_as_tools()
server.prompts_as_tools()
bare = shelf()

proxied = proxy([sys.executable, "-m", "toolwire", "run", f"{Path(__file__)}:bare"], name="shelf-proxy")
proxied.resources_as_tools()
proxied.prompts_as_tools()
