"""The tables ``toolwire tools``, ``resources`` and ``prompts`` print, drawn by rich under a
line naming the server, what it has and the protocol version spoken.

``tools``: one row per tool with its name and title, its annotation hints, its parameters and
the first sentence of its description. Hints are shown with the specification's defaults (a
tool without annotations may be destructive and reach the open world): dimmed when the
server did not say (and, where nothing is dimmed, piped, marked ``(default)``), and
``destructive``/``idempotent`` only for tools that are not read-only, the only ones they
mean anything for. A tool that runs as a task says so (``task`` or ``task only``).
Parameters show their types with the fields of objects. A name that may fool a person (outside
the specification's characters, mixed scripts, or looking like another tool's name:
:func:`toolwire.lookalikes.marks`) gets a ``⚠`` line saying why above its description.

What a user types (tool names, URIs, parameter names) is never shortened: a column too
narrow for it breaks it across lines, never before closing punctuation (``。``, ``"``) that
follows a character (:class:`.wrapping.Kinsoku`). Descriptions are cut to their first sentence
(:func:`summary`: "…" where even that must be cut), and long defaults to a few words.

``resources``: a row per resource (URI, name and title, MIME type, size, description), then
a table of the resource templates (URI template, name and title, MIME type, description).
``prompts``: a row per prompt (name and title, arguments, description).

Every string from the server is shown as text (never as rich markup) and without its control
characters.
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..client import PromptInfo, ResourceInfo, ResourceTemplateInfo, TaskInfo, ToolInfo
from ..lookalikes import marks
from .output import counted, printable
from .schemas import parameters
from .wrapping import Kinsoku

HINTS = (
    ("readOnlyHint", "read-only", "green"),
    ("destructiveHint", "destructive", "red"),
    ("idempotentHint", "idempotent", ""),
    ("openWorldHint", "open-world", ""),
)
REQUIRED = "* required"


#: Longest default value shown in full (longer ones are cut with an ellipsis).
DEFAULT_WIDTH = 16


def print_tools(
    tools: list[ToolInfo], server_info: dict[str, Any], version: str | None, tasks: dict[str, str] | None = None
) -> None:
    """Print the table of ``tools`` to stdout, under a line naming the server and protocol;
    ``tasks``: the task support of those that run as tasks (by default, what each says)."""
    if tasks is None:
        tasks = {tool.name: tool.task_support for tool in tools if tool.task_support is not None}
    marked = not Console().is_terminal  # no dimming on a pipe: defaults are said in words
    server = str(server_info.get("name") or "server")
    warnings = marks((server, tool.name) for tool in tools)
    table = _table("tool", "hints", "parameters", "description", caption=REQUIRED)
    _fit_names(table, [tool.name for tool in tools])
    for tool in tools:
        table.add_row(
            _name(tool.name, tool.display_name),
            _hints(tool, tasks.get(tool.name), marked),
            _parameters(tool),
            _warned(warnings.get((server, tool.name), ""), _summary(tool.description)),
        )
    _print(_heading(server_info, version, _count(tools, "tool")), [table] if tools else [])


def print_resources(
    resources: list[ResourceInfo],
    templates: list[ResourceTemplateInfo],
    server_info: dict[str, Any],
    version: str | None,
) -> None:
    """Print the table of ``resources``, then the table of ``templates``, to stdout, under a
    line naming the server and protocol (a table with no rows is left out)."""
    listed = _table("resource", "name", "MIME type", "size", "description")
    _fit_names(listed, [resource.uri for resource in resources])
    for resource in resources:
        listed.add_row(
            Kinsoku(printable(resource.uri), style="bold"),
            _name(resource.name, resource.title or resource.name, style=""),
            Kinsoku(printable(resource.mime_type or "")),
            Kinsoku(_size(resource.size), justify="right"),
            _summary(resource.description),
        )
    templated = _table("resource template", "name", "MIME type", "description")
    _fit_names(templated, [template.uri_template for template in templates])
    for template in templates:
        templated.add_row(
            Kinsoku(printable(template.uri_template), style="bold"),
            _name(template.name, template.title or template.name, style=""),
            Kinsoku(printable(template.mime_type or "")),
            _summary(template.description),
        )
    counts = f"{_count(resources, 'resource')}, {_count(templates, 'resource template')}"
    tables = [table for table, rows in ((listed, resources), (templated, templates)) if rows]
    _print(_heading(server_info, version, counts), tables)


def print_prompts(prompts: list[PromptInfo], server_info: dict[str, Any], version: str | None) -> None:
    """Print the table of ``prompts`` to stdout, under a line naming the server and protocol."""
    table = _table("prompt", "arguments", "description", caption=REQUIRED)
    for prompt in prompts:
        table.add_row(_name(prompt.name, prompt.title or prompt.name), _arguments(prompt), _summary(prompt.description))
    _print(_heading(server_info, version, _count(prompts, "prompt")), [table] if prompts else [])


def print_tasks(tasks: list[TaskInfo], server_info: dict[str, Any], version: str | None) -> None:
    """Print the table of ``tasks`` to stdout, under a line naming the server and protocol."""
    table = _table("task", "status", "message", "created")
    for task in tasks:
        table.add_row(
            Kinsoku(printable(task.id)),
            Kinsoku(printable(task.status)),
            _summary(task.message),
            Kinsoku(printable(task.created_at or "")),
        )
    _print(_heading(server_info, version, _count(tasks, "task")), [table] if tasks else [])


def _table(*columns: str, caption: str | None = None) -> Table:
    """A table whose cells fold rather than cut: nothing a user types is ever shortened."""
    table = Table(caption=caption, show_lines=True)
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


#: The widest a first column (names, URIs) is made to keep its entries whole on one line.
NAME_WIDTH = 64


def _fit_names(table: Table, names: list[str]) -> None:
    """Make the first column wide enough for its longest entry (up to :data:`NAME_WIDTH`, and
    a third of the terminal), so that names stay whole while other columns wrap; a longer
    one is broken across lines, never cut."""
    from rich.cells import cell_len

    longest = max((cell_len(printable(name)) for name in names), default=0)
    table.columns[0].min_width = min(NAME_WIDTH, longest)


def _narrowed(console: Console, table: Table) -> None:
    """Lower the first column's minimum until the table fits the console (the others cannot
    shrink below their longest word), so that nothing is cropped at the right."""
    from rich.measure import Measurement

    column = table.columns[0]
    unbounded = console.options.update(max_width=1 << 20)  # else the measure is cut to the console
    while (column.min_width or 0) > 12:
        if Measurement.get(console, unbounded, table).minimum <= console.width:
            return
        column.min_width = (column.min_width or 0) - 2


def _print(heading: Text, tables: list[Table]) -> None:
    """Print ``tables``, the first titled ``heading``; only ``heading`` when there are none."""
    console = Console(highlight=False)
    for table in tables:
        _narrowed(console, table)
    if not tables:
        console.print(heading)
        return
    tables[0].title = heading
    for table in tables:
        console.print(table)


def _heading(server_info: dict[str, Any], version: str | None, counts: str) -> Kinsoku:
    server = " ".join(str(server_info[key]) for key in ("name", "version") if server_info.get(key)) or "the server"
    return Kinsoku(printable(f"{server}: {counts} (protocol {version})"))


def _count(items: list[Any], noun: str) -> str:
    return counted(len(items), noun) if items else f"no {noun}s"


def _name(name: str, display_name: str, style: str = "bold") -> Kinsoku:
    """A name, with the title under it (dimmed) when there is one."""
    text = Kinsoku(printable(name), style=style)
    if display_name != name:
        text.append("\n" + printable(str(display_name)), style="dim")
    return text


def _hints(tool: ToolInfo, task: str | None, marked: bool = False) -> Kinsoku:
    """The hints that hold; those the server did not give dimmed (and, ``marked``, said to
    be defaults); then whether it runs as a task (``task``: its task support)."""
    text = Kinsoku()
    read_only = tool.hint("readOnlyHint")
    for key, label, style in HINTS:
        if not tool.hint(key) or (read_only and key in ("destructiveHint", "idempotentHint")):
            continue
        if text:
            text.append("\n")
        given = key in tool.annotations
        text.append(
            label + ("" if given or not marked else " (default)"), style=style if given else f"{style} dim".strip()
        )
    if task is not None:
        text.append(("\n" if text else "") + ("task only" if task == "required" else "task"), style="cyan")
    return text


def _parameters(tool: ToolInfo) -> Kinsoku:
    text = Kinsoku()
    for parameter in parameters(tool.input_schema):
        if text:
            text.append("\n")
        text.append(printable(parameter.name) + ("*" if parameter.required else ""), style="bold")
        text.append(printable(f": {parameter.type}"))
        if parameter.default is not None:
            default = parameter.default
            if len(default) > DEFAULT_WIDTH:
                default = default[: DEFAULT_WIDTH - 1] + "…"
            text.append(printable(f" = {default}"), style="dim")
    return text


def _arguments(prompt: PromptInfo) -> Kinsoku:
    """Each argument as ``name`` (``*`` when required) and its description, dimmed."""
    text = Kinsoku()
    for argument in prompt.arguments:
        if text:
            text.append("\n")
        text.append(printable(str(argument.get("name", ""))) + ("*" if argument.get("required") else ""), style="bold")
        description = _first_line(argument.get("description"))
        if description:
            text.append(printable(f": {description}"), style="dim")
    return text


def _size(size: Any) -> str:
    """A size in bytes as ``24 B``, ``5.1 KB``, ``2.0 MB``...; empty unless it is a count."""
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        return ""
    if size < 1000:
        return f"{size} B"
    amount = float(size)
    for unit in ("KB", "MB", "GB", "TB"):
        amount /= 1000
        if amount < 1000 or unit == "TB":
            break
    return f"{amount:.1f} {unit}"


def _warned(warning: str, description: Kinsoku) -> Kinsoku:
    """``description`` under a ``⚠`` line saying ``warning``, when there is one."""
    if not warning:
        return description
    text = Kinsoku()
    text.append("⚠ " + printable(warning) + ("\n" if description.plain else ""), style="yellow")
    text.append_text(description)
    return text


def _summary(description: Any) -> Kinsoku:
    return Kinsoku(printable(summary(description)))


#: The longest summary shown: a first sentence longer is cut at a word, ending with "…".
SUMMARY_LENGTH = 200
#: The end of a sentence: ``.``, ``!`` or ``?`` before a space (not in "e.g." or "i.e."), or
#: a full-width one.
SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)[.!?](?=\s)|[。！？]")  # noqa: RUF001


def summary(description: Any) -> str:
    """The first sentence of a description (nothing if it is not text), its lines joined;
    ending with "…" where it has to be cut: a first paragraph that ends mid-sentence before
    more text, or a sentence longer than :data:`SUMMARY_LENGTH`."""
    text = description.strip() if isinstance(description, str) else ""
    paragraph = _joined(text.split("\n\n", 1)[0].splitlines())
    end = SENTENCE_END.search(paragraph)
    shown = paragraph[: end.end()] if end else paragraph
    if len(shown) > SUMMARY_LENGTH:
        cut = shown[:SUMMARY_LENGTH]
        return (cut.rsplit(" ", 1)[0] if " " in cut else cut).rstrip(",;:") + "…"
    if end is None and len(shown) < len(text) and not SENTENCE_END.match(shown[-1] + " "):
        return shown + "…"
    return shown


def _joined(lines: list[str]) -> str:
    """Lines wrapped from one paragraph, joined again: by a space, but not between two wide
    (CJK) characters."""
    joined = ""
    for line in (line.strip() for line in lines):
        wide = bool(joined) and bool(line) and _is_wide(joined[-1]) and _is_wide(line[0])
        joined += line if wide or not joined else " " + line
    return joined


def _is_wide(character: str) -> bool:
    return ord(character) >= 0x2E80  # CJK radicals onwards: scripts written without spaces


def _first_line(description: Any) -> str:
    """The first non-empty line of a description (nothing if it is not text)."""
    lines = description.splitlines() if isinstance(description, str) else []
    return next((line.strip() for line in lines if line.strip()), "")
