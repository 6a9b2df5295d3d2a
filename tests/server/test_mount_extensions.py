"""A mounted server's extensions come through (tests/servers/board.py and workshop.py over
stdio, both eras): MCP Apps views keep ``_meta.ui`` with their ``ui://`` URI prefixed as the
resource is, the parent offers the extensions and answers their methods, its skills are
listed beside the parent's at the prefix (checked by the TypeScript SDK's skills client
too), its task tools run as the parent's tasks; unmounting withdraws them, and a method the
parent answers already makes the mount fail with nothing left."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.servers.board import VOTES, Votes, make_board
from tests.servers.workshop import SKILLS, make_library
from tests.support.helpers import MODERN, node_binary
from tests.support.rawclient import RawClient, modern_meta, toolwire_command
from toolwire import Client, Server
from toolwire.cards import SERVER_CARD_EXTENSION, ServerCards
from toolwire.client import TaskCancelled
from toolwire.server.extensions import Endpoint
from toolwire.skills import SKILLS_EXTENSION

SERVERS = Path(__file__).resolve().parents[1] / "servers"
BOARD = str(SERVERS / "board.py")
WORKSHOP = str(SERVERS / "workshop.py")
NODE = Path(__file__).resolve().parents[1] / "interop" / "node"
VIEW = "ui://games/board/view.html"
MOUNTED_SKILL = "skill://lib/pdf-processing/SKILL.md"


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_mounted_servers_views_and_extension_methods_come_through(era: str) -> None:
    def request(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        params = dict(params or {})
        if era == "modern":
            params["_meta"] = modern_meta()
        return client.request(method, params)["result"]  # type: ignore[no-any-return]

    with RawClient(toolwire_command(f"{BOARD}:mounted")) as client:
        if era == "legacy":
            capabilities = client.initialize()["result"]["capabilities"]
        else:
            capabilities = request("server/discover")["capabilities"]
        tools = {tool["name"]: tool for tool in request("tools/list")["tools"]}
        contents = request("resources/read", {"uri": VIEW})["contents"]
        counted = request("votes/count")
    assert capabilities["extensions"] == {
        "io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]},
        "com.example/votes": {"ballot": "secret"},
    }
    shown, reset = tools["games_show_board_votes"]["_meta"], tools["games_reset_board_votes"]["_meta"]
    assert shown == {"ui": {"resourceUri": VIEW}, "ui/resourceUri": VIEW}
    assert reset == {"ui": {"resourceUri": VIEW, "visibility": ["app"]}, "ui/resourceUri": VIEW}
    assert contents[0]["uri"] == VIEW and contents[0]["text"] == "<p>the board</p>"
    assert contents[0]["mimeType"] == "text/html;profile=mcp-app"
    assert counted["votes"] == 3 and counted["server"] == "arcade"


def test_unmounting_withdraws_the_extensions_the_mount_offered() -> None:
    board = make_board()
    parent = Server("arcade")
    parent.mount(board, "games")
    assert sorted(parent.extensions) == ["com.example/votes", "io.modelcontextprotocol/ui"]
    parent.unmount("games")
    assert not parent.extensions and "votes/count" not in parent.dispatch
    assert not list(parent.registry.all()) and not list(parent.resources.all())


def test_a_mount_whose_extension_method_the_parent_answers_fails_leaving_nothing() -> None:
    board = make_board()
    parent = Server("arcade")
    parent.dispatch.register("votes/count", lambda session, request: None)
    with pytest.raises(ValueError, match=r"'com\.example/votes' cannot answer votes/count: the server itself does"):
        parent.mount(board, "games")
    assert not parent.extensions and not list(parent.registry.all()) and not list(parent.resources.all())
    assert "games" not in parent._mounts


async def test_an_extension_comes_through_two_mounts() -> None:
    arcade = Server("arcade")
    arcade.mount(make_board(), "games")
    mall = Server("mall")
    mall.mount(arcade, "arcade")
    async with Client(mall, extensions={VOTES: {}}) as client:
        counted = await client.request("votes/count")
        tools = {tool.name: tool for tool in await client.list_tools()}
    assert (counted["votes"], counted["server"]) == (3, "mall")
    assert client.server_extensions[VOTES] == {"ballot": "secret"}
    assert tools["arcade_games_show_board_votes"].meta["ui"]["resourceUri"] == "ui://arcade/games/board/view.html"


@pytest.mark.parametrize("era", ["2025-11-25", MODERN])
async def test_a_mounted_servers_skills_are_listed_beside_the_parents_at_its_prefix(era: str) -> None:
    async with Client(toolwire_command(WORKSHOP), protocol=era) as client:
        listed = await client.request("skills/list", {})
        got = await client.request("skills/get", {"uri": MOUNTED_SKILL})
        folder = await client.request("resources/directory/read", {"uri": "skill://lib/pdf-processing/scripts"})
        files = {entry["uri"]: await client.read_resource(entry["uri"]) for entry in got["skill"]["resources"]}
        extensions = client.server_extensions
    assert [entry["uri"] for entry in listed["skills"]] == ["skill://git-workflow/SKILL.md", MOUNTED_SKILL]
    assert got["skill"] == listed["skills"][1] and got["skill"]["frontmatter"]["name"] == "pdf-processing"
    assert sorted(files) == [
        MOUNTED_SKILL,
        "skill://lib/pdf-processing/references/FORMS.md",
        "skill://lib/pdf-processing/scripts/extract.py",
    ]
    script = (SKILLS / "pdf-processing" / "scripts" / "extract.py").read_text()
    assert files["skill://lib/pdf-processing/scripts/extract.py"][0].text == script
    assert [entry["uri"] for entry in folder["resources"]] == ["skill://lib/pdf-processing/scripts/extract.py"]
    assert extensions[SKILLS_EXTENSION] == {"directoryRead": True}


@pytest.mark.parametrize("era", ["legacy", MODERN])
def test_the_typescript_sdk_skills_client_verifies_a_mounted_servers_skills(era: str) -> None:
    done = subprocess.run(
        [str(node_binary()), str(NODE / "sdk_skills_client.mjs"), era, *toolwire_command(WORKSHOP)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=NODE,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert "error" not in seen, seen["error"]
    assert [skill["uri"] for skill in seen["skills"]] == ["skill://git-workflow/SKILL.md", MOUNTED_SKILL]
    assert all(file["verified"] for skill in seen["skills"] for file in skill["files"])
    assert sorted(seen["skills"][1]["children"]) == [
        ["SKILL.md", "text/markdown"],
        ["references", "inode/directory"],
        ["scripts", "inode/directory"],
    ]


def test_unmounting_withdraws_the_mounted_skills_and_the_extension_only_when_nothing_is_left() -> None:
    bare, skilled = Server("bare"), Server("skilled")
    skilled.add_skill(SKILLS / "git-workflow")
    for parent in (bare, skilled):
        parent.mount(make_library(), "lib")
        parent.mount(make_library(), "annex")
        parent.unmount("lib")
    assert [uri for uri in bare._skills().all()] == ["skill://annex/pdf-processing/SKILL.md"]
    bare.unmount("annex")
    skilled.unmount("annex")
    assert SKILLS_EXTENSION not in bare.extensions and "skills/list" not in bare.dispatch
    assert list(skilled._skills().all()) == ["skill://git-workflow/SKILL.md"]


async def test_skills_come_through_two_mounts() -> None:
    workshop = Server("workshop")
    workshop.mount(make_library(), "lib")
    campus = Server("campus")
    campus.mount(workshop, "workshop")
    async with Client(campus) as client:
        listed = await client.request("skills/list", {})
        read = await client.read_resource(listed["skills"][0]["uri"])
    assert [entry["uri"] for entry in listed["skills"]] == ["skill://workshop/lib/pdf-processing/SKILL.md"]
    assert read[0].text.startswith("---\nname: pdf-processing")


@pytest.mark.parametrize("era", ["2025-11-25", MODERN])
async def test_a_mounted_servers_task_tools_run_as_the_parents_tasks(era: str) -> None:
    async with Client(toolwire_command(WORKSHOP), protocol=era) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        bound = await (await client.start_task("lib_bind", {"title": "Ulysses"})).result()
        cancelled = await client.start_task("lib_hold", {})
        assert (await cancelled.refresh()).status == "working"
        await cancelled.cancel()
        with pytest.raises(TaskCancelled, match="cancelled by request"):
            await cancelled.result()
        assert (await cancelled.refresh()).status == "cancelled"
        held = await client.start_task("lib_hold", {})
        await client.call_tool("lib_release", {})
        released = await client.task(held.id or "").result()
    assert tools["lib_bind"].task_support == ("optional" if era != MODERN else None)  # 2026-07-28 does not list it
    assert (bound.text, released.text) == ("bound Ulysses", "held, then released")


async def test_an_extension_the_child_offers_once_mounted_comes_through_with_its_next_list_change() -> None:
    child = Server("child")
    parent = Server("parent")
    parent.mount(child, "late")
    child.add_skill(SKILLS / "git-workflow")  # its files are a list change
    async with Client(parent) as client:
        listed = await client.request("skills/list", {})
        extensions = client.server_extensions
    assert [entry["uri"] for entry in listed["skills"]] == ["skill://late/git-workflow/SKILL.md"]
    assert extensions == {SKILLS_EXTENSION: {"directoryRead": True}}
    parent.unmount("late")
    assert not parent.extensions


def test_a_later_extension_whose_method_the_parent_answers_is_left_out_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    child = Server("child")
    parent = Server("parent")
    parent.dispatch.register("votes/count", lambda session, request: None)
    parent.mount(child, "late")
    child.add_extension(Votes())

    @child.tool
    def tally() -> str:
        return "3"

    assert "late_tally" in parent.registry and VOTES not in parent.extensions
    assert "mounting 'late': the extension 'com.example/votes' is not offered" in caplog.text
    assert "cannot answer votes/count: the server itself does" in caplog.text


def test_the_parents_server_card_is_its_own_and_a_mounted_servers_card_stays_with_it() -> None:
    child = make_library()
    child.add_extension(ServerCards(name="com.example/library", description="Books, bound and held."))
    bare = Server("bare")
    bare.mount(child, "lib")
    carded = Server("com.example/hall")
    cards = ServerCards(description="The hall and its library.")
    carded.add_extension(cards)
    carded.mount(make_library(), "lib")
    card = cards.card(Endpoint("https://hall.example/mcp", (MODERN,), None))
    assert SERVER_CARD_EXTENSION not in bare.extensions
    assert (card["name"], card["description"]) == ("com.example/hall", "The hall and its library.")
    assert not {"tools", "resources", "capabilities"} & set(card)  # a card lists none (SEP-2127's schema)
