"""MCP Apps against the official implementation: npm's ``@modelcontextprotocol/ext-apps``
(its schemas and its server helpers), through the official TypeScript SDK's client over
Streamable HTTP, reads toolwire's example server; and the view a toolwire server declares
validates against the JSON Schema the package ships. (Its ``App`` class driving a view
in ``toolwire dev``: tests/cli/test_dev.py.)"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema

from tests.support.helpers import node_binary
from tests.support.httpserve import toolwire_http
from toolwire import Client, Server
from toolwire.apps import MCP_APP_MIME, UI_EXTENSION, App, Csp

ROOT = Path(__file__).resolve().parents[2]
NODE = ROOT / "tests" / "interop" / "node"
EXT_APPS = NODE / "node_modules" / "@modelcontextprotocol" / "ext-apps" / "dist" / "src"
BOARD = "ui://poll-board/board.html"


def test_the_official_packages_read_the_example_as_they_would_their_own() -> None:
    with toolwire_http(str(ROOT / "examples" / "apps_server.py")) as (url, _):
        done = subprocess.run(
            [str(node_binary()), str(NODE / "ext_apps_check.mjs"), url],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=NODE,
        )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["constants"] == {
        "EXTENSION_ID": UI_EXTENSION,
        "RESOURCE_MIME_TYPE": MCP_APP_MIME,
        "RESOURCE_URI_META_KEY": "ui/resourceUri",
    }
    assert seen["serverCapability"] == {"mimeTypes": [MCP_APP_MIME]}
    assert set(seen["tools"]) == {"start_poll", "vote"}
    for name, tool in seen["tools"].items():
        assert tool["issues"] == [], name
        assert tool["meta"] == tool["sdk"], name  # as the SDK's registerAppTool declares it
    assert seen["tools"]["vote"]["meta"]["ui"]["visibility"] == ["app"]
    [view] = seen["views"][BOARD]
    assert view == {"mimeType": MCP_APP_MIME, "isHtml": True, "issues": [], "ui": {"prefersBorder": True}}


def schema(name: str) -> dict[str, Any]:
    """One definition of the JSON Schema ``@modelcontextprotocol/ext-apps`` ships."""
    definitions = json.loads((EXT_APPS / "generated" / "schema.json").read_text())["$defs"]
    return definitions[name]  # type: ignore[no-any-return]


async def test_every_field_a_view_and_its_tools_declare_fits_the_packages_schema() -> None:
    view = App(
        "ui://full/view.html",
        html="<!doctype html><p>all</p>",
        csp=Csp(
            connect_domains=["https://api.example.com", "wss://live.example.com"],
            resource_domains=["https://*.cdn.example.com"],
            frame_domains=["https://www.youtube.com"],
            base_uri_domains=["https://cdn.example.com"],
        ),
        permissions=["camera", "microphone", "geolocation", "clipboardWrite"],
        domain="a904794854a047f6.example-content.com",
        prefers_border=False,
    )
    server = Server("full")
    server.add_tool(lambda: "shown", name="show", app=view)
    server.add_tool(lambda: "both", name="both", app=view.visible_to("model", "app"))
    server.add_tool(lambda: "app", name="app_only", app=view.visible_to("app"))
    async with Client(server, extensions={UI_EXTENSION: {"mimeTypes": [MCP_APP_MIME]}}) as client:
        tools = await client.list_tools()
        [entry] = await client.read_resource("ui://full/view.html")
    for tool in tools:
        assert tool.meta is not None
        jsonschema.validate(tool.meta["ui"], schema("McpUiToolMeta"))
    ui = entry.raw["_meta"]["ui"]
    assert set(ui) == {"csp", "permissions", "domain", "prefersBorder"}
    assert set(ui["csp"]) == {"connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"}
    jsonschema.validate(ui, schema("McpUiResourceMeta"))
    jsonschema.validate({"mimeTypes": [MCP_APP_MIME]}, schema("McpUiClientCapabilities"))
