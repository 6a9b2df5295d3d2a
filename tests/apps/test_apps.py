"""MCP Apps authoring (SEP-1865): a tool's view declared with ``@server.tool(app=...)``, served
as a ``ui://`` resource with its ``_meta.ui``, the tool's ``_meta.ui`` in ``tools/list``, the
extension advertised in both eras, app-only tools, and what a client that renders no views
gets. The server in memory (raw peers and the Client), over stdio and over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import LEGACY, MODERN, open_peer
from tests.support.httpserve import fresh_server, toolwire_http
from toolwire import Client, Context, Extension, Server
from toolwire.apps import MCP_APP_MIME, UI_EXTENSION, App, AppsExtension, Csp, renders_apps

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = str(ROOT / "examples" / "apps_server.py")
BOARD = "ui://poll-board/board.html"
RENDERS = {"extensions": {UI_EXTENSION: {"mimeTypes": [MCP_APP_MIME]}}}


def board_server() -> Server:
    return fresh_server(EXAMPLE)  # type: ignore[no-any-return]


async def listed(version: str, capabilities: dict[str, Any], method: str, params: dict[str, Any]) -> Any:
    peer = await open_peer(board_server(), version, capabilities)
    try:
        return (await peer.request(method, params))["result"]
    finally:
        await peer.connection.close()


@pytest.mark.parametrize("version", [*LEGACY, MODERN])
async def test_the_extension_is_advertised_with_the_view_mime_type_in_every_version(version: str) -> None:
    peer = await open_peer(board_server(), version, RENDERS)
    try:
        if peer.modern:
            capabilities = (await peer.request("server/discover"))["result"]["capabilities"]
        else:
            capabilities = peer.initialize_result["capabilities"]
    finally:
        await peer.connection.close()
    assert capabilities["extensions"] == {UI_EXTENSION: {"mimeTypes": ["text/html;profile=mcp-app"]}}


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", MODERN])
async def test_tools_name_their_view_and_an_app_only_tool_says_so(version: str) -> None:
    tools = {tool["name"]: tool for tool in (await listed(version, RENDERS, "tools/list", {}))["tools"]}
    assert tools["start_poll"]["_meta"] == {"ui": {"resourceUri": BOARD}, "ui/resourceUri": BOARD}
    assert tools["vote"]["_meta"] == {"ui": {"resourceUri": BOARD, "visibility": ["app"]}, "ui/resourceUri": BOARD}
    assert "_meta" not in tools["poll_results"]


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
async def test_before_2025_06_18_definitions_have_no_meta_and_the_tools_are_plain_tools(version: str) -> None:
    tools = (await listed(version, RENDERS, "tools/list", {}))["tools"]
    [entry] = (await listed(version, RENDERS, "resources/read", {"uri": BOARD}))["contents"]
    assert all("_meta" not in tool for tool in tools) and "_meta" not in entry


@pytest.mark.parametrize("version", [LEGACY[-1], MODERN])
async def test_the_view_is_served_once_with_its_mime_type_and_meta(version: str) -> None:
    resources = (await listed(version, RENDERS, "resources/list", {}))["resources"]
    assert resources == [
        {
            "uri": BOARD,
            "name": "Poll board",
            "description": "A poll's options as buttons to vote with, and the votes so far.",
            "mimeType": MCP_APP_MIME,
            "_meta": {"ui": {"prefersBorder": True}},
        }
    ]
    [entry] = (await listed(version, RENDERS, "resources/read", {"uri": BOARD}))["contents"]
    assert entry["uri"] == BOARD and entry["mimeType"] == MCP_APP_MIME
    assert entry["_meta"] == {"ui": {"prefersBorder": True}}
    assert entry["text"] == (ROOT / "examples" / "apps_board.html").read_text()


@pytest.mark.parametrize("version", [LEGACY[-1], MODERN])
async def test_a_client_that_renders_no_views_gets_the_same_tools_and_meaningful_text(version: str) -> None:
    async with Client(board_server(), protocol=version) as client:  # declares no extension
        assert [tool.name for tool in await client.list_tools()] == ["start_poll", "vote", "poll_results"]
        started = await client.call_tool("start_poll", {"question": "Tea?", "options": ["yes", "no"]})
        voted = await client.call_tool("vote", {"question": "Tea?", "option": "yes"})  # still callable
        standing = await client.call_tool("poll_results", {"question": "Tea?"})
    assert started.text == "Tea? (yes: 0, no: 0)" and started.structured == {
        "question": "Tea?",
        "tallies": {"yes": 0, "no": 0},
    }
    assert voted.text == standing.text == "Tea? (yes: 1, no: 0)"


async def test_a_view_from_a_file_is_read_fresh_and_its_csp_and_permissions_are_listed(tmp_path: Path) -> None:
    page = tmp_path / "view.html"
    page.write_text("<p>one</p>")
    view = App(
        "ui://files/view.html",
        path=page,
        csp=Csp(connect_domains=["https://api.example.com"], resource_domains=["https://*.cdn.example"]),
        permissions=["clipboardWrite", "camera"],
        domain="abc123.example-content.com",
    )
    server = Server("files")

    @server.tool(app=view)
    def show() -> str:
        """Shows it."""
        return "shown"

    async with Client(server) as client:
        first = await client.read_resource("ui://files/view.html")
        page.write_text("<p>two</p>")
        second = await client.read_resource("ui://files/view.html")
        [resource] = await client.list_resources()
    assert [first[0].text, second[0].text] == ["<p>one</p>", "<p>two</p>"]
    assert (
        resource.meta
        == first[0].raw["_meta"]
        == {
            "ui": {
                "csp": {"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://*.cdn.example"]},
                "permissions": {"clipboardWrite": {}, "camera": {}},
                "domain": "abc123.example-content.com",
            }
        }
    )


async def test_a_tool_learns_whether_its_caller_renders_views() -> None:
    server = Server("asks")

    @server.tool(app=App("ui://asks/view.html", html="<p>view</p>"))
    def where(ctx: Context) -> str:
        """Says where its result goes."""
        return "a view shows it" if renders_apps(ctx) else "text only"

    for version in (LEGACY[-1], MODERN):
        async with Client(server, protocol=version, extensions=RENDERS["extensions"]) as client:
            assert (await client.call_tool("where", {})).text == "a view shows it"
        async with Client(server, protocol=version) as client:
            assert (await client.call_tool("where", {})).text == "text only"


def test_the_tools_own_ui_meta_is_kept_and_one_view_serves_several_tools() -> None:
    server = Server("shared")
    view = App("ui://shared/view.html", html="<p>v</p>")
    server.add_tool(lambda: "a", name="first", app=view, meta={"ui": {"extra": 1}, "com.example/x": True})
    server.add_tool(lambda: "b", name="second", app=view.visible_to("model"))
    first, second = server.registry.all()
    assert first.definition["_meta"] == {
        "ui": {"extra": 1, "resourceUri": "ui://shared/view.html"},
        "com.example/x": True,
        "ui/resourceUri": "ui://shared/view.html",
    }
    assert second.definition["_meta"]["ui"] == {"resourceUri": "ui://shared/view.html", "visibility": ["model"]}
    assert len(server.resources.all()) == 1 and isinstance(server.extensions[UI_EXTENSION], AppsExtension)


def test_two_different_views_at_one_uri_are_refused() -> None:
    server = Server("clash")
    server.add_tool(lambda: "a", name="first", app=App("ui://clash/view.html", html="<p>1</p>"))
    with pytest.raises(ValueError, match=r"another view is served at ui://clash/view\.html"):
        server.add_tool(lambda: "b", name="second", app=App("ui://clash/view.html", html="<p>2</p>"))


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"uri": "https://example.com/view.html", "html": "x"}, "starts with ui://"),
        ({"uri": "ui://", "html": "x"}, "starts with ui://"),
        ({"uri": "ui://v"}, "one of them"),
        ({"uri": "ui://v", "html": "x", "path": "v.html"}, "one of them"),
        ({"uri": "ui://v", "path": "/nonexistent/v.html"}, "no file at"),
        ({"uri": "ui://v", "html": "x", "permissions": ["printer"]}, "unknown permission 'printer'"),
        ({"uri": "ui://v", "html": "x", "visibility": []}, "visibility lists"),
        ({"uri": "ui://v", "html": "x", "visibility": ["user"]}, "visibility lists"),
        ({"uri": "ui://v", "html": "x", "domain": "a.example; script-src *"}, "domain= is a host name"),
        ({"uri": "ui://v", "html": "x", "csp": {"connectDomains": []}}, "csp= is a toolwire.apps.Csp"),
    ],
)
def test_a_wrong_view_is_refused_saying_what_is_wrong(arguments: dict[str, Any], says: str) -> None:
    with pytest.raises(ValueError, match=says):
        App(**arguments)


@pytest.mark.parametrize("origin", ["api.example.com", "https://a.example 'unsafe-eval'", "https://a.example;", ""])
def test_a_csp_entry_that_is_not_an_origin_is_refused(origin: str) -> None:
    with pytest.raises(ValueError, match="is not an origin"):
        Csp(connect_domains=[origin])


def test_app_must_be_an_app_and_the_identifier_must_be_toolwires_extension() -> None:
    server = Server("wrong")
    with pytest.raises(TypeError, match=r"app= is a toolwire\.apps\.App"):
        server.add_tool(lambda: "a", name="first", app="ui://wrong/view.html")

    class Imposter(Extension):
        id = UI_EXTENSION

    server.add_extension(Imposter())
    with pytest.raises(TypeError, match="not toolwire's AppsExtension"):
        server.add_tool(lambda: "a", name="second", app=App("ui://wrong/view.html", html="x"))


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_example_over_a_real_transport(transport: str) -> None:
    async def check(target: Any) -> None:
        async with Client(target, extensions=RENDERS["extensions"]) as client:
            assert client.server_extensions == {UI_EXTENSION: {"mimeTypes": [MCP_APP_MIME]}}
            [view] = await client.read_resource(BOARD)
            await client.call_tool("start_poll", {"question": "Q", "options": ["a", "b"]})
            voted = await client.call_tool("vote", {"question": "Q", "option": "b"})
        assert view.mime_type == MCP_APP_MIME and "ui/initialize" in (view.text or "")
        assert voted.structured == {"question": "Q", "tallies": {"a": 0, "b": 1}}

    if transport == "stdio":
        await check(EXAMPLE)
    else:
        with toolwire_http(EXAMPLE) as (url, _):
            await check(url)
