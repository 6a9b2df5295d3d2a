"""The ASGI application mounted in another application, as docs/http.md shows."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.routing import Mount

from toolwire import Server

HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "greet",
}
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def closing(mcp: Any) -> Callable[[Any], Any]:
    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        yield
        await mcp.close()

    return lifespan


async def test_mounted_in_starlette_under_a_prefix() -> None:
    server = Server("mounted")

    @server.tool
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    mcp = server.http_app(path="/")
    web = Starlette(routes=[Mount("/mcp", app=mcp)], lifespan=closing(mcp))
    transport = httpx.ASGITransport(app=web)
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as http:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "greet", "arguments": {"name": "Ada"}, "_meta": META},
        }
        reply = await http.post("/mcp/", json=body, headers=HEADERS)
        assert reply.status_code == 200
        assert reply.json()["result"]["content"] == [{"type": "text", "text": "Hello, Ada!"}]
        elsewhere = await http.post("/other", json=body, headers=HEADERS)
        assert elsewhere.status_code == 404
