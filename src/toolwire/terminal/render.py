"""How a host's conversation looks in a terminal: the model's text as it streams, every tool
call with a visible marker and its arguments, a progress bar while it runs, a short result.

What servers and models send is untrusted: everything the screen shows goes through
:func:`.output.printable` (wherever it goes: a log of stderr is read in a terminal too), is
printed by rich without markup or emoji codes, and long argument values are folded. Tool
names that may fool a person carry a ``⚠`` line saying why (:func:`.lookalikes.marks`).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TextIO

import orjson
from rich.cells import cell_len

from ..host import (
    ApprovalNeeded,
    Done,
    ElicitationNeeded,
    Event,
    ExposedTool,
    Failed,
    SamplingNeeded,
    TextDelta,
    ToolCallDecided,
    ToolCallProposed,
    ToolProgress,
    ToolResult,
    ToolsChanged,
    ToolsLoaded,
)
from .output import counted, printable
from .wrapping import clipped

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

#: Characters of one argument value shown before it is folded.
FOLD = 300
#: The fewest columns a tool's description is given beside its name (else it goes under it).
MIN_DESCRIPTION = 24
CALL = "⚙"


def fold(value: Any, limit: int = FOLD) -> str:
    """``value`` as compact JSON, cut after ``limit`` characters with a note of the rest."""
    text = orjson.dumps(value).decode()
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def annotation_words(annotations: dict[str, Any]) -> tuple[str, bool]:
    """What a tool's annotations say, in words (``read-only``, else ``destructive`` or ``not
    destructive`` and ``idempotent``; then ``open-world`` or ``closed-world``), a hint the
    tool does not give marked ``(default)``; and whether it may destroy (not read-only, and
    destructive by what it says or by the default)."""

    def hint(key: str, default: bool) -> tuple[bool, str]:
        value = annotations.get(key)
        return (value, "") if isinstance(value, bool) else (default, " (default)")

    read_only, said = hint("readOnlyHint", False)
    if read_only:
        words = [f"read-only{said}"]
        destructive = False
    else:
        destructive, said = hint("destructiveHint", True)
        idempotent, idem = hint("idempotentHint", False)
        words = [f"{'' if destructive else 'not '}destructive{said}", f"{'' if idempotent else 'not '}idempotent{idem}"]
    open_world, said = hint("openWorldHint", True)
    words.append(f"{'open' if open_world else 'closed'}-world{said}")
    return ", ".join(words), destructive


def _marks(tool: ExposedTool) -> list[str]:
    return [tool.server + (" (trusted)" if tool.trusted else "")] + (["read-only"] if tool.read_only else [])


def _first_paragraph(description: str) -> str:
    """The lines of ``description`` up to its first empty line, joined by spaces."""
    lines: list[str] = []
    for line in description.strip().splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines)


def _padded(text: str, width: int) -> str:
    return text + " " * (width - cell_len(text))


def name_warning(name: str, warning: str) -> str:
    """The line that marks a tool's name that may fool a person (``warning``: why, from
    :func:`.lookalikes.marks`), wherever a call of it is shown: as the listing marks it."""
    return f"    ⚠ the tool's name {name!r}: {warning}"


def arguments_line(arguments: dict[str, Any] | None, limit: int = 80) -> str:
    if not arguments:
        return ""
    return " ".join(f"{key}={fold(value, limit)}" for key, value in arguments.items())


class Screen:
    """Draws events on ``out`` (text, calls, results) with progress bars on the same terminal."""

    def __init__(self, out: TextIO | None = None) -> None:
        from rich.console import Console

        self.out = out or sys.stdout
        self.console = Console(file=self.out, highlight=False, soft_wrap=True)
        self.color = self.console.is_terminal
        self._line_open = False
        self._progress: Progress | None = None
        self._bars: dict[str, TaskID] = {}
        self._names: dict[str, str] = {}
        self._refused: set[str] = set()

    def say(self, text: str, style: str = "", lines: bool = False) -> None:
        """A line of ours (not the model's), on a line of its own; ``lines``: the text may
        have several (otherwise a newline in it is shown as U+FFFD)."""
        self.end_line()
        self.pause()
        self.console.print(printable(text, lines), style=style or None, markup=False, emoji=False)

    def end_line(self) -> None:
        if self._line_open:
            self.out.write("\n")
            self._line_open = False

    def tools(self, tools: list[ExposedTool], reason: str, deferred: int = 0) -> None:
        """The tools, one a row: the names padded to the longest, the server and marks, then
        the description's first paragraph wrapped at words to the terminal's width, two
        lines at most (cut with "…"); under the name when the row leaves it too little room.
        ``deferred``: how many more the model finds with ``find_tools`` (said after them)."""
        header = "Tools the model can use" if reason == "start" else f"The tools changed ({reason})"
        if deferred:
            header = f"{header}: {len(tools) + deferred}, {len(tools)} of them shown up front"
        self.say(f"{header}" if deferred else f"{header}: {len(tools)}", "bold")
        names = [printable(tool.name, lines=False) for tool in tools]
        marks = [printable(", ".join(_marks(tool)), lines=False) for tool in tools]
        name_width = max((cell_len(name) for name in names), default=0)
        mark_width = max((cell_len(mark) for mark in marks), default=0)
        indent = 2 + name_width + 2 + mark_width + 2
        for tool, name, mark in zip(tools, names, marks, strict=True):
            about = printable(_first_paragraph(tool.description), lines=False)
            row = f"  {_padded(name, name_width)}  {_padded(mark, mark_width)}  "
            if self.console.width - indent >= MIN_DESCRIPTION:
                lines = clipped(about, self.console.width - indent, 2, self.console) or [""]
                shown = [row + lines[0], *(" " * indent + line for line in lines[1:])]
            else:
                shown = [
                    row.rstrip(),
                    *("      " + line for line in clipped(about, self.console.width - 6, 2, self.console)),
                ]
            self.say("\n".join(line.rstrip() for line in shown), "" if tool.read_only else "dim", lines=True)
            if tool.warning:
                self.say(f"    ⚠ {tool.server}/{tool.tool}: {tool.warning}", "yellow")
        if deferred:
            self.say(f"  the model finds the other {deferred} with find_tools when it needs them", "dim")

    def draw(self, event: Event) -> None:
        """Show one event (questions are shown by whoever answers them)."""
        if isinstance(event, TextDelta):
            self.pause()
            self.out.write(printable(event.text))
            self.out.flush()
            self._line_open = not event.text.endswith("\n")
        elif isinstance(event, ToolsChanged):
            if event.reason != "start":
                self.tools(event.tools, event.reason, event.deferred)
        elif isinstance(event, ToolsLoaded):
            names = ", ".join(f"{tool.name} [{tool.server}]" for tool in event.tools)
            self.say(f"  ↳ loaded {len(event.tools)} tool{'' if len(event.tools) == 1 else 's'}: {names}", "dim")
        elif isinstance(event, ToolCallProposed):
            self._names[event.call_id] = event.tool
            where = f" [{event.server}/{event.name}]" if event.server and event.name != event.tool else ""
            marked = " ⚠" if event.warning else ""  # the question (or the refusal) says why
            self.say(f"{CALL} {event.tool}{where}{marked} {arguments_line(event.arguments)}", "bold cyan")
        elif isinstance(event, ToolCallDecided):
            if event.decision == "refuse":
                self._refused.add(event.call_id)
                self.say(f"  ✗ not run: {event.reason}", "red")
            elif event.by == "policy":
                self.say(f"  ↳ runs without asking: {event.reason}", "dim")
        elif isinstance(event, ToolProgress):
            self._advance(event)
        elif isinstance(event, ToolResult):
            self._finish(event.call_id)
            if event.call_id in self._refused:
                return  # "not run" said it
            mark, style = ("✗", "red") if event.is_error else ("✓", "green")
            self.say(f"  {mark} {event.tool} ({event.seconds:.2f} s): {event.summary}", style)
        elif isinstance(event, Failed):
            self.say(f"toolwire: {event.message}", "bold red", lines=True)
        elif isinstance(event, Done):
            self.end_line()
            self.pause()
            if event.reason == "step_limit":
                self.say(f"(stopped after {event.steps} model requests: the step limit)", "yellow")
            elif event.reason == "cancelled":
                self.say("(cancelled)", "yellow")

    def approval(self, event: ApprovalNeeded) -> None:
        """The question of an approval: the server, the tool, the exact arguments, the change."""
        self.say(f"? Allow {event.server}/{event.name} ({event.reason})?", "bold yellow")
        hints, destructive = annotation_words(event.annotations)
        whose = "by its annotations (the server is trusted)" if event.trusted else "as the server says (untrusted)"
        said = clipped(printable(f"what it does, {whose}: {hints}", False), self.console.width - 4, 9, self.console)
        self.say("\n".join(f"    {line}" for line in said), "red" if destructive else "", lines=True)
        if event.warning:
            self.say(name_warning(event.name, event.warning), "bold red")
        for key, value in event.arguments.items():
            self.say(f"    {key}: {fold(value)}")
        for change in event.changes:
            self.say(f"    changed {change.field}: {fold(change.before)} → {fold(change.after)}", "yellow")

    def sampling(self, event: SamplingNeeded) -> None:
        self.say(f"? The server {event.server} asks to use the model with:", "bold yellow")
        request = event.request
        if request.get("systemPrompt"):
            self.say(f"    system: {fold(request['systemPrompt'])}")
        for message in request.get("messages") or []:
            if isinstance(message, dict):
                self.say(f"    {message.get('role', '?')}: {fold(message.get('content'))}")
        if request.get("maxTokens"):
            self.say(f"    at most {counted(request['maxTokens'], 'token')}")

    def elicitation(self, event: ElicitationNeeded) -> None:
        self.say(f"? The server {event.server} asks: {event.message}", "bold yellow", lines=True)

    def _advance(self, event: ToolProgress) -> None:
        if self._progress is None:
            from rich.progress import BarColumn, Progress, SpinnerColumn, TaskProgressColumn, TextColumn

            self.end_line()
            self._progress = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                TaskProgressColumn(),
                console=self.console,
                transient=True,
                disable=not self.color,
            )
            self._progress.start()
        if event.call_id not in self._bars:
            self._bars[event.call_id] = self._progress.add_task("", total=None)
        label = printable(f"{self._names.get(event.call_id, '')} {event.message or ''}".strip(), lines=False)
        self._progress.update(self._bars[event.call_id], completed=event.progress, total=event.total, description=label)

    def _finish(self, call_id: str) -> None:
        bar = self._bars.pop(call_id, None)
        if bar is not None and self._progress is not None:
            self._progress.remove_task(bar)
        if not self._bars:
            self.pause()

    def pause(self) -> None:
        """Take the progress bars off the screen (before a line of text or a question)."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
            self._bars.clear()
