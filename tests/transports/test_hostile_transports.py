"""The messages an adversarial pass found crashing the core, over a real stdio process and
real HTTP: each gets its own precise error, and what follows it is served."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest

from tests.support.httpserve import BASE, LIBRARY, MODERN, meta, open_session, toolwire_http
from tests.support.rawclient import RawClient, toolwire_command

BAD_LEVEL = {"jsonrpc": "2.0", "id": "level", "method": "logging/setLevel", "params": {"level": ["debug"]}}
BAD_META_LEVEL = {
    "jsonrpc": "2.0",
    "id": "meta",
    "method": "tools/list",
    "params": {"_meta": meta(**{"io.modelcontextprotocol/logLevel": {"min": "debug"}})},
}
BAD_RESPONSE_ID = {"jsonrpc": "2.0", "id": [1], "result": {}}


@pytest.fixture(scope="module")
def http() -> Iterator[str]:
    with toolwire_http(LIBRARY) as (url, _process):
        yield url


def test_stdio_answers_each_and_keeps_the_rest_of_the_read() -> None:
    with RawClient(toolwire_command(LIBRARY)) as client:
        client.initialize()
        lines = [BAD_LEVEL, BAD_META_LEVEL, BAD_RESPONSE_ID, {"jsonrpc": "2.0", "id": "after", "method": "ping"}]
        client.send_raw(b"".join(orjson.dumps(line) + b"\n" for line in lines))
        answers = {}
        while "after" not in answers:
            message = client.receive()
            answers[message.get("id")] = message
    assert answers["level"]["error"]["code"] == -32602 and "log level" in answers["level"]["error"]["message"]
    assert answers["meta"]["error"]["code"] == -32602
    assert answers[None]["error"]["code"] == -32600  # the response with a list for an id
    assert answers["after"]["result"] == {}


async def test_http_refuses_each_with_a_json_rpc_error_not_a_500(http: str) -> None:
    async with httpx.AsyncClient(timeout=10) as client:
        session = await open_session(client, http)
        level = await client.post(http, json=BAD_LEVEL, headers=session)
        modern = await client.post(
            http, json=BAD_META_LEVEL, headers={**BASE, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}
        )
        response = await client.post(http, json=BAD_RESPONSE_ID, headers=session)
        ping = await client.post(http, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=session)
    answers: list[dict[str, Any]] = []
    for reply in (level, modern, response):
        assert reply.status_code in (200, 400), (reply.status_code, reply.text)
        assert reply.headers["content-type"].startswith("application/json"), reply.text
        answers.append(reply.json())
    assert [answer["error"]["code"] for answer in answers] == [-32602, -32602, -32600]
    assert ping.status_code == 200 and ping.json()["result"] == {}
