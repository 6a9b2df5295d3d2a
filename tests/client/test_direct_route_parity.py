"""The direct route sends what httpx would: the same requests go through
:class:`~toolwire.client.direct_route.DirectRoute` and through ``httpx.AsyncClient`` (on the same
transport) to a raw socket server on 127.0.0.1 that records every byte of them, and the two
recordings are compared: request line, headers (names without case), body.

First request by request, over a spread of methods, headers (the client's defaults
overridden or not, a session id, values with spaces and non-ASCII text), targets and bodies;
then a whole MCP conversation of the :class:`Client` in each era, once with the direct
route and once with it turned off.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest

from tests.client.test_http11 import Scripted, read_request
from toolwire.client import Client, ClientError
from toolwire.client.direct_route import DirectRoute
from toolwire.client.http11 import Http11Transport

Request = tuple[bytes, list[tuple[bytes, bytes]], bytes]


def parse(head: bytes, body: bytes) -> Request:
    """The request line, the headers (lower-case names, sorted), the body."""
    line, *lines = head.rstrip(b"\r\n").split(b"\r\n")
    headers = []
    for header in lines:
        name, _, value = header.partition(b":")
        headers.append((name.strip().lower(), value.strip()))
    return line, sorted(headers), body


@contextlib.asynccontextmanager
async def recorder(answer: Any) -> AsyncIterator[tuple[str, list[Request]]]:
    """A raw HTTP/1.1 server recording each request; ``answer(request)`` gives the bytes of
    each answer. Yields its base URL and the recording."""
    seen: list[Request] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            request = parse(*await read_request(reader))
            seen.append(request)
            writer.write(answer(request))
            await writer.drain()

    async with Scripted(serve) as url:
        yield url.removesuffix("/mcp"), seen


def plain(request: Request) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


CASES: list[tuple[str, str, dict[str, str], bytes | None]] = [
    ("POST", "/mcp", {}, b"{}"),
    ("POST", "/mcp", {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}, b"[]"),
    ("POST", "/mcp", {"Mcp-Session-Id": "abc-123", "MCP-Protocol-Version": "2025-11-25"}, b'{"id":1}'),
    ("POST", "/mcp", {"user-agent": "mine/1", "ACCEPT-ENCODING": "gzip"}, b"x" * 1_000_000),
    ("POST", "/mcp", {"X-Api-Key": "k e y", "Mcp-Name": "=?base64?Y2Fmw6k=?="}, b""),
    ("POST", "/a%20b/mcp?x=1&y=%C3%A9", {"Authorization": "Bearer t"}, b"{}"),
    ("GET", "/mcp", {"Accept": "text/event-stream", "Last-Event-ID": "7"}, None),
    ("DELETE", "/mcp", {"Mcp-Session-Id": "abc-123"}, None),
]


@pytest.mark.parametrize("defaults", [{}, {"X-Default": "1", "Accept": "*/*; q=0.5"}], ids=["httpx", "configured"])
@pytest.mark.parametrize(("method", "path", "headers", "body"), CASES)
async def test_a_request_reaches_the_server_as_httpx_sends_it(
    defaults: dict[str, str], method: str, path: str, headers: dict[str, str], body: bytes | None
) -> None:
    async with recorder(plain) as (base, seen):
        transport = Http11Transport()
        async with httpx.AsyncClient(transport=transport, headers=defaults, timeout=5.0) as http:
            direct = DirectRoute(http, transport, base + path)
            assert direct.usable and direct.allows(headers)
            reply = await direct.send(method, headers, body)
            assert reply is not None
            await reply.aread()
            await reply.aclose()
            answer = await http.request(method, base + path, headers=headers, content=body)
            assert answer.status_code == 200
    assert len(seen) == 2
    assert seen[0] == seen[1]


async def test_a_header_httpx_cannot_encode_is_refused_on_both_routes_before_anything_is_sent() -> None:
    async with recorder(plain) as (base, seen):
        transport = Http11Transport()
        async with httpx.AsyncClient(transport=transport, timeout=5.0) as http:
            direct = DirectRoute(http, transport, base + "/mcp")
            with pytest.raises(UnicodeEncodeError):
                await direct.send("POST", {"X-Name": "caf\u00e9"}, b"{}")
            with pytest.raises(UnicodeEncodeError):
                await http.post(base + "/mcp", headers={"X-Name": "caf\u00e9"}, content=b"{}")
    assert seen == []


def test_a_client_with_a_header_that_is_not_ascii_is_refused_at_once() -> None:
    with pytest.raises(ClientError, match="the header 'X-Name' is not ASCII"):
        Client("http://127.0.0.1:9/mcp", headers={"X-Name": "caf\u00e9"})


def mcp_server(modern: bool) -> Any:
    """Enough of an MCP server for a conversation: ``server/discover`` (when ``modern``) or
    ``initialize``, ``tools/list``, ``tools/call`` (the echo of its arguments)."""

    def answer(request: Request) -> bytes:
        line, _, body = request
        if not line.startswith(b"POST "):
            return b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n"
        message = orjson.loads(body)
        method, id = message.get("method"), message.get("id")
        extra = b""
        if id is None:
            return b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
        if method == "server/discover" and modern:
            info = {"io.modelcontextprotocol/serverInfo": {"name": "recorder", "version": "1"}}
            result: Any = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "_meta": info}
        elif method == "server/discover":
            error = {"code": -32601, "message": "Method not found"}
            return reply(orjson.dumps({"jsonrpc": "2.0", "id": id, "error": error}))
        elif method == "initialize":
            info = {"name": "recorder", "version": "1"}
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": info}
            extra = b"Mcp-Session-Id: s-1\r\n"
        elif method == "tools/list":
            result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        else:
            text = orjson.dumps(message["params"]["arguments"]).decode()
            result = {"content": [{"type": "text", "text": text}]}
        return reply(orjson.dumps({"jsonrpc": "2.0", "id": id, "result": result}), extra)

    def reply(body: bytes, extra: bytes = b"") -> bytes:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n"
        return head % (extra, len(body)) + body

    return answer


async def conversation(url: str, protocol: str | None) -> None:
    async with Client(url, protocol=protocol, headers={"X-Api-Key": "k"}, timeout=10) as client:
        await client.list_tools()
        for text in ("one", "caf\u00e9", "x" * 100_000):
            assert (await client.call_tool("echo", {"text": text})).text == orjson.dumps({"text": text}).decode()


@pytest.mark.parametrize("protocol", [None, "2025-11-25"], ids=["2026-07-28", "2025-11-25"])
async def test_a_conversation_reaches_the_server_the_same_with_and_without_the_direct_route(
    protocol: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with recorder(mcp_server(protocol is None)) as (base, seen):
        await conversation(f"{base}/mcp", protocol)
        with_direct = seen[:]
        monkeypatch.setattr(DirectRoute, "allows", lambda self, headers: False)
        await conversation(f"{base}/mcp", protocol)
        through_httpx = seen[len(with_direct) :]
    assert len(with_direct) >= 5
    assert sorted(with_direct) == sorted(through_httpx)
