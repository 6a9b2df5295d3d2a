"""A poll board: an MCP Apps server whose tool results a host shows in an interactive view.

The model starts a poll with ``start_poll``; a host that renders MCP Apps (``toolwire dev``,
Claude, VS Code...) shows the board (``apps_board.html``, served as ``ui://poll-board/board.html``)
where people click to vote. Each click calls ``vote``, a tool only the board may call: the
model never sees it (its visibility is ``["app"]``), and ``poll_results`` tells the model
how the votes stand. A client that renders no views gets the same tools' text.

    toolwire dev examples/apps_server.py      # call start_poll, then click on the board
"""

from __future__ import annotations

from pathlib import Path

from toolwire import Server, ToolError, ToolResult
from toolwire.apps import App

server = Server("poll-board", instructions="Start a poll with start_poll; read how it stands with poll_results.")

#: Each poll's options and their votes, by question (in memory: one process, for a demo).
POLLS: dict[str, dict[str, int]] = {}

board = App(
    "ui://poll-board/board.html",
    path=Path(__file__).with_name("apps_board.html"),
    name="Poll board",
    description="A poll's options as buttons to vote with, and the votes so far.",
    prefers_border=True,
)


def _standing(question: str) -> ToolResult:
    """The poll as text for the model and as data for the board."""
    tallies = POLLS[question]
    said = ", ".join(f"{option}: {votes}" for option, votes in tallies.items())
    return ToolResult(f"{question} ({said})", structured={"question": question, "tallies": tallies})


@server.tool(app=board)
def start_poll(question: str, options: list[str]) -> ToolResult:
    """Start a poll that people answer by clicking on the board the host shows.

    Args:
        question: what the poll asks.
        options: 2 to 8 different answers to choose from.
    """
    chosen = [option.strip() for option in options if option.strip()]
    if not 2 <= len(set(chosen)) == len(chosen) <= 8:
        raise ToolError("a poll needs 2 to 8 different, non-empty options")
    POLLS[question] = dict.fromkeys(chosen, 0)
    return _standing(question)


@server.tool(app=board.visible_to("app"))
def vote(question: str, option: str) -> ToolResult:
    """Count one vote for an option of a poll (the board calls it when someone clicks)."""
    tallies = POLLS.get(question)
    if tallies is None or option not in tallies:
        raise ToolError(f"no option {option!r} in a poll {question!r}")
    tallies[option] += 1
    return _standing(question)


@server.tool(read_only=True)
def poll_results(question: str) -> ToolResult:
    """How the votes of a poll stand."""
    if question not in POLLS:
        raise ToolError(f"no poll {question!r}: start it with start_poll")
    return _standing(question)


if __name__ == "__main__":
    server.run()
