"""Tasks against other implementations: the official TypeScript SDK's client driving
toolwire's tasks over Streamable HTTP, and toolwire's Client driving the tasks of
``@modelcontextprotocol/server-everything`` (TypeScript) over stdio."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.support.helpers import node_binary
from tests.support.httpserve import SERVERS, toolwire_http
from toolwire.client import Client

NODE = Path(__file__).resolve().parents[1] / "interop" / "node"
EVERYTHING = NODE / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"


def test_the_typescript_sdk_client_runs_toolwire_tasks() -> None:
    with toolwire_http(str(SERVERS / "jobs.py")) as (url, _):
        done = subprocess.run(
            [str(node_binary()), str(NODE / "sdk_task_client.mjs"), url],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=NODE,
        )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    for name in ("sleep", "build", "askName"):
        assert seen[name]["kinds"] == ["taskCreated", "taskStatus", "result"], seen[name]
        assert seen[name]["error"] is None
    assert seen["sleep"]["result"]["content"][0]["text"] == "slept 0.2 s"
    assert seen["build"]["result"]["structuredContent"] == {"target": "docs", "ok": True}
    # the question came on the task's tasks/result stream and the SDK's handler answered it
    assert seen["askName"]["result"]["content"][0]["text"] == "Hello, Ada (asked: Your name?)"
    assert seen["created"]["status"] == "working" and seen["created"]["ttl"] == 60000
    assert seen["got"]["taskId"] == seen["created"]["taskId"]
    assert len(seen["listed"]) == 3  # the first page (the server pages by three)
    assert seen["cancelled"]["status"] == "cancelled"
    # the SDK reads taskSupport "required" from tools/list and will not call it plainly
    assert "requires task-based execution" in seen["requiredRefused"]


async def test_toolwire_runs_the_tasks_of_server_everything() -> None:
    questions: list[dict[str, Any]] = []

    async def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        questions.append(params)
        return {"action": "accept", "content": {"interpretation": "programming"}}

    command = [str(node_binary()), str(EVERYTHING), "stdio"]
    async with Client(command, protocol="2025-11-25", elicitation=elicitation) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert tools["simulate-research-query"].task_support == "required"
        statuses: list[str] = []
        handle = await client.start_task("simulate-research-query", {"topic": "python", "ambiguous": False})
        assert handle.id is not None
        result = await handle.result(on_status=lambda info: statuses.append(info.status))
        assert "Research Report: python" in result.text
        assert (await handle.refresh()).status == "completed"
        assert handle.id in [info.id for info in await client.list_tasks()]
        # a tool that requires a task is run as one by call_tool itself
        plain = await client.call_tool("simulate-research-query", {"topic": "tea"})
        assert "Research Report: tea" in plain.text
        running = await client.start_task("simulate-research-query", {"topic": "slow"})
        await running.cancel()
        assert running.info is not None and running.info.status == "cancelled"
