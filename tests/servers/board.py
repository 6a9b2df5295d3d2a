"""A voting board with an MCP Apps view (a tool for the model, one only the view may call,
one its server hides from everyone) and an extension method, served mounted, searched,
and by low-level handlers, for tests/server/test_hostile_visibility.py.

Objects: ``board`` (the board itself), ``mounted`` (a server mounting it as ``games``),
``server`` (the same, listing ``search_tools`` and ``call_tool`` instead), ``raw`` (tools
of low-level handlers, one hidden by a rule).
"""

from __future__ import annotations

from typing import Any

from toolwire import Extension, MethodCall, Server, method
from toolwire.apps import App

VOTES = "com.example/votes"
view = App("ui://board/view.html", html="<p>the board</p>")


class Votes(Extension):
    id = VOTES

    def settings(self) -> dict[str, Any]:
        return {"ballot": "secret"}

    @method("votes/count", declared=False)
    async def count(self, call: MethodCall) -> dict[str, Any]:
        return {"votes": 3, "server": call.server.name}


def make_board() -> Server:
    board = Server("board", exclude_tags={"admin"})

    @board.tool(app=view)
    def show_board_votes() -> str:
        """Show the votes on the board."""
        return "3 votes"

    @board.tool(app=view.visible_to("app"))
    def reset_board_votes() -> str:
        """Reset the votes on the board (for the board's own reset button)."""
        return "votes reset"

    @board.tool(tags={"admin"})
    def wipe_board_votes() -> str:
        """Wipe the votes on the board for good."""
        return "wiped"

    board.add_extension(Votes())
    return board


board = make_board()

mounted = Server("arcade")
mounted.mount(make_board(), "games")

server = Server("arcade", tool_search=True)
server.mount(make_board(), "games")

raw = Server("raw")
raw.visibility.everyone.disable("secret_votes")


@raw.list_tools_handler
def list_raw_tools() -> list[dict[str, Any]]:
    schema = {"type": "object"}
    return [{"name": "public_votes", "inputSchema": schema}, {"name": "secret_votes", "inputSchema": schema}]


@raw.call_tool_handler
def call_raw_tool(name: str, arguments: dict[str, Any]) -> str:
    return f"{name} ran"
