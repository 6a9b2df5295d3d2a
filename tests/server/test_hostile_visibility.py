"""Every path that lists or runs a tool applies the same check as ``tools/list`` and
``tools/call``, against real server processes (tests/servers/board.py) over stdio in both
eras: ``search_tools`` and ``call_tool`` (of the server, and of a proxy) neither find nor
run a tool MCP Apps reserves for its view, nor one hidden from the caller; a mount serves
nothing its server hides from everyone; low-level handlers' tools follow the rules; a
version of a tool is called only when the caller's scopes allow it (over HTTP with a
token)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from tests.support.httpserve import InProcess, fresh_server
from tests.support.rawclient import RawClient, modern_meta, toolwire_command
from tests.support.tokenissuer import TokenIssuer
from toolwire import Client
from toolwire.auth import ProtectedResource
from toolwire.client import ServerError

SERVERS = Path(__file__).resolve().parents[1] / "servers"
BOARD = str(SERVERS / "board.py")
PROXY = str(SERVERS / "board_proxy.py")
VERSIONED = str(SERVERS / "versioned_vault.py")
VERSION = "io.toolwire/version"
ERAS = ["legacy", "modern"]


class Board:
    """A client of one era to a server of tests/servers/board.py."""

    def __init__(self, client: RawClient, era: str) -> None:
        self.client = client
        self.era = era
        if era == "legacy":
            client.initialize()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        params = dict(params or {})
        if self.era == "modern":
            params["_meta"] = modern_meta()
        return self.client.request(method, params, timeout=30)

    def names(self) -> list[str]:
        return [tool["name"] for tool in self.request("tools/list")["result"]["tools"]]

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments or {}})

    def text(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        result = self.call(name, arguments)["result"]
        assert not result.get("isError"), result
        return result["content"][0]["text"]  # type: ignore[no-any-return]

    def refused(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        """The error text of a call that must fail as the call of an unknown tool."""
        answer = self.call(name, arguments)
        if "error" in answer:
            assert answer["error"]["code"] == -32602, answer
            return answer["error"]["message"]  # type: ignore[no-any-return]
        assert answer["result"]["isError"], answer
        return answer["result"]["content"][0]["text"]  # type: ignore[no-any-return]

    def found(self, query: str) -> list[str]:
        result = self.call("search_tools", {"query": query, "limit": 50})["result"]
        return [tool["name"] for tool in result["structuredContent"]["tools"]]


@pytest.mark.parametrize("target", [f"{BOARD}:server", PROXY], ids=["server", "proxy"])
@pytest.mark.parametrize("era", ERAS)
def test_search_neither_finds_nor_runs_a_tool_reserved_for_the_view(target: str, era: str) -> None:
    with RawClient(toolwire_command(target)) as client:
        board = Board(client, era)
        assert board.names() == ["search_tools", "call_tool"]
        assert board.found("reset the votes on the board") == ["games_show_board_votes"]
        refused = board.refused("call_tool", {"name": "games_reset_board_votes"})
        assert "Unknown tool: games_reset_board_votes" in refused
        assert board.text("call_tool", {"name": "games_show_board_votes"}) == "3 votes"
        assert "Unknown tool" in board.refused("call_tool", {"name": "games_wipe_board_votes"})
        assert board.text("games_reset_board_votes") == "votes reset"  # the view's own way: tools/call


@pytest.mark.parametrize("era", ERAS)
def test_a_mount_serves_nothing_its_server_hides_from_everyone(era: str) -> None:
    with RawClient(toolwire_command(f"{BOARD}:mounted")) as client:
        board = Board(client, era)
        assert board.names() == ["games_show_board_votes", "games_reset_board_votes"]
        assert "games_wipe_board_votes" in board.refused("games_wipe_board_votes")


@pytest.mark.parametrize("era", ERAS)
def test_low_level_handlers_tools_follow_the_visibility_rules(era: str) -> None:
    with RawClient(toolwire_command(f"{BOARD}:raw")) as client:
        board = Board(client, era)
        assert board.names() == ["public_votes"]
        assert board.text("public_votes") == "public_votes ran"
        assert "Unknown tool: secret_votes" in board.refused("secret_votes")


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_a_version_needing_scopes_the_caller_lacks_is_none_of_theirs_over_http(era: str) -> None:
    async with TokenIssuer() as issuer:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        auth = ProtectedResource.for_issuer(issuer.url, url)
        app = fresh_server(VERSIONED).http_app(auth=auth)
        async with InProcess(app, listener=listener):
            headers = {"Authorization": f"Bearer {issuer.token(url, scope='tools')}"}
            async with Client(url, protocol=era, headers=headers) as client:
                newest = await client.call_tool("rotate_keys", {})
                with pytest.raises(ServerError, match="has no version '1'") as refused:
                    await client.call_tool("rotate_keys", {}, meta={VERSION: "1"})
            admin = {"Authorization": f"Bearer {issuer.token(url, scope='tools admin')}"}
            async with Client(url, protocol=era, headers=admin) as client:
                older = await client.call_tool("rotate_keys", {}, meta={VERSION: "1"})
    assert newest.content[0].text == "your key rotated" and refused.value.code == -32602
    assert older.content[0].text == "every key rotated"
