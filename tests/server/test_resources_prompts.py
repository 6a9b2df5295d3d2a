"""Resources, resource templates, prompts and completion: on the wire per protocol version,
through toolwire's Client (in memory and over real stdio pipes), and with bad input."""

from __future__ import annotations

import asyncio
import base64
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import LEGACY, MODERN, meta, open_peer
from toolwire import Server, UriTemplate
from toolwire.client import Client, ImageContent, ResourceLink, ServerError, TextContent

sys.path.insert(0, str(Path(__file__).parents[1] / "servers"))
import library

ALL = [*LEGACY, MODERN]
LIBRARY = str(Path(__file__).parents[1] / "servers" / "library.py")
NOT_FOUND = {MODERN: -32602}  # legacy versions: -32002


# -- on the wire -----------------------------------------------------------------------------


@pytest.mark.parametrize("version", ALL)
async def test_capabilities_name_what_the_server_offers(version: str) -> None:
    peer = await open_peer(library.server, version)
    if version == MODERN:
        capabilities = (await peer.request("server/discover"))["result"]["capabilities"]
    else:
        capabilities = peer.initialize_result["capabilities"]
    assert capabilities["resources"] == {"subscribe": True, "listChanged": True}
    assert capabilities["prompts"] == {"listChanged": True}
    assert ("completions" in capabilities) == (version != "2024-11-05")


@pytest.mark.parametrize("version", ALL)
async def test_resources_are_listed_with_the_fields_of_the_version(version: str) -> None:
    peer = await open_peer(library.server, version)
    result = (await peer.request("resources/list"))["result"]
    readme = result["resources"][0]
    assert [r["uri"] for r in result["resources"]] == [
        "library://readme",
        "library://logo",
        "library://catalog",
        "library://shelves",
        "library://secret",
    ]
    assert readme["name"] == "readme" and readme["description"] == "How to use the library."
    assert readme["mimeType"] == "text/markdown"
    assert result["resources"][1]["size"] == len(library.PNG)
    newer = version >= "2025-06-18"
    assert ("title" in readme) == newer and ("_meta" in readme) == newer
    assert ("icons" in readme) == (version >= "2025-11-25")
    assert readme["annotations"]["priority"] == 0.9
    assert ("lastModified" in readme["annotations"]) == newer
    assert ("ttlMs" in result) == (version == MODERN)
    templates = (await peer.request("resources/templates/list"))["result"]["resourceTemplates"]
    assert templates == [
        {
            "uriTemplate": "library://books/{id}",
            "name": "book",
            "description": "A book's title by its id.",
            "mimeType": "text/plain",
        },
        {"uriTemplate": "library://search{?genre,year}", "name": "search"},
    ]


@pytest.mark.parametrize("version", ALL)
async def test_reading_text_binary_json_and_several_contents(version: str) -> None:
    peer = await open_peer(library.server, version)

    async def read(uri: str) -> list[dict[str, Any]]:
        answer = await peer.request("resources/read", {"uri": uri})
        return answer["result"]["contents"]  # type: ignore[no-any-return]

    assert await read("library://readme") == [
        {"uri": "library://readme", "mimeType": "text/markdown", "text": "# The library\nAsk for books by id."}
    ]
    [logo] = await read("library://logo")
    assert logo["mimeType"] == "image/png" and base64.b64decode(logo["blob"]) == library.PNG
    assert await read("library://catalog") == [
        {"uri": "library://catalog", "mimeType": "application/json", "text": '{"books":4}'}
    ]
    assert await read("library://shelves") == [
        {"uri": "library://shelves/1", "text": "A-M"},
        {"uri": "library://shelves/2", "blob": base64.b64encode(b"N-Z").decode()},
    ]
    assert await read("library://books/3") == [
        {"uri": "library://books/3", "mimeType": "text/plain", "text": "Ulysses"}
    ]
    [found] = await read("library://search?year=1965&genre=science%20fiction")
    assert found["text"] == "genre=science fiction year=1965"
    assert (await read("library://search"))[0]["text"] == "genre=any year=0"


