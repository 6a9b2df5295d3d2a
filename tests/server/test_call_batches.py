"""Calls that arrive together (Python 3.11: run one after another in one task while each
finishes without waiting; see ``ServerSession._run_queued``) behave as calls with tasks of
their own: each has a context of its own, a call that waits holds up none after it and
keeps its own timeouts, a call cancelled before it started never runs, and calls still
queued when the session closes are answered. On Python 3.12+ the same hold with eager tasks.
"""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import orjson

from toolwire import Server
from toolwire.server.session import ServerSession

MARK: contextvars.ContextVar[str] = contextvars.ContextVar("mark", default="unset")
HELLO = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


def build(started: list[str]) -> Server:
    server = Server("batches")

    @server.tool
    async def mark(value: str) -> str:
        """Set a context variable; say what it was."""
        before = MARK.get()
        MARK.set(value)
        return before

    @server.tool
    async def pause() -> str:
        """Wait a little, then say what the context variable holds."""
        await asyncio.sleep(0.05)
        return MARK.get()

    @server.tool
    async def bounded() -> str:
        """Time out on its own, across awaits, in one task."""
        first = asyncio.current_task()
        try:
            async with asyncio.timeout(0.05):
                await asyncio.sleep(10)
        except TimeoutError:
            return f"timed out, same task: {asyncio.current_task() is first}"
        return "not timed out"

    @server.tool
    async def slow() -> str:
        """Record that it started, then take long."""
        started.append("slow")
        await asyncio.sleep(10)
        return "never"

    return server


def lines(*messages: dict[str, Any]) -> bytes:
    return b"".join(orjson.dumps(message) + b"\n" for message in messages)


def call(id: int, tool: str, **arguments: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


async def opened(server: Server) -> tuple[ServerSession, list[dict[str, Any]]]:
    answers: list[dict[str, Any]] = []

    def write(data: bytes) -> None:
        answers.extend(orjson.loads(line) for line in data.splitlines() if line.strip())

    session = ServerSession(server, server.connection(), write)
    session.feed(lines({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": HELLO}))
    session.feed(lines({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    await asyncio.sleep(0.01)
    answers.clear()
    return session, answers


async def until(answers: list[dict[str, Any]], count: int) -> None:
    for _ in range(500):
        if len(answers) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{len(answers)} answers of {count}: {answers}")


def texts(answers: list[dict[str, Any]]) -> dict[Any, str]:
    return {answer["id"]: answer["result"]["content"][0]["text"] for answer in answers if "result" in answer}


async def test_calls_that_arrive_together_keep_their_own_context_timeouts_and_pace() -> None:
    started: list[str] = []
    session, answers = await opened(build(started))
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4}}
    session.feed(
        lines(
            call(1, "mark", value="a"),
            call(2, "pause"),
            call(3, "mark", value="b"),
            call(4, "slow"),
            cancel,  # before the call started: it never does
            call(5, "bounded"),
            call(6, "mark", value="c"),
        )
    )
    await until(answers, 5)
    order = [answer["id"] for answer in answers]
    assert order.index(3) < order.index(2) and order.index(6) < order.index(2)  # nothing waited for pause
    assert texts(answers) == {
        1: "unset",
        2: "unset",
        3: "unset",
        5: "timed out, same task: True",
        6: "unset",
    }
    assert started == [] and 4 not in order
    await session.close(0.1)


async def test_calls_not_yet_started_when_the_session_closes_are_answered() -> None:
    session, answers = await opened(build([]))
    session.feed(lines(*(call(id, "mark", value=str(id)) for id in range(1, 21))))
    await session.close(1.0)  # in the same turn of the loop: none has started yet
    assert texts(answers) == {id: "unset" for id in range(1, 21)}


async def test_a_session_closed_at_once_drops_what_has_not_started() -> None:
    started: list[str] = []
    session, answers = await opened(build(started))
    session.feed(lines(call(1, "slow"), call(2, "mark", value="x")))
    await session.close(0)
    await asyncio.sleep(0.05)
    assert started == [] and answers == []


async def test_a_cancelled_call_that_ends_late_leaves_a_newer_call_with_its_id_cancellable() -> None:
    # The client cancels call 9 and reuses its id at once; the first call ends only after
    # the second started, which must stay the one a second cancellation of 9 reaches.
    server = Server("reuse")
    entered = {"old": asyncio.Event(), "new": asyncio.Event()}
    cancelled = {"old": asyncio.Event(), "new": asyncio.Event()}
    release = asyncio.Event()

    @server.tool
    async def hold(label: str) -> str:
        """Wait until cancelled; end only once released."""
        entered[label].set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled[label].set()
            await release.wait()
            raise
        return "never"

    session, answers = await opened(server)
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}}
    session.feed(lines(call(9, "hold", label="old")))
    await asyncio.wait_for(entered["old"].wait(), 10)
    session.feed(lines(cancel))
    await asyncio.wait_for(cancelled["old"].wait(), 10)
    old = session.task_of(9)
    assert old is not None
    session.feed(lines(call(9, "hold", label="new")))
    await asyncio.wait_for(entered["new"].wait(), 10)
    release.set()
    await asyncio.wait_for(asyncio.wait([old]), 10)  # the first call has ended
    session.feed(lines(cancel))
    await asyncio.wait_for(cancelled["new"].wait(), 10)
    await session.close(1.0)
    assert answers == []  # cancelled calls are never answered


async def test_calls_taken_at_once_from_a_read_keep_its_order_cancellations_and_refusals() -> None:
    """Lines a read holds whole go one at a time: a direct call queued at once is cancelled
    by a later line of the same read; calls the hot path does not take (wrong arguments, a
    disabled tool) are answered as ever, in between."""
    server = build([])
    session, answers = await opened(server)
    mark = server.registry.by_key["mark"]
    assert mark.direct is not None and mark.direct.kinds is not None  # its calls are taken at once
    server.registry.by_key["pause"].enabled = False
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
    session.feed(
        lines(
            call(2, "mark", value="x"), cancel, call(3, "mark", value=5), call(4, "pause"), call(5, "mark", value="y")
        )
    )
    await until(answers, 3)
    await session.close(0.1)  # whatever was still to come, sent
    by_id = {answer["id"]: answer for answer in answers}
    assert sorted(by_id) == [3, 4, 5]  # 2 never answered
    assert by_id[3]["result"]["isError"] is True and "value" in by_id[3]["result"]["content"][0]["text"]
    assert "Unknown tool: pause" in str(by_id[4])
    assert texts(answers)[5] == "unset"


class Later:
    """An awaitable that is no coroutine (only ``__await__``), as a tool's ``invoke`` may give."""

    def __await__(self) -> Any:
        yield from ()
        return "later"


async def test_a_queued_call_whose_tool_gives_another_awaitable_is_answered() -> None:
    server = build([])

    @server.tool
    async def shaped(items: list[int]) -> str:
        """No flat schema: validated, then invoked."""
        return "never"

    server.registry.by_key["shaped"].invoke = lambda arguments, context=None, loop=None: Later()  # type: ignore[method-assign]
    session, answers = await opened(server)
    session.feed(lines(call(1, "shaped", items=[1]), call(2, "mark", value="x")))
    await until(answers, 2)
    assert texts(answers) == {1: "later", 2: "unset"}
    await session.close(0.1)
