"""The public extension API (SEP-2133): identifiers, capabilities in both eras, methods,
tool-definition fields, the declaration a 2026-07-28 request needs, and errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import LEGACY, MODERN, open_peer
from tests.support.httpserve import fresh_server, toolwire_http
from toolwire import Client, Extension, MethodCall, Server, method
from toolwire.client import ServerError

GREETINGS = "com.example/greetings"
DECLARED = {"extensions": {GREETINGS: {"style": "formal"}}}
SERVER = str(Path(__file__).parents[1] / "servers" / "greetings.py")


def greeting_server() -> Server:
    return fresh_server(SERVER)  # type: ignore[no-any-return]


def greetings() -> Extension:
    return greeting_server().extensions[GREETINGS]


@pytest.mark.parametrize("version", [*LEGACY, MODERN])
async def test_the_extension_is_advertised_with_its_settings_in_every_version(version: str) -> None:
    peer = await open_peer(greeting_server(), version, DECLARED)
    try:
        if peer.modern:
            capabilities = (await peer.request("server/discover"))["result"]["capabilities"]
        else:
            capabilities = peer.initialize_result["capabilities"]
    finally:
        await peer.connection.close()
    assert capabilities["extensions"] == {GREETINGS: {"languages": ["en", "fr"]}}
    assert "tools" in capabilities


@pytest.mark.parametrize("version", [LEGACY[-1], MODERN])
async def test_a_method_answers_and_notifies_in_both_eras(version: str) -> None:
    peer = await open_peer(greeting_server(), version, DECLARED)
    try:
        answer = await peer.request("greetings/hello", {"name": "Ada"})
    finally:
        await peer.connection.close()
    result = answer["result"]
    assert result["text"] == "Hello, Ada" and result["declared"] == {"style": "formal"}
    assert result["version"] == version
    assert [n["params"]["to"] for n in peer.notifications if n["method"] == "notifications/greetings/said"] == ["Ada"]


async def test_a_modern_request_that_does_not_declare_the_extension_gets_32021_saying_what_to_declare() -> None:
    peer = await open_peer(greeting_server(), MODERN, {})
    try:
        refused = (await peer.request("greetings/hello", {"name": "Ada"}))["error"]
        counted = (await peer.request("greetings/count"))["result"]  # declared=False
    finally:
        await peer.connection.close()
    assert refused["code"] == -32021 and GREETINGS in refused["message"]
    assert refused["data"] == {"requiredCapabilities": {"extensions": {GREETINGS: {}}}}
    assert counted["count"] == 1


@pytest.mark.parametrize(
    ("method_name", "params", "code", "words"),
    [
        ("greetings/hello", {"name": 7}, -32602, '"name" must be a string'),
        ("greetings/broken", {}, -32603, "greetings/broken failed"),
        ("greetings/wrong", {}, -32603, "greetings/wrong failed"),
        ("greetings/absent", {}, -32601, "Method not found"),
    ],
)
async def test_a_handler_that_fails_costs_its_request_only(
    method_name: str, params: Any, code: int, words: str
) -> None:
    peer = await open_peer(greeting_server(), MODERN, DECLARED)
    try:
        error = (await peer.request(method_name, params))["error"]
        still = await peer.call("wave", {"to": "Ada"})
    finally:
        await peer.connection.close()
    assert error["code"] == code and words in error["message"]
    assert "42" not in error["message"]  # what a handler raised stays in the server's log
    assert still["result"]["content"][0]["text"] == "*waves at Ada*"


@pytest.mark.parametrize("version", [LEGACY[-1], MODERN])
async def test_tool_definitions_carry_the_extensions_fields_merged_with_their_own(version: str) -> None:
    server = Server("greeter")

    @server.tool(meta={"com.example/own": 1})
    def wave(to: str) -> str:
        return to

    peer = await open_peer(server, version, DECLARED)
    try:
        before = (await peer.request("tools/list"))["result"]["tools"][0]
        server.add_extension(greetings())  # added later: the tools listed already get its fields
        after = (await peer.request("tools/list"))["result"]["tools"][0]
    finally:
        await peer.connection.close()
    assert before["_meta"] == {"com.example/own": 1}
    assert after["_meta"] == {"com.example/own": 1, "com.example/greetings/polite": True}


@pytest.mark.parametrize("identifier", ["greetings", "/greetings", "com.example/", "com..example/x", "1com/x", ""])
def test_a_malformed_identifier_is_refused_saying_what_one_looks_like(identifier: str) -> None:
    class Bad(Extension):
        id = identifier

    with pytest.raises(ValueError, match="vendor-prefix/name"):
        Server("s").add_extension(Bad())


def test_an_extension_is_added_once() -> None:
    server = greeting_server()
    with pytest.raises(ValueError, match="already"):
        server.add_extension(greetings())


def test_an_extension_is_off_until_added() -> None:
    server = Server("s")
    assert not server.extensions and "greetings/hello" not in server.dispatch


async def test_a_method_of_named_versions_is_not_found_in_others_with_the_routes_words() -> None:
    class Modern(Extension):
        id = "com.example/modern-only"

        @method("modern/thing", versions=[MODERN], declared=False)
        async def thing(self, call: MethodCall) -> dict[str, Any]:
            return {}

    server = Server("s")
    server.add_extension(Modern())
    peer = await open_peer(server, LEGACY[-1])
    try:
        error = (await peer.request("modern/thing"))["error"]
    finally:
        await peer.connection.close()
    assert error["code"] == -32601 and f"does not exist in {LEGACY[-1]}" in error["message"]


async def _greet(client: Client) -> tuple[dict[str, Any], list[str]]:
    said: list[str] = []
    stop = client.on_notification("notifications/greetings/said", lambda params: said.append(params["to"]))
    answer = await client.request("greetings/hello", {"name": "Ada"})
    stop()
    await client.request("greetings/hello", {"name": "Bob"})  # no longer heard
    return answer, said


@pytest.mark.parametrize("protocol", [LEGACY[-1], MODERN])
@pytest.mark.parametrize("transport", ["memory", "stdio", "http"])
async def test_a_client_declares_reads_calls_and_hears_an_extension(transport: str, protocol: str) -> None:
    declared = {GREETINGS: {"style": "formal"}}
    if transport == "http":
        with toolwire_http(SERVER) as (url, _process):
            async with Client(url, protocol=protocol, extensions=declared) as client:
                answer, said = await _greet(client)
                offered = client.server_extensions
    else:
        target = greeting_server() if transport == "memory" else SERVER
        async with Client(target, protocol=protocol, extensions=declared) as client:
            answer, said = await _greet(client)
            offered = client.server_extensions
    assert offered == {GREETINGS: {"languages": ["en", "fr"]}}
    assert answer["text"] == "Hello, Ada" and answer["declared"] == {"style": "formal"}
    assert said == ["Ada"]


async def test_a_client_that_does_not_declare_the_extension_reads_what_to_declare() -> None:
    async with Client(greeting_server(), protocol=MODERN) as client:
        with pytest.raises(ServerError) as refused:
            await client.request("greetings/hello", {"name": "Ada"})
    assert refused.value.code == -32021
    assert refused.value.data == {"requiredCapabilities": {"extensions": {GREETINGS: {}}}}


async def test_a_notification_callback_that_raises_is_logged_and_the_client_goes_on() -> None:
    async with Client(greeting_server(), extensions={GREETINGS: {}}) as client:
        client.on_notification("notifications/greetings/said", lambda params: 1 / 0)
        answer = await client.request("greetings/hello", {"name": "Ada"})
        assert answer["text"] == "Hello, Ada"
        assert (await client.call_tool("wave", {"to": "Ada"})).content[0].text == "*waves at Ada*"