@pytest.mark.parametrize("version", ALL)
async def test_missing_resources_get_the_code_of_the_version_and_name_the_uri(version: str) -> None:
    peer = await open_peer(library.server, version)
    code = NOT_FOUND.get(version, -32002)
    for uri, detail in [
        ("library://nothing", ""),
        ("library://books/99", ""),  # the function raised ResourceNotFound
        ("library://books/abc", '"abc" is not of type "integer"'),  # does not fit the parameter's type
    ]:
        error = (await peer.request("resources/read", {"uri": uri}))["error"]
        assert error["code"] == code and error["data"] == {"uri": uri}
        assert error["message"].startswith(f"Resource not found: {uri}") and detail in error["message"]
    error = (await peer.request("resources/read", {"uri": 42}))["error"]
    assert error["code"] == -32602 and error["message"] == 'Invalid params: "uri" must be a string'


@pytest.mark.parametrize("version", ALL)
async def test_prompts_are_listed_and_rendered_per_version(version: str) -> None:
    peer = await open_peer(library.server, version)
    prompts = (await peer.request("prompts/list"))["result"]["prompts"]
    recommend = prompts[0]
    assert [p["name"] for p in prompts] == ["recommend", "cover", "ask-name", "broken"]
    assert recommend["arguments"] == [
        {"name": "genre", "description": "The genre to pick from", "required": True},
        {"name": "audience", "description": "Who the books are for", "required": False},
        {"name": "count", "description": "How many books", "required": False},
    ]
    assert ("title" in recommend) == (version >= "2025-06-18")
    result = (await peer.request("prompts/get", {"name": "recommend", "arguments": {"genre": "poetry", "count": "3"}}))[
        "result"
    ]
    assert result["description"] == "Ask for book recommendations."
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Recommend 3 poetry book(s) for adults."}},
        {"role": "assistant", "content": {"type": "text", "text": "Here are my picks:"}},
    ]
    cover = (await peer.request("prompts/get", {"name": "cover"}))["result"]
    assert cover["description"] == "A cover to describe"
    assert cover["messages"][0]["content"]["type"] == "image"
    assert cover["messages"][1] == {"role": "user", "content": {"type": "text", "text": "What does this cover show?"}}


@pytest.mark.parametrize("version", ["2025-11-25", MODERN])
async def test_bad_prompt_requests_say_what_is_wrong(version: str) -> None:
    peer = await open_peer(library.server, version)

    async def error(params: dict[str, Any]) -> dict[str, Any]:
        return (await peer.request("prompts/get", params))["error"]  # type: ignore[no-any-return]

    unknown = await error({"name": "nope"})
    assert unknown["code"] == -32602 and unknown["message"] == "Invalid params: unknown prompt 'nope'"
    missing = await error({"name": "recommend", "arguments": {"colour": "red"}})
    assert missing == {
        "code": -32602,
        "message": "Invalid params: prompt 'recommend': missing required argument genre; unknown argument colour",
    }
    wrong = await error({"name": "recommend", "arguments": {"genre": "poetry", "count": "many"}})
    assert wrong["code"] == -32602 and "count" in wrong["message"] and "integer" in wrong["message"]
    assert (await error({"name": "recommend", "arguments": ["poetry"]}))["code"] == -32602
    broken = await error({"name": "broken"})
    assert broken == {
        "code": -32603,
        "message": "Internal error: prompts/get broken failed: RuntimeError: the prompt store is down",
    }


