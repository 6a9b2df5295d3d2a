"""What the gateway relays between its callers and an upstream (a toolwire server over stdio):
progress, elicitation, sampling, cancellation, list changes and tasks, in both eras where
the era allows it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.gateway.test_gateway import command_of
from tests.gateway.waiting import ListChanges
from toolwire.client import Client
from toolwire.gateway import Gateway, parse_config

RELAY = str(Path(__file__).parent / "servers" / "relay.py")


def relay_gateway() -> Gateway:
    return Gateway(parse_config(f'[upstreams.relay]\ncommand = {command_of(RELAY)}\nstart = "eager"\n'))


async def elicitation(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": "Ada"}}


async def sampling(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "test"}


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_progress_list_changes_and_tasks_pass_through(era: str) -> None:
    seen: list[float] = []
    changes = ListChanges()
    async with Client(relay_gateway().server, protocol=era, on_tools_changed=changes.changed) as client:
        counted = await client.call_tool("relay.count", {"to": 3}, progress=lambda done, total, _: seen.append(done))
        assert counted.text == "counted to 3" and seen == [1, 2, 3]
        assert (await client.call_tool("relay.grow", {"name": f"fresh_{era[:4]}"})).text.startswith("added")
        await changes.until(client, lambda names: f"relay.fresh_{era[:4]}" in names)
        assert (await client.call_tool("relay.report", {"topic": "tides"}, task=True)).text == "report on tides"


async def test_questions_reach_a_legacy_caller() -> None:
    gateway = relay_gateway()
    async with Client(gateway.server, protocol="2025-11-25", elicitation=elicitation, sampling=sampling) as client:
        assert (await client.call_tool("relay.ask")).text == "hello Ada"
        assert (await client.call_tool("relay.think")).text == "the model said hi"


async def test_a_cancelled_call_is_cancelled_upstream() -> None:
    started = asyncio.Event()
    async with Client(relay_gateway().server, protocol="2025-11-25") as client:
        call = asyncio.ensure_future(client.call_tool("relay.block", progress=lambda *_: started.set()))
        await started.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert (await client.call_tool("relay.was_cancelled")).text == "block was cancelled"
