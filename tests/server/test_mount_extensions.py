"""A mounted server's extensions come through (tests/servers/board.py over stdio, both eras):
MCP Apps views keep ``_meta.ui`` with their ``ui://`` URI prefixed as the resource is, the
parent offers the extensions and answers their methods; unmounting withdraws them, and a
method the parent answers already makes the mount fail with nothing left."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.servers.board import VOTES, make_board
from tests.support.rawclient import RawClient, modern_meta, toolwire_command
from toolwire import Client, Server

BOARD = str(Path(__file__).resolve().parents[1] / "servers" / "board.py")
VIEW = "ui://games/board/view.html"


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
