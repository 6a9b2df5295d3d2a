"""Tasks: tool calls that outlive their request, in both eras, through the toolwire Client and
by hand on the wire (see also test_tasks_durable.py for SQLite and restarts)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.support.helpers import MODERN, open_peer
from tests.support.httpserve import SERVERS, fresh_server
from toolwire import Context, Server
from toolwire.client import Client, ClientError, ServerError, TaskCancelled

ERAS = ["2025-11-25", MODERN]
TASKS = {"io.modelcontextprotocol/tasks": {}}
WITH_TASKS = {"extensions": TASKS}


def jobs() -> Server:
    return fresh_server(str(SERVERS / "jobs.py"))


async def answer_name(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


@pytest.mark.parametrize("era", ERAS)
async def test_a_call_made_a_task_returns_the_tools_result(era: str) -> None:
    async with Client(jobs(), protocol=era) as client:
        result = await client.call_tool("sleep", {"seconds": 0.1}, task=True)
    assert result.text == "slept 0.1 s"


@pytest.mark.parametrize("era", [*ERAS, "2025-06-18"])
async def test_task_true_on_a_tool_that_runs_no_task_runs_it_in_its_request(era: str) -> None:
    async with Client(jobs(), protocol=era) as client:
        inline = await client.call_tool("quick", {"x": 21})
        assert (await client.call_tool("quick", {"x": 21}, task=True)).raw == inline.raw
        assert inline.text == "42"
        handle = await client.start_task("quick", {"x": 21})
        assert handle.id is None and (await handle.result()).raw == inline.raw


@pytest.mark.parametrize("era", ERAS)
async def test_a_tool_that_requires_a_task_becomes_one_by_itself(era: str) -> None:
    async with Client(jobs(), protocol=era) as client:
        result = await client.call_tool("build", {"target": "docs"})
    assert result.structured == {"target": "docs", "ok": True}


@pytest.mark.parametrize("era", ERAS)
async def test_a_handle_polls_the_task_to_its_end(era: str) -> None:
    statuses: list[str] = []
    async with Client(jobs(), protocol=era) as client:
        handle = await client.start_task("sleep", {"seconds": 0.3})
        assert handle.id is not None and len(handle.id) >= 32
        assert handle.info is not None and handle.info.status == "working"
        assert (await handle.refresh()).status == "working"
        result = await handle.result(on_status=lambda info: statuses.append(info.status))
        assert result.text == "slept 0.3 s"
        final = await handle.refresh()
    assert final.status == "completed" and final.ttl_ms == 3_600_000 and final.poll_interval == 0.05
    assert final.created_at is not None and final.created_at.endswith("Z")
    assert statuses[-1] == "completed" or era != MODERN


@pytest.mark.parametrize("era", ERAS)
async def test_another_client_takes_up_a_task_by_its_id(era: str) -> None:
    server = jobs()
    async with Client(server, protocol=era) as first:
        task_id = (await first.start_task("sleep", {"seconds": 0.2})).id
    assert task_id is not None
    async with Client(server, protocol=era) as second:
        result = await second.task(task_id).result()
    assert result.text == "slept 0.2 s"


@pytest.mark.parametrize("era", ERAS)
async def test_a_cancelled_task_stays_cancelled(era: str) -> None:
    async with Client(jobs(), protocol=era) as client:
        handle = await client.start_task("sleep", {"seconds": 5})
        await handle.cancel()
        with pytest.raises(TaskCancelled, match="cancelled by request"):
            await handle.result()
        assert (await handle.refresh()).status == "cancelled"
        if era == MODERN:
            await handle.cancel()  # acknowledged again: cancelling is idempotent on 2026-07-28
        else:
            with pytest.raises(ServerError, match="already in terminal status 'cancelled'") as refused:
                await handle.cancel()
            assert refused.value.code == -32602


@pytest.mark.parametrize("era", ERAS)
async def test_a_task_asks_the_user_through_the_clients_handler(era: str) -> None:
    seen: list[dict[str, Any]] = []

    async def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return await answer_name(params)

    async with Client(jobs(), protocol=era, elicitation=elicitation) as client:
        handle = await client.start_task("ask_name")
        result = await handle.result()
    assert result.text == "Hello, Ada"
    assert seen[0]["message"] == "Your name?"
    if era != MODERN:  # a 2025-11-25 request for a task is tagged with it
        assert seen[0]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": handle.id}


@pytest.mark.parametrize("era", ERAS)
async def test_a_task_asks_the_clients_model(era: str) -> None:
    async def sampling(params: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "short"}, "model": "m"}

    async with Client(jobs(), protocol=era, sampling=sampling) as client:
        result = await client.call_tool("summarize", {"text": "long"}, task=True)
    assert result.text == "summary: short"


@pytest.mark.parametrize("era", ERAS)
async def test_tool_errors_and_protocol_errors_end_a_task_as_the_era_says(era: str) -> None:
    async with Client(jobs(), protocol=era) as client:
        handle = await client.start_task("broken")
        result = await handle.result()
        assert result.is_error and "it broke" in result.text
        info = await handle.refresh()
        # 2025-11-25: an isError result fails the task; 2026-07-28 keeps "failed" for JSON-RPC errors
        assert info.status == ("completed" if era == MODERN else "failed")
        handle = await client.start_task("protocol_failure")
        with pytest.raises(ServerError, match="the backend is down") as failed:
            await handle.result()
        assert failed.value.code == -32603
        assert (await handle.refresh()).status == "failed"


async def test_progress_of_a_2025_11_25_task_reaches_the_caller_and_its_status_message() -> None:
    reports: list[tuple[float, float | None, str | None]] = []
    async with Client(jobs(), protocol="2025-11-25") as client:
        handle = await client.start_task("sleep", {"seconds": 0.2}, progress=lambda *report: reports.append(report))
        await handle.result()
        info = await handle.refresh()
    assert reports[-1] == (4, 4, "step 4 of 4")
    assert info.message is None  # the final status has no message: the task completed


async def test_progress_of_a_2026_07_28_task_is_its_status_message() -> None:
    messages: list[str | None] = []
    async with Client(jobs(), protocol=MODERN) as client:
        handle = await client.start_task("sleep", {"seconds": 1})
        await asyncio.sleep(0.4)
        messages.append((await handle.refresh()).message)
        await handle.cancel()
    assert messages[0] is not None and messages[0].startswith("step ")


async def test_2025_11_25_lists_the_sessions_tasks_page_by_page() -> None:
    server = jobs()
    async with Client(server, protocol="2025-11-25") as client:
        started = [(await client.start_task("sleep", {"seconds": 0})).id for _ in range(7)]
        listed = await client.list_tasks()
    assert [info.id for info in listed] == started  # page_size 3: three pages, in creation order
    async with Client(server, protocol="2025-11-25") as other:
        assert await other.list_tasks() == []  # another session sees none of them
    async with Client(server, protocol=MODERN) as modern:
        with pytest.raises(ClientError, match="no tasks/list"):
            await modern.list_tasks()


async def test_2026_07_28_questions_are_answered_one_by_one_with_tasks_update() -> None:
    peer = await open_peer(jobs(), MODERN, {"elicitation": {}, "extensions": TASKS})
    created = (await peer.call("two_questions"))["result"]
    assert created["resultType"] == "task" and "result" not in created
    task_id = created["taskId"]
    for _ in range(100):
        task = (await peer.request("tasks/get", {"taskId": task_id}))["result"]
        if len(task.get("inputRequests", {})) == 2:
            break
        await asyncio.sleep(0.01)
    first, second = sorted(task["inputRequests"])
    assert task["status"] == "input_required"
    assert task["inputRequests"][first]["method"] == "elicitation/create"
    ack = await peer.request(
        "tasks/update",
        {"taskId": task_id, "inputResponses": {first: {"action": "accept", "content": {"value": "a"}}, "nope": {}}},
    )
    assert ack["result"]["resultType"] == "complete" and "status" not in ack["result"]
    task = (await peer.request("tasks/get", {"taskId": task_id}))["result"]
    assert task["status"] == "input_required" and list(task["inputRequests"]) == [second]
    await peer.request(
        "tasks/update", {"taskId": task_id, "inputResponses": {second: {"action": "accept", "content": {"value": "b"}}}}
    )
    for _ in range(100):
        task = (await peer.request("tasks/get", {"taskId": task_id}))["result"]
        if task["status"] == "completed":
            break
        await asyncio.sleep(0.01)
    assert task["result"]["content"][0]["text"] == "a+b"
    assert "io.modelcontextprotocol/related-task" not in task["result"].get("_meta", {})


async def test_a_2025_11_25_task_result_carries_the_related_task_tag() -> None:
    peer = await open_peer(jobs(), "2025-11-25")
    call = {"name": "sleep", "arguments": {"seconds": 0}, "task": {"ttl": 5000}}
    created = (await peer.request("tools/call", call))["result"]
    task = created["task"]
    assert task["ttl"] == 5000 and task["pollInterval"] == 50 and task["status"] == "working"
    result = (await peer.request("tasks/result", {"taskId": task["taskId"]}))["result"]
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
    assert result["content"][0]["text"] == "slept 0 s"


@pytest.mark.parametrize(
    ("era", "capabilities", "method", "params", "code", "words"),
    [
        (MODERN, WITH_TASKS, "tasks/get", {"taskId": "no-such-task"}, -32602, "Task not found"),
        (MODERN, WITH_TASKS, "tasks/get", {}, -32602, '"taskId" must be a string'),
        (MODERN, WITH_TASKS, "tasks/cancel", {"taskId": "no-such-task"}, -32602, "Task not found"),
        (
            MODERN,
            WITH_TASKS,
            "tasks/update",
            {"taskId": "no-such-task", "inputResponses": {}},
            -32602,
            "Task not found",
        ),
        (MODERN, WITH_TASKS, "tasks/update", {"taskId": "x", "inputResponses": []}, -32602, '"inputResponses" must be'),
        (MODERN, WITH_TASKS, "tasks/result", {"taskId": "x"}, -32601, "tasks/get carries the result"),
        (MODERN, WITH_TASKS, "tasks/list", {}, -32601, "does not exist in 2026-07-28"),
        (MODERN, {}, "tasks/get", {"taskId": "x"}, -32021, "io.modelcontextprotocol/tasks"),
        (MODERN, {}, "tools/call", {"name": "build", "arguments": {"target": "t"}}, -32021, "runs only as a task"),
        ("2025-11-25", {}, "tasks/get", {"taskId": "no-such-task"}, -32602, "Task not found"),
        ("2025-11-25", {}, "tasks/result", {"taskId": "no-such-task"}, -32602, "Task not found"),
        ("2025-11-25", {}, "tasks/list", {"cursor": "not-ours"}, -32602, "invalid cursor"),
        ("2025-11-25", {}, "tasks/update", {"taskId": "x", "inputResponses": {}}, -32601, "does not exist"),
        ("2025-11-25", {}, "tools/call", {"name": "quick", "arguments": {"x": 1}, "task": {}}, -32601, "not run as"),
        ("2025-11-25", {}, "tools/call", {"name": "build", "arguments": {"target": "t"}}, -32601, "only as a task"),
        ("2025-11-25", {}, "tools/call", {"name": "sleep", "arguments": {"seconds": 0}, "task": 5}, -32602, '"task"'),
        ("2025-06-18", {}, "tasks/get", {"taskId": "x"}, -32601, "does not exist in 2025-06-18"),
    ],
)
async def test_task_requests_that_cannot_be_served_get_the_specs_error(
    era: str, capabilities: dict[str, Any], method: str, params: dict[str, Any], code: int, words: str
) -> None:
    peer = await open_peer(jobs(), era, capabilities)
    error = (await peer.request(method, params))["error"]
    assert error["code"] == code and words in error["message"]
    if code == -32021:
        assert error["data"] == {"requiredCapabilities": {"extensions": TASKS}}


async def test_what_is_not_waiting_or_has_ended_is_answered_calmly() -> None:
    peer = await open_peer(jobs(), MODERN, {"extensions": TASKS})
    task_id = (await peer.call("sleep", {"seconds": 0}))["result"]["taskId"]
    for _ in range(100):
        if (await peer.request("tasks/get", {"taskId": task_id}))["result"]["status"] == "completed":
            break
        await asyncio.sleep(0.01)
    update = await peer.request("tasks/update", {"taskId": task_id, "inputResponses": {"ask-0": {"action": "accept"}}})
    assert update["result"] == {"resultType": "complete", "_meta": update["result"]["_meta"]}
    assert (await peer.request("tasks/cancel", {"taskId": task_id}))["result"]["resultType"] == "complete"
    assert (await peer.request("tasks/get", {"taskId": task_id}))["result"]["status"] == "completed"


async def test_an_older_version_runs_a_task_tool_in_its_request() -> None:
    async with Client(jobs(), protocol="2025-06-18") as client:
        assert (await client.call_tool("build", {"target": "x"})).structured == {"target": "x", "ok": True}
        tools = {tool.name: tool for tool in await client.list_tools()}
        assert tools["build"].task_support is None  # 2025-06-18 tools have no execution field
        handle = await client.start_task("sleep", {"seconds": 0})  # runs in its request
        assert handle.id is None and (await handle.result()).text == "slept 0 s"


async def test_an_expired_task_is_gone() -> None:
    server = jobs()
    server.tasks.ttl_ms = 200
    peer = await open_peer(server, "2025-11-25")
    created = await peer.request("tools/call", {"name": "sleep", "arguments": {"seconds": 0}, "task": {"ttl": 60_000}})
    task = created["result"]["task"]
    assert task["ttl"] == 200  # the server keeps tasks no longer than its own ttl
    assert (await peer.request("tasks/get", {"taskId": task["taskId"]}))["result"]["taskId"] == task["taskId"]
    await asyncio.sleep(0.25)
    error = (await peer.request("tasks/get", {"taskId": task["taskId"]}))["error"]
    assert error["code"] == -32602


async def test_capabilities_and_tool_definitions_say_what_runs_as_a_task() -> None:
    legacy = await open_peer(jobs(), "2025-11-25")
    assert legacy.initialize_result["capabilities"]["tasks"] == {
        "list": {},
        "cancel": {},
        "requests": {"tools": {"call": {}}},
    }
    tools = {tool["name"]: tool for tool in await every_tool(legacy)}
    assert tools["build"]["execution"] == {"taskSupport": "required"}
    assert tools["sleep"]["execution"] == {"taskSupport": "optional"}
    assert "execution" not in tools["quick"]
    modern = await open_peer(jobs(), MODERN)
    discovered = (await modern.request("server/discover"))["result"]["capabilities"]
    assert discovered["extensions"] == TASKS and "tasks" not in discovered
    assert not any("execution" in tool for tool in await every_tool(modern))
    older = await open_peer(jobs(), "2025-06-18")
    assert "tasks" not in older.initialize_result["capabilities"]


async def test_a_server_without_task_tools_has_no_task_methods() -> None:
    server = Server("plain")

    @server.tool
    def hello() -> str:
        return "hi"

    peer = await open_peer(server, "2025-11-25")
    assert (await peer.request("tasks/list"))["error"]["code"] == -32601
    modern = await open_peer(server, MODERN, {"extensions": TASKS})
    assert (await modern.request("tasks/get", {"taskId": "x"}))["error"]["code"] == -32601
    assert "extensions" not in (await modern.request("server/discover"))["result"]["capabilities"]


def test_task_ids_are_long_random_and_never_look_like_options() -> None:
    from toolwire.protocol.tokens import is_id, new_id

    ids = {new_id() for _ in range(2000)}
    assert len(ids) == 2000 and all(len(task_id) == 32 and task_id[0] != "-" and is_id(task_id) for task_id in ids)


def test_tools_refuse_task_options_that_make_no_sense() -> None:
    server = Server("bad")

    def job() -> None:
        return None

    with pytest.raises(ValueError, match="task must be True, False"):
        server.tool(task="sometimes")(job)
    with pytest.raises(ValueError, match="defer_task needs task support and a Context"):
        server.tool(task=True, defer_task=True)(job)


async def every_tool(peer: Any) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = (await peer.request("tools/list", {} if cursor is None else {"cursor": cursor}))["result"]
        tools += page["tools"]
        cursor = page.get("nextCursor")
        if cursor is None:
            return tools


async def test_2026_07_28_streams_a_tasks_changes_to_those_who_listen() -> None:
    peer = await open_peer(jobs(), MODERN, {"elicitation": {}, "extensions": TASKS})
    task_id = (await peer.call("ask_name"))["result"]["taskId"]
    listen = await peer.send("subscriptions/listen", {"notifications": {"taskIds": [task_id, "unknown"]}})
    seen: list[dict[str, Any]] = []
    while not any(note["params"].get("status") == "completed" for note in seen):
        message = await peer.connection.receive()
        assert message.get("id") != listen, message
        if "method" not in message:
            assert message["result"]["resultType"] == "complete"  # the tasks/update acknowledged
        elif message["method"] == "notifications/subscriptions/acknowledged":
            assert message["params"]["notifications"]["taskIds"] == [task_id]  # only what runs here
        elif message["method"] == "notifications/tasks":
            seen.append(message)
            if message["params"]["status"] == "input_required":
                (key,) = message["params"]["inputRequests"]
                answer = {"action": "accept", "content": {"name": "Lin"}}
                await peer.send("tasks/update", {"taskId": task_id, "inputResponses": {key: answer}})
    statuses = [note["params"]["status"] for note in seen]
    assert statuses[0] in ("working", "input_required") and statuses[-1] == "completed"
    assert "input_required" in statuses
    final = seen[-1]["params"]
    assert final["result"]["content"][0]["text"] == "Hello, Lin"
    assert final["_meta"]["io.modelcontextprotocol/subscriptionId"] == listen
    refused = await open_peer(jobs(), MODERN)
    error = (await refused.request("subscriptions/listen", {"notifications": {"taskIds": ["x"]}}))["error"]
    assert error["code"] == -32021


def asking_server() -> Server:
    server = Server("deferred")

    @server.tool(task=True, defer_task=True)
    async def purge(folder: str, ctx: Context) -> str:
        answer = await ctx.elicit(f"Purge {folder}?", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
        if not (answer.content or {}).get("ok"):
            return "kept"
        await ctx.start_task()
        return f"purged {folder} ({'as task ' + ctx.task_id if ctx.task_id else 'in its request'})"

    return server


async def confirm(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"ok": True}}


async def test_a_deferred_task_asks_in_its_request_then_becomes_a_task() -> None:
    async with Client(asking_server(), protocol=MODERN, elicitation=confirm) as client:
        handle = await client.start_task("purge", {"folder": "tmp"})
        assert handle.id is not None  # the question was a round of the request; then the task began
        assert (await handle.result()).text == f"purged tmp (as task {handle.id})"
        # without the extension the call stays in its request, and start_task() does nothing
        assert (await client.call_tool("purge", {"folder": "tmp"})).text == "purged tmp (in its request)"


async def test_a_deferred_task_on_2025_11_25_is_a_task_from_the_start() -> None:
    async with Client(asking_server(), protocol="2025-11-25", elicitation=confirm) as client:
        handle = await client.start_task("purge", {"folder": "tmp"})
        assert handle.id is not None
        assert (await handle.result()).text == f"purged tmp (as task {handle.id})"


@pytest.mark.parametrize("era", ERAS)
async def test_tasks_over_http_ask_and_answer(era: str) -> None:
    from tests.support.httpserve import toolwire_http

    with toolwire_http(str(SERVERS / "jobs.py")) as (url, _):
        async with Client(url, protocol=era, elicitation=answer_name) as client:
            assert (await client.call_tool("ask_name", task=True)).text == "Hello, Ada"
            first, second = await asyncio.gather(
                client.call_tool("sleep", {"seconds": 0.2}, task=True), client.call_tool("build", {"target": "t"})
            )
            assert first.text == "slept 0.2 s" and second.structured == {"target": "t", "ok": True}


async def test_a_2025_11_25_task_logs_to_the_client_tagged_with_the_task() -> None:
    server = Server("logs")

    @server.tool(task=True)
    async def chatty(ctx: Context) -> str:
        await ctx.info("working on it")
        return "done"

    logged: list[dict[str, Any]] = []
    async with Client(server, protocol="2025-11-25", log_level="info", on_log=logged.append) as client:
        handle = await client.start_task("chatty")
        assert (await handle.result()).text == "done"
    assert logged[0]["data"] == "working on it"
    assert logged[0]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": handle.id}
