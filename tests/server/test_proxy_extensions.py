"""A proxied server's extensions come through: ``toolwire proxy`` of a server run as a process
of its own (tests/servers/workshop.py: MCP Apps views, skills, the extension
``com.example/votes``), over stdio and HTTP, in both eras; the TypeScript SDK's skills client
verifies the skills through the proxy; an MCP Apps server written with the official
packages (tests/interop/node/ext_apps_server.mjs: the TypeScript SDK's ``McpServer`` and
``@modelcontextprotocol/ext-apps``'s ``registerAppTool``/``registerAppResource``) keeps its
views through the proxy, read back by the official client and checked with the package's
schemas; and the reference server, which declares no extension, is proxied as before (the
extensions the proxy declares to it change nothing).

(The npm reference server ``@modelcontextprotocol/server-everything`` the tests install
offers no extension, no ``_meta.ui`` and no ``ui://`` resource.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.server.test_proxy import EVERYTHING
from tests.support.helpers import MODERN, node_binary
from tests.support.httpserve import free_port, toolwire_http, wait_for_port
from tests.support.rawclient import toolwire_command
from toolwire import Server
from toolwire.apps import MCP_APP_MIME, UI_EXTENSION
from toolwire.client import Client, ServerError
from toolwire.proxy import proxy
from toolwire.skills import SKILLS_EXTENSION

ROOT = Path(__file__).resolve().parents[2]
WORKSHOP = str(ROOT / "tests" / "servers" / "workshop.py")
NODE = ROOT / "tests" / "interop" / "node"
ERAS = ["2025-11-25", MODERN]
VOTES = "com.example/votes"
VIEW = "ui://games/board/view.html"
MOUNTED_SKILL = "skill://lib/pdf-processing/SKILL.md"
SDK_APPS = NODE / "ext_apps_server.mjs"
CLOCK = "ui://clock/view.html"
#: What the proxy of the reference server may offer: tasks, its own (for the target's task tools).
TASKS_ONLY = {"io.modelcontextprotocol/tasks"}


def proxy_command(*options: str) -> list[str]:
    """``toolwire proxy OPTIONS -- toolwire run workshop.py``: two processes, over stdio."""
    return [sys.executable, "-m", "toolwire", "proxy", *options, "--", *toolwire_command(WORKSHOP)]


async def seen_through(client: Client) -> dict[str, Any]:
    """What a client sees of the workshop's extensions."""
    tools = {tool.name: tool for tool in await client.list_tools()}
    return {
        "extensions": client.server_extensions,
        "ui": {
            name: (tools[name].meta or {}).get("ui") for name in ("games_show_board_votes", "games_reset_board_votes")
        },
        "view": [entry.raw for entry in await client.read_resource(VIEW)],
        "skills": await client.request("skills/list", {}),
        "skill": await client.request("skills/get", {"uri": MOUNTED_SKILL}),
        "folder": await client.request("resources/directory/read", {"uri": "skill://lib/pdf-processing/scripts"}),
        "script": [entry.text for entry in await client.read_resource("skill://lib/pdf-processing/scripts/extract.py")],
    }


