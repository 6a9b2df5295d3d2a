"""Calls over HTTP run in their request's own task on Python 3.11 (see
``ServerSession.handle_inline``): what a tool may count on is unchanged.

A tool keeps one task from its first line to its last, ``asyncio.timeout`` inside it times
out the tool alone, a guard's deadline cancels the call and the connection goes on, context
variables do not leak from one call to the next, and the end of a session cancels its calls
without taking the server down. Both eras, over real sockets.
"""

from __future__ import annotations

import asyncio
import contextvars

import pytest

from tests.support.httpserve import LEGACY, MODERN, InProcess
from toolwire import Server
from toolwire.client import Client

MARK: contextvars.ContextVar[str] = contextvars.ContextVar("mark", default="unset")


def build(started: asyncio.Event, ended: list[str]) -> Server:
    server = Server("inline", "1.0.0")

    @server.tool
    async def steady() -> str:
        """Wait with a timeout of its own, across awaits."""
        first = asyncio.current_task()
        await asyncio.sleep(0)
        try:
            async with asyncio.timeout(0.05):
                await asyncio.sleep(10)
        except TimeoutError:
            return f"same task: {asyncio.current_task() is first}, timed out"
        return "not timed out"

    @server.tool
    def mark(value: str) -> str:
        """Set a context variable; say what it was."""
        before = MARK.get()
        MARK.set(value)
        return before

    @server.tool(timeout=0.1)
    async def stuck() -> str:
        """Outlive its deadline."""
        await asyncio.sleep(10)
        return "never"

    @server.tool
    async def long() -> str:
        """Run until cancelled."""
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise
        return "never"

    return server


@pytest.mark.parametrize("runner", ["toolwire", "uvicorn"])
@pytest.mark.parametrize("protocol", [LEGACY, MODERN])
async def test_a_tool_keeps_its_task_its_timeouts_and_its_context(protocol: str, runner: str) -> None:
    server = build(asyncio.Event(), [])
    async with InProcess(server.http_app(), runner=runner) as url, Client(url, protocol=protocol) as client:
        assert (await client.call_tool("steady")).text == "same task: True, timed out"
        assert (await client.call_tool("mark", {"value": "a"})).text == "unset"
        assert (await client.call_tool("mark", {"value": "b"})).text == "unset"  # nothing leaked
        timed_out = await client.call_tool("stuck")
        assert timed_out.is_error and "timed out after 0.1 s" in timed_out.text
        assert (await client.call_tool("steady")).text == "same task: True, timed out"


@pytest.mark.parametrize("runner", ["toolwire", "uvicorn"])
@pytest.mark.parametrize("protocol", [LEGACY, MODERN])
async def test_a_call_cut_off_by_its_client_is_cancelled_and_the_server_goes_on(protocol: str, runner: str) -> None:
    started, ended = asyncio.Event(), []
    server = build(started, ended)
    async with InProcess(server.http_app(), runner=runner) as url:
        async with Client(url, protocol=protocol) as client:
            call = asyncio.create_task(client.call_tool("long"))
            await asyncio.wait_for(started.wait(), 10)
            call.cancel()  # legacy: notifications/cancelled; 2026-07-28: the stream is closed
            await asyncio.gather(call, return_exceptions=True)
            for _ in range(200):
                if ended:
                    break
                await asyncio.sleep(0.01)
            assert ended == ["cancelled"]
            assert (await client.call_tool("mark", {"value": "x"})).text == "unset"
        started.clear()
        async with Client(url, protocol=protocol) as client:
            call = asyncio.create_task(client.call_tool("long"))
            await asyncio.wait_for(started.wait(), 10)
        # the client closed (legacy: its session deleted) with the call running
        await asyncio.gather(call, return_exceptions=True)
        for _ in range(200):
            if len(ended) == 2:
                break
            await asyncio.sleep(0.01)
        assert ended == ["cancelled", "cancelled"]
        async with Client(url, protocol=protocol) as client:
            assert (await client.call_tool("steady")).text == "same task: True, timed out"
