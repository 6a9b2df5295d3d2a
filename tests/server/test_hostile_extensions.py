"""Extension methods whose handlers misbehave, against a real server process
(tests/servers/hostile_extension.py) over stdio and HTTP in both eras: a result JSON cannot
carry is answered -32603 naming the method (never left unanswered), and a plain function
that blocks runs on a worker thread (pings and other clients are answered meanwhile)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.servers.hostile_extension import UNSENDABLE, Hostile
from tests.support.httpserve import (
    LEGACY,
    meta,
    modern_headers,
    open_session,
    read_sse,
    sse_messages,
    toolwire_http,
)
from tests.support.rawclient import RawClient, modern_meta, toolwire_command
from toolwire import Extension, MethodCall, Server, method

HOSTILE = str(Path(__file__).resolve().parents[1] / "servers" / "hostile_extension.py")
KINDS = sorted(UNSENDABLE)
METHODS = ["hostile/result", "hostile/plain_result"]


def internal_error_naming(answer: dict[str, Any], method: str) -> None:
    error = answer["error"]
    assert error["code"] == -32603 and method in error["message"], error


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_result_json_cannot_carry_is_an_internal_error_over_stdio(era: str) -> None:
    with RawClient(toolwire_command(HOSTILE)) as client:
        if era == "legacy":
            client.initialize()
        for method in METHODS:
            for kind in KINDS:
                params: dict[str, Any] = {"kind": kind}
                if era == "modern":
                    params["_meta"] = modern_meta()
                internal_error_naming(client.request(method, params), method)
        echo: dict[str, Any] = {"name": "echo", "arguments": {"text": "still here"}}
        if era == "modern":
            echo["_meta"] = modern_meta()
        assert client.request("tools/call", echo)["result"]["content"][0]["text"] == "still here"


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_any_answer_json_cannot_carry_is_an_internal_error_not_silence(era: str) -> None:
    """Beyond extensions: a list guard that puts a set in the page (the session's own net)."""
    with RawClient(toolwire_command(HOSTILE)) as client:
        if era == "legacy":
            client.initialize()
        spoiled = {**modern_meta(), "spoil": True} if era == "modern" else {"spoil": True}
        internal_error_naming(client.request("tools/list", {"_meta": spoiled}), "tools/list")
        plain: dict[str, Any] = {"_meta": modern_meta()} if era == "modern" else {}
        assert [tool["name"] for tool in client.request("tools/list", plain)["result"]["tools"]] == ["echo"]


def answer_of(reply: httpx.Response) -> dict[str, Any]:
    if reply.headers["content-type"].startswith("text/event-stream"):
        return sse_messages(reply)[-1]  # type: ignore[no-any-return]
    return reply.json()  # type: ignore[no-any-return]


async def test_a_result_json_cannot_carry_is_an_internal_error_over_http_in_both_eras() -> None:
    with toolwire_http(HOSTILE) as (url, _process):
        async with httpx.AsyncClient(timeout=10) as http:
            session = await open_session(http, url, LEGACY)
            for method in METHODS:
                for number, kind in enumerate(KINDS):
                    legacy = {"jsonrpc": "2.0", "id": number, "method": method, "params": {"kind": kind}}
                    internal_error_naming(answer_of(await http.post(url, json=legacy, headers=session)), method)
                    modern = {**legacy, "params": {"kind": kind, "_meta": meta()}}
                    reply = await http.post(url, json=modern, headers=modern_headers(method))
                    internal_error_naming(answer_of(reply), method)


def test_a_plain_handler_that_blocks_holds_up_neither_pings_nor_other_requests_over_stdio() -> None:
    with RawClient(toolwire_command(HOSTILE)) as client:
        client.initialize()
        client.send({"jsonrpc": "2.0", "id": "blocked", "method": "hostile/block", "params": {}})
        assert client.receive()["method"] == "notifications/hostile/blocking"  # it blocks from now on
        assert "result" in client.request("ping")
        echo = client.request("tools/call", {"name": "echo", "arguments": {"text": "meanwhile"}})
        assert echo["result"]["content"][0]["text"] == "meanwhile"
        assert "result" in client.request("hostile/release", {})
        assert client.wait_for("blocked")["result"] == {"released": True}


async def test_a_plain_handler_that_blocks_holds_up_no_other_client_over_http() -> None:
    def body(id: int, method: str) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id, "method": method, "params": {"_meta": meta()}}

    with toolwire_http(HOSTILE) as (url, _process):
        async with httpx.AsyncClient(timeout=30) as first, httpx.AsyncClient(timeout=10) as other:
            headers = modern_headers("hostile/block")
            async with first.stream("POST", url, json=body(1, "hostile/block"), headers=headers) as blocked:
                events = read_sse(blocked)
                assert (await anext(events)).message["method"] == "notifications/hostile/blocking"
                found = await other.post(
                    url, json=body(2, "server/discover"), headers=modern_headers("server/discover")
                )
                assert "result" in answer_of(found)  # answered while the handler blocks
                await other.post(url, json=body(3, "hostile/release"), headers=modern_headers("hostile/release"))
                assert (await anext(events)).message["result"]["released"] is True


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_an_extension_that_fails_to_install_or_takes_a_method_leaves_nothing_of_itself(era: str) -> None:
    with RawClient(toolwire_command(HOSTILE)) as client:
        extra: dict[str, Any] = {"_meta": modern_meta()} if era == "modern" else {}
        if era == "legacy":
            capabilities = client.initialize()["result"]["capabilities"]
        else:
            capabilities = client.request("server/discover", dict(extra))["result"]["capabilities"]
        assert sorted(capabilities["extensions"]) == ["com.example/hostile"]
        assert client.request("broken/hello", dict(extra))["error"]["code"] == -32601
        tools = client.request("tools/list", dict(extra))["result"]["tools"]
        assert [tool["name"] for tool in tools] == ["echo"] and "_meta" not in tools[0]
        assert "resources" not in capabilities
        echo = client.request("tools/call", {"name": "echo", "arguments": {"text": "mine"}, **extra})
        assert echo["result"]["content"][0]["text"] == "mine"


def test_an_extension_is_refused_a_method_the_server_or_another_extension_answers() -> None:
    from tests.servers.hostile_extension import REFUSED

    assert REFUSED[0] == "the install failed half-way"
    assert REFUSED[1] == "the extension 'com.example/grabby' cannot answer tools/call: the server itself does"

    class Initializer(Extension):
        id = "com.example/initializer"

        @method("initialize")
        async def initialize(self, call: MethodCall) -> dict[str, Any]:
            return {}

    class Impostor(Extension):
        id = "com.example/impostor"

        @method("hostile/result")
        async def result(self, call: MethodCall) -> dict[str, Any]:
            return {}

    server = Server("s")
    server.add_extension(Hostile())
    with pytest.raises(ValueError, match=r"'com\.example/initializer' cannot answer initialize: the server itself"):
        server.add_extension(Initializer())
    with pytest.raises(ValueError, match=r"'com\.example/impostor' cannot answer hostile/result: the extension 'com"):
        server.add_extension(Impostor())
    assert sorted(server.extensions) == ["com.example/hostile"]
    assert server.dispatch.get("tools/call").owner == ""  # type: ignore[union-attr]