@pytest.mark.parametrize("era", ERAS)
async def test_toolwire_proxy_passes_the_targets_extensions_through(era: str) -> None:
    async with Client(toolwire_command(WORKSHOP), protocol=era) as direct:
        expected = await seen_through(direct)
    async with Client(proxy_command(), protocol=era) as client:
        seen = await seen_through(client)
        with pytest.raises(ServerError) as unknown:
            await client.request("votes/count")  # an extension's methods the proxy was not told of
    for listing in ("skills", "skill", "folder"):
        for hint in ("ttlMs", "cacheScope"):
            assert (hint in seen[listing]) is (era == MODERN)  # the proxy's own caching hints
    # a target speaking 2026-07-28 to the proxy lists no tool's task support: the proxy runs
    # the calls in their requests (the target's tasks driven by its client), offering no tasks
    expected["extensions"].pop("io.modelcontextprotocol/tasks", None)
    assert seen == expected
    extensions = seen["extensions"]
    assert extensions[UI_EXTENSION] == {"mimeTypes": [MCP_APP_MIME]}
    assert extensions[SKILLS_EXTENSION] == {"directoryRead": True} and extensions[VOTES] == {"ballot": "secret"}
    assert seen["ui"] == {
        "games_show_board_votes": {"resourceUri": VIEW},
        "games_reset_board_votes": {"resourceUri": VIEW, "visibility": ["app"]},
    }
    assert seen["view"] == [{"uri": VIEW, "mimeType": MCP_APP_MIME, "text": "<p>the board</p>"}]
    assert [entry["uri"] for entry in seen["skills"]["skills"]] == ["skill://git-workflow/SKILL.md", MOUNTED_SKILL]
    assert unknown.value.code == -32601


@pytest.mark.parametrize("era", ERAS)
async def test_the_methods_of_an_extension_named_to_the_proxy_are_forwarded(era: str) -> None:
    command = proxy_command("--extension-method", f"{VOTES}=votes/count")
    async with Client(command, protocol=era, extensions={VOTES: {}}) as client:
        counted = await client.request("votes/count")
    assert (counted["votes"], counted["server"]) == (3, "workshop")  # the target answered
    assert "resultType" not in counted or era == MODERN


async def test_a_proxy_of_a_target_over_http_passes_its_extensions_through() -> None:
    with toolwire_http(WORKSHOP) as (url, _):
        target = proxy(url, extension_methods={VOTES: ["votes/count"]})
        async with Client(target, protocol="2025-11-25") as client:
            seen = await seen_through(client)
            counted = await client.request("votes/count")
            with pytest.raises(ServerError) as missing:
                await client.request("skills/get", {"uri": "skill://lib/no-such-skill/SKILL.md"})
    assert set(seen["extensions"]) == {UI_EXTENSION, SKILLS_EXTENSION, VOTES}
    assert seen["view"][0]["text"] == "<p>the board</p>" and counted["votes"] == 3
    assert missing.value.code == -32602 and missing.value.data == {"uri": "skill://lib/no-such-skill/SKILL.md"}


