"""The progress of a call on stderr, drawn by rich from the first progress notification on:
a bar with a percentage once the server says the total, a spinner and a pulsing bar until
then, with the server's latest message beside it. Calls that report no progress show
nothing (and do not import rich). The display is removed when the call ends, and on a
stderr that is not a terminal nothing is drawn at all."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .output import printable

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


class ProgressDisplay:
    """Receives a call's progress (a ``progress=`` callback of ``Client.call_tool``)."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def update(self, done: float, total: float | None, message: str | None) -> None:
        if self._progress is None:
            self._start()
        assert self._progress is not None and self._task is not None
        description = printable(message or self.tool)
        self._progress.update(self._task, completed=done, total=total, description=description)

    def _start(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            SpinnerColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        console = Console(stderr=True)
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
            disable=not console.is_terminal,
        )
        self._task = self._progress.add_task(self.tool, total=None)
        self._progress.start()

    def close(self) -> None:
        """Remove the display (if it was shown)."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
