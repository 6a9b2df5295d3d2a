"""The table ``toolwire tools`` prints, drawn by rich: one row per tool with its name and
title, its annotation hints, its parameters and the first line of its description.

Hints are shown with the specification's defaults (a tool without annotations may be
destructive and reach the open world): dimmed when the server did not say, and
``destructive``/``idempotent`` only for tools that are not read-only, the only ones they
mean anything for. Every string from the server is shown as text (never as rich markup) and
without its control characters.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..client import ToolInfo
from .output import printable
from .schemas import parameters

HINTS = (
    ("readOnlyHint", "read-only", "green"),
    ("destructiveHint", "destructive", "red"),
    ("idempotentHint", "idempotent", ""),
    ("openWorldHint", "open-world", ""),
)


def print_tools(tools: list[ToolInfo], server_info: dict[str, Any], version: str | None) -> None:
    """Print the table of ``tools`` to stdout, under a line naming the server and protocol."""
    console = Console(highlight=False)
    server = " ".join(str(server_info[key]) for key in ("name", "version") if server_info.get(key)) or "the server"
    count = f"{len(tools)} tool{'' if len(tools) == 1 else 's'}" if tools else "no tools"
    heading = Text(printable(f"{server}: {count} (protocol {version})"))
    if not tools:
        console.print(heading)
        return
    table = Table(title=heading, caption="* required", show_lines=True)
    for column in ("tool", "hints", "parameters", "description"):
        table.add_column(column)
    for tool in tools:
        table.add_row(_name(tool), _hints(tool), _parameters(tool), Text(printable(_summary(tool.description))))
    console.print(table)


def _name(tool: ToolInfo) -> Text:
    text = Text(printable(tool.name), style="bold")
    if tool.display_name != tool.name:
        text.append("\n" + printable(str(tool.display_name)), style="dim")
    return text


def _hints(tool: ToolInfo) -> Text:
    text = Text()
    read_only = tool.hint("readOnlyHint")
    for key, label, style in HINTS:
        if not tool.hint(key) or (read_only and key in ("destructiveHint", "idempotentHint")):
            continue
        if text:
            text.append("\n")
        text.append(label, style=style if key in tool.annotations else f"{style} dim".strip())
    return text


def _parameters(tool: ToolInfo) -> Text:
    text = Text()
    for parameter in parameters(tool.input_schema):
        if text:
            text.append("\n")
        text.append(printable(parameter.name) + ("*" if parameter.required else ""), style="bold")
        text.append(printable(f": {parameter.type}"))
        if parameter.default is not None:
            text.append(printable(f" = {parameter.default}"), style="dim")
    return text


def _summary(description: str | None) -> str:
    """The first non-empty line of a description."""
    return next((line.strip() for line in (description or "").splitlines() if line.strip()), "")