@pytest.mark.parametrize("era", ["legacy", MODERN])
def test_the_typescript_sdk_skills_client_verifies_skills_through_the_proxy(era: str) -> None:
    done = subprocess.run(
        [str(node_binary()), str(NODE / "sdk_skills_client.mjs"), era, *proxy_command()],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=NODE,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert "error" not in seen, seen["error"]
    assert seen["directoryRead"] is True
    assert [skill["uri"] for skill in seen["skills"]] == ["skill://git-workflow/SKILL.md", MOUNTED_SKILL]
    assert all(file["verified"] for skill in seen["skills"] for file in skill["files"])


@pytest.mark.parametrize("era", ERAS)
async def test_the_reference_server_without_extensions_is_proxied_as_before(era: str) -> None:
    command = [sys.executable, "-m", "toolwire", "proxy", "--", str(node_binary()), str(EVERYTHING), "stdio"]
    async with Client(command, protocol=era) as client:
        tools = {tool.name for tool in await client.list_tools()}
        echoed = await client.call_tool("echo", {"message": "through"})
        extensions = client.server_extensions
        with pytest.raises(ServerError) as missing:
            await client.request("skills/list", {})
    assert {"echo", "get-sum"} <= tools and echoed.text == "Echo: through"
    assert TASKS_ONLY.issuperset(extensions)
    assert missing.value.code == -32601


@pytest.mark.parametrize("era", ERAS)
async def test_a_mounted_proxy_brings_its_targets_extensions_prefixed(era: str) -> None:
    parent = Server("hall")
    parent.mount(proxy(toolwire_command(WORKSHOP), extension_methods={VOTES: ["votes/count"]}), "remote")
    async with Client(parent, protocol=era, extensions={VOTES: {}}) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        uri = (tools["remote_games_show_board_votes"].meta or {})["ui"]["resourceUri"]
        view = await client.read_resource(uri)
        counted = await client.request("votes/count")
        skills = await client.request("skills/list", {})
        got = await client.request("skills/get", {"uri": f"skill://remote/{MOUNTED_SKILL[8:]}"})
        folder = await client.request("resources/directory/read", {"uri": "skill://remote/lib/pdf-processing"})
        files = [(await client.read_resource(entry["uri"]))[0].uri for entry in got["skill"]["resources"]]
        with pytest.raises(ServerError) as outside:
            await client.request("skills/get", {"uri": MOUNTED_SKILL})  # the target's own URI
        extensions = client.server_extensions
    assert (view[0].uri, view[0].text) == (uri, "<p>the board</p>")  # the URI read, not the target's
    assert counted["votes"] == 3 and extensions[VOTES] == {"ballot": "secret"}
    assert extensions[UI_EXTENSION] == {"mimeTypes": [MCP_APP_MIME]}
    assert extensions[SKILLS_EXTENSION] == {"directoryRead": True}
    assert [entry["uri"] for entry in skills["skills"]] == [
        "skill://remote/git-workflow/SKILL.md",
        "skill://remote/lib/pdf-processing/SKILL.md",
    ]
    assert got["skill"] == skills["skills"][1] and files == [entry["uri"] for entry in got["skill"]["resources"]]
    assert all(entry["uri"].startswith("skill://remote/lib/pdf-processing/") for entry in folder["resources"])
    assert outside.value.code == -32602 and outside.value.data == {"uri": MOUNTED_SKILL}


async def seen_of_the_sdk_server(client: Client) -> dict[str, Any]:
    return {
        "extensions": client.server_extensions,
        "tools": [(tool.name, tool.meta) for tool in await client.list_tools()],
        "view": [entry.raw for entry in await client.read_resource(CLOCK)],
    }


@pytest.mark.parametrize("era", ERAS)
async def test_an_sdk_written_apps_server_keeps_its_views_through_the_proxy(era: str) -> None:
    sdk_server = [str(node_binary()), str(SDK_APPS)]
    async with Client(sdk_server, protocol="2025-11-25") as direct:  # it speaks no 2026-07-28
        expected = await seen_of_the_sdk_server(direct)
    async with Client([sys.executable, "-m", "toolwire", "proxy", "--", *sdk_server], protocol=era) as client:
        seen = await seen_of_the_sdk_server(client)
    assert seen == expected
    assert seen["extensions"] == {UI_EXTENSION: {"mimeTypes": [MCP_APP_MIME]}}
    assert seen["tools"] == [("show-clock", {"ui": {"resourceUri": CLOCK}, "ui/resourceUri": CLOCK})]
    assert seen["view"][0]["_meta"] == {"ui": {"prefersBorder": True}}


def test_the_official_client_reads_an_sdk_apps_server_through_the_proxy_over_http() -> None:
    port = free_port()
    command = [sys.executable, "-m", "toolwire", "proxy", "--http", str(port), "--", str(node_binary()), str(SDK_APPS)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, process)
        done = subprocess.run(
            [str(node_binary()), str(NODE / "ext_apps_check.mjs"), f"http://127.0.0.1:{port}/mcp"],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=NODE,
        )
    finally:
        process.terminate()
        process.wait(10)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["serverCapability"] == {"mimeTypes": [MCP_APP_MIME]}
    tool = seen["tools"]["show-clock"]
    assert tool["issues"] == [] and tool["meta"] == tool["sdk"]
    assert seen["views"][CLOCK] == [
        {"mimeType": MCP_APP_MIME, "isHtml": True, "issues": [], "ui": {"prefersBorder": True}}
    ]