@pytest.mark.parametrize("version", ALL)
async def test_completion_of_prompt_arguments_and_template_variables(version: str) -> None:
    peer = await open_peer(library.server, version)

    async def complete(ref: dict[str, Any], name: str, value: str, **context: str) -> Any:
        params: dict[str, Any] = {"ref": ref, "argument": {"name": name, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        answer = await peer.request("completion/complete", params)
        return answer.get("result", answer.get("error"))

    prompt = {"type": "ref/prompt", "name": "recommend"}
    assert (await complete(prompt, "genre", "h"))["completion"] == {
        "values": ["history", "horror"],
        "total": 2,
        "hasMore": False,
    }
    kids = await complete(prompt, "genre", "h", audience="kids")
    assert kids["completion"]["values"] == ["history"]
    assert (await complete(prompt, "audience", "K"))["completion"]["values"] == ["kids"]
    assert (await complete(prompt, "count", ""))["completion"] == {"values": [], "total": 0, "hasMore": False}
    template = {"type": "ref/resource", "uri": "library://books/{id}"}
    assert (await complete(template, "id", "1"))["completion"]["values"] == ["1", "10"]
    assert (await complete({"type": "ref/prompt", "name": "nope"}, "x", ""))["code"] == -32602
    assert (await complete({"type": "ref/resource", "uri": "library://none/{x}"}, "x", ""))["code"] == -32602
    assert (await complete({"type": "ref/tool", "name": "x"}, "x", ""))["code"] == -32602


async def test_completion_sends_at_most_100_values() -> None:
    server = Server("many")

    @server.prompt(complete={"word": [f"w{i:03}" for i in range(250)]})
    def spell(word: str) -> str:
        return word

    peer = await open_peer(server, MODERN)
    params = {"ref": {"type": "ref/prompt", "name": "spell"}, "argument": {"name": "word", "value": "w"}}
    completion = (await peer.request("completion/complete", params))["result"]["completion"]
    assert len(completion["values"]) == 100 and completion["total"] == 250 and completion["hasMore"] is True


async def test_a_server_without_resources_or_prompts_refuses_their_methods() -> None:
    server = Server("tools-only")

    @server.tool
    def noop() -> str:
        return ""

    for version in ("2025-11-25", MODERN):
        peer = await open_peer(server, version)
        for method, what in [
            ("resources/list", "resources"),
            ("prompts/get", "prompts"),
            ("completion/complete", "completions"),
        ]:
            error = (await peer.request(method, {"name": "x"}))["error"]
            assert error == {"code": -32601, "message": f"Method not found: this server offers no {what}"}


@pytest.mark.parametrize("version", ["2025-06-18", MODERN])
async def test_registered_resources_link_and_embed_into_tool_results(version: str) -> None:
    peer = await open_peer(library.server, version)
    [link] = (await peer.call("linked"))["result"]["content"]
    assert link["type"] == "resource_link" and link["uri"] == "library://readme" and link["name"] == "readme"
    [embedded] = (await peer.call("embedded"))["result"]["content"]
    assert embedded == {
        "type": "resource",
        "resource": {"uri": "library://books/2", "mimeType": "text/plain", "text": "Emma"},
    }


async def test_pages_of_resources_and_prompts() -> None:
    server = Server("paged", page_size=2)
    for index in range(5):
        server.add_resource(f"mem://{index}", f"text {index}")
        server.add_prompt(lambda: "hi", name=f"p{index}")
    peer = await open_peer(server, MODERN)
    for method, key in [("resources/list", "resources"), ("prompts/list", "prompts")]:
        seen, cursor = [], None
        while True:
            result = (await peer.request(method, {"cursor": cursor} if cursor else {}))["result"]
            seen += result[key]
            cursor = result.get("nextCursor")
            if cursor is None:
                break
        assert len(seen) == 5
    tools_cursor = (await peer.request("prompts/list"))["result"]["nextCursor"]
    error = (await peer.request("resources/list", {"cursor": tools_cursor}))["error"]  # another list's cursor
    assert error["code"] == -32602 and "invalid cursor" in error["message"]


# -- subscriptions and list changes ------------------------------------------------------------


async def test_legacy_subscriptions_and_list_changes() -> None:
    peer = await open_peer(library.server, "2025-11-25")
    assert (await peer.request("resources/subscribe", {"uri": "library://readme"}))["result"] == {}
    await peer.call("change", {"uri": "library://readme"})
    await peer.call("change", {"uri": "library://logo"})  # not subscribed: no update
    methods = [(n["method"], n.get("params")) for n in peer.notifications]
    assert ("notifications/resources/updated", {"uri": "library://readme"}) in methods
    assert ("notifications/resources/updated", {"uri": "library://logo"}) not in methods
    assert ("notifications/prompts/list_changed", {}) in methods
    assert (await peer.request("resources/unsubscribe", {"uri": "library://readme"}))["result"] == {}
    peer.notifications.clear()
    await peer.call("change", {"uri": "library://readme"})
    assert "notifications/resources/updated" not in [n["method"] for n in peer.notifications]


async def test_modern_subscriptions_deliver_what_was_asked_for() -> None:
    peer = await open_peer(library.server, MODERN)
    listen = await peer.send(
        "subscriptions/listen",
        {
            "notifications": {
                "resourceSubscriptions": ["library://readme"],
                "promptsListChanged": True,
                "toolsListChanged": False,
            }
        },
    )
    await peer.call("change", {"uri": "library://readme"})
    await peer.call("change", {"uri": "library://logo"})
    by_method = {n["method"]: n["params"] for n in peer.notifications}
    tag = {"io.modelcontextprotocol/subscriptionId": listen}
    assert by_method["notifications/subscriptions/acknowledged"] == {
        "_meta": tag,
        "notifications": {"promptsListChanged": True, "resourceSubscriptions": ["library://readme"]},
    }
    updates = [n["params"] for n in peer.notifications if n["method"] == "notifications/resources/updated"]
    assert updates == [{"_meta": tag, "uri": "library://readme"}]
    assert by_method["notifications/prompts/list_changed"] == {"_meta": tag}
    assert "notifications/tools/list_changed" not in by_method
    assert (await peer.request("resources/subscribe", {"uri": "x"}))["error"]["code"] == -32601


# -- 2026-07-28 input rounds -------------------------------------------------------------------


async def test_prompts_and_reads_can_ask_the_user_in_either_era() -> None:
    asked: list[str] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        if params["message"] == "Password?":
            return {"action": "accept", "content": {"password": "open sesame"}}
        return {"action": "accept", "content": {"name": "Ada"}}

    for protocol in ("2025-11-25", MODERN):
        async with Client(library.server, protocol=protocol, elicitation=elicit) as client:
            prompt = await client.get_prompt("ask-name")
            assert (
                isinstance(prompt.messages[0].content, TextContent) and prompt.messages[0].content.text == "Greet Ada"
            )
            [contents] = await client.read_resource("library://secret")
            assert contents.text == "the treasure"
    assert asked == ["Your name?", "Password?"] * 2
    peer = await open_peer(library.server, MODERN)  # no elicitation capability: -32021
    error = (await peer.request("prompts/get", {"name": "ask-name"}))["error"]
    assert error["code"] == -32021 and error["data"] == {"requiredCapabilities": {"elicitation": {}}}
    first = (await peer.request("prompts/get", {"name": "ask-name", "_meta": meta({"elicitation": {}})}))["result"]
    assert first["resultType"] == "input_required" and "requestState" in first


# -- the client ------------------------------------------------------------------------------


async def client_session_checks(client: Client) -> None:
    resources = await client.list_resources()
    assert [r.uri for r in resources][:2] == ["library://readme", "library://logo"]
    templates = await client.list_resource_templates()
    assert templates[0].variables == ["id"] and templates[0].expand(id=10) == "library://books/10"
    [text] = await client.read_resource(templates[0].expand(id=10))
    assert text.text == "Beloved" and text.mime_type == "text/plain"
    [logo] = await client.read_resource("library://logo")
    assert logo.bytes() == library.PNG
    with pytest.raises(ServerError) as missing:
        await client.read_resource("library://books/404")
    assert missing.value.code in (-32002, -32602) and missing.value.data == {"uri": "library://books/404"}
    prompts = {p.name: p for p in await client.list_prompts()}
    assert prompts["recommend"].required_arguments == ["genre"]
    rendered = await client.get_prompt("recommend", {"genre": "fiction", "count": 2})
    assert [m.role for m in rendered.messages] == ["user", "assistant"]
    cover = await client.get_prompt("cover")
    assert isinstance(cover.messages[0].content, ImageContent)
    with pytest.raises(ServerError, match="missing required argument genre"):
        await client.get_prompt("recommend")
    completion = await client.complete("genre", "f", prompt="recommend")
    assert completion.values == ["fantasy", "fiction"] and completion.total == 2
    by_template = await client.complete("id", "", resource_template="library://books/{id}")
    assert by_template.values == ["1", "2", "3", "10"]
    linked = await client.call_tool("linked")
    if client.version == "2024-11-05":  # no resource_link yet: the link comes as text
        assert linked.text == "Resource Read me: library://readme"
        return
    link = linked.content[0]
    assert isinstance(link, ResourceLink)
    [linked_contents] = await client.read_resource(link.uri)
    assert linked_contents.text is not None and linked_contents.text.startswith("# The library")


@pytest.mark.parametrize("protocol", ["2024-11-05", "2025-11-25", MODERN])
async def test_client_in_memory(protocol: str) -> None:
    async with Client(library.server, protocol=protocol) as client:
        await client_session_checks(client)


@pytest.mark.parametrize("protocol", ["2025-06-18", None])
async def test_client_over_stdio(protocol: str | None) -> None:
    async with Client(LIBRARY, protocol=protocol) as client:
        assert client.modern == (protocol is None)
        await client_session_checks(client)


@pytest.mark.parametrize("protocol", ["2025-11-25", MODERN])
async def test_client_subscriptions_and_list_changes(protocol: str) -> None:
    updated: list[str] = []
    prompts_changed = asyncio.Event()
    async with Client(
        LIBRARY, protocol=protocol, on_resource_updated=updated.append, on_prompts_changed=prompts_changed.set
    ) as client:
        await client.subscribe_resource("library://readme")
        await client.call_tool("change", {"uri": "library://readme"})
        await client.call_tool("change", {"uri": "library://logo"})
        await asyncio.wait_for(prompts_changed.wait(), 5)
        for _ in range(100):
            if updated:
                break
            await asyncio.sleep(0.02)
        assert updated == ["library://readme"]
        await client.unsubscribe_resource("library://readme")
        await client.call_tool("change", {"uri": "library://readme"})
        await asyncio.sleep(0.1)
        assert updated == ["library://readme"]


def test_uri_templates_round_trip() -> None:
    template = UriTemplate("file:///{+path}{?page,size}{#section}")
    values = {"path": "docs/a b/index.md", "page": "2", "size": "10", "section": "intro"}
    uri = template.expand(values)
    assert uri == "file:///docs/a%20b/index.md?page=2&size=10#intro"
    assert template.match(uri) == values
    assert UriTemplate("x://{a}/{b}").match("x://1/2/3") is None
    for bad in ["x://{a", "x://{!a}", "x://{a}{a}", "x://}"]:
        with pytest.raises(ValueError, match="invalid URI template"):
            UriTemplate(bad)


def test_registration_mistakes_are_refused_clearly() -> None:
    server = Server("mistakes")
    with pytest.raises(ValueError, match="no parameter for id"):
        server.resource("x://{id}")(lambda: "x")
    with pytest.raises(ValueError, match="not in the template and have no default"):

        @server.resource("x://{id}")
        def needs_more(id: str, other: str) -> str:
            return id

    with pytest.raises(ValueError, match="must take no arguments"):

        @server.resource("x://fixed")
        def takes(id: str) -> str:
            return id

    server.add_resource("x://one", "one")
    with pytest.raises(ValueError, match="already registered"):
        server.add_resource("x://one", "again")
    with pytest.raises(ValueError, match="cannot complete 'nope'"):
        server.prompt(name="topical", complete={"nope": []})(lambda topic: topic)
    with pytest.raises(ValueError, match="invalid prompt name '<lambda>': pass name="):
        server.prompt(lambda: "x")
