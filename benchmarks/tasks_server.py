"""The server of the tasks benchmark: ``echo`` may run as a task. ``BENCH_TASKS_DB`` names a
SQLite file to keep the tasks in (memory otherwise)."""

from __future__ import annotations

import os

from toolwire import Server

server = Server("bench-tasks", task_store=os.environ.get("BENCH_TASKS_DB") or None, task_poll_interval=0.001)


@server.tool(task=True)
async def echo(text: str) -> str:
    """Echo the text back."""
    return text
