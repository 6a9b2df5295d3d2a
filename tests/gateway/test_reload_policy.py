"""A changed ``[policy]`` and ``[audit]`` applied while serving (``toolwire gateway`` as a real
process), sessions kept: a tool the new policy denies leaves the same session's list with a
``list_changed`` and is refused; the new audit file gets the calls; a broken policy table
is not applied (the old one goes on); a call in flight finishes under the old policy."""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.gateway.test_gateway import BASIC
from tests.gateway.test_relaying import RELAY
from tests.gateway.test_reload import upstream
from tests.gateway.waiting import ListChanges
from tests.guards.test_guards_audit import open_descriptors
from toolwire.client import Client
from toolwire.gateway import Gateway
from toolwire.gateway.reload import ConfigWatcher

ALLOWED = '[policy.default]\nallow = ["*/*"]\n'
DENIED = '[policy.default]\nallow = ["*/*"]\ndeny = ["basic/echo"]\n[audit]\nfile = "calls.jsonl"\n'


async def denied_in_the_same_session(config: Path, reload: str, hangup: bool) -> None:
    config.write_text(f"[gateway]\nreload = {reload}\n" + upstream("basic", BASIC) + ALLOWED)
    changes = ListChanges()
    async with Client(
        [sys.executable, "-m", "toolwire", "gateway", str(config)], on_tools_changed=changes.changed
    ) as client:
        await changes.until(client, lambda names: "basic.echo" in names)
        assert (await client.call_tool("basic.echo", {"text": "before"})).text == "before"
        config.write_text(f"[gateway]\nreload = {reload}\n" + upstream("basic", BASIC) + DENIED)
        if hangup:
            os.kill(client.transport.process.pid, signal.SIGHUP)  # type: ignore[attr-defined]
        names = await changes.until(client, lambda names: "basic.echo" not in names)
        assert "basic.analyze" in names
        refused = await client.call_tool("basic.echo", {"text": "after"})
        assert refused.is_error and "basic.echo is not allowed" in refused.text and "deny 'basic/echo'" in refused.text
        assert not (await client.call_tool("basic.analyze", {"text": "a b"})).is_error
    records = [json.loads(line) for line in (config.parent / "calls.jsonl").read_text().splitlines()]
    assert [(record["tool"], record["upstream"]) for record in records if record["phase"] == "start"] == [
        ("echo", "basic"),
        ("analyze", "basic"),
    ]


async def test_a_changed_policy_applies_to_the_same_session_when_the_file_changes(tmp_path: Path) -> None:
    await denied_in_the_same_session(tmp_path / "gateway.toml", "true", hangup=False)


async def test_a_changed_policy_applies_to_the_same_session_on_sighup(tmp_path: Path) -> None:
    await denied_in_the_same_session(tmp_path / "gateway.toml", "false", hangup=True)


async def test_a_broken_policy_table_is_not_applied_and_the_old_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text("[gateway]\nreload = false\n" + upstream("basic", BASIC) + ALLOWED)
    gateway = Gateway.from_file(config)
    async with Client(gateway.server) as client:
        watcher = ConfigWatcher(gateway)
        config.write_text(
            "[gateway]\nreload = false\n" + upstream("basic", BASIC) + '[policy.default]\nalow = ["*/*"]\n'
        )
        await watcher.check()
        assert "[policy.default] 'alow' is not a known key (did you mean 'allow'?): not reloaded" in caplog.text
        assert (await client.call_tool("basic.echo", {"text": "still"})).text == "still"


async def test_search_turned_on_by_a_reload_lists_the_search_tools_to_the_same_session(tmp_path: Path) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text("[gateway]\nreload = false\n" + upstream("basic", BASIC))
    changes = ListChanges()
    gateway = Gateway.from_file(config)
    async with Client(gateway.server, on_tools_changed=changes.changed) as client:
        await changes.until(client, lambda names: "basic.echo" in names)
        watcher = ConfigWatcher(gateway)
        config.write_text("[gateway]\nreload = false\nsearch = true\n" + upstream("basic", BASIC))
        await watcher.check()
        await changes.until(client, lambda names: names == {"search_tools", "call_tool"})
        ran = await client.call_tool("call_tool", {"name": "basic.echo", "arguments": {"text": "found"}})
        assert ran.text == "found"


async def test_a_call_in_flight_finishes_under_the_old_policy(tmp_path: Path) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text("[gateway]\nreload = false\n" + upstream("relay", RELAY) + ALLOWED)
    gateway = Gateway.from_file(config)
    watcher = ConfigWatcher(gateway)

    async def reload_then_answer(params: dict[str, Any]) -> dict[str, Any]:
        config.write_text("[gateway]\nreload = false\n" + upstream("relay", RELAY) + ALLOWED + 'deny = ["relay/ask"]\n')
        await watcher.check()  # applied while the call waits for this answer
        return {"action": "accept", "content": {"name": "Ada"}}

    async with Client(gateway.server, protocol="2025-11-25", elicitation=reload_then_answer) as client:
        assert (await client.call_tool("relay.ask")).text == "hello Ada"
        refused = await client.call_tool("relay.ask")
        assert refused.is_error and "relay.ask is not allowed" in refused.text


async def test_reloaded_policies_leave_one_audit_file_open(tmp_path: Path) -> None:
    # Each changed policy opens its audit file anew; the old one's is closed once nothing
    # refers to it (its calls done), so reloads do not pile up open files.
    config = tmp_path / "gateway.toml"
    audited = '[audit]\nfile = "calls.jsonl"\n'
    config.write_text("[gateway]\nreload = false\n" + upstream("basic", BASIC) + ALLOWED + audited)
    gateway = Gateway.from_file(config)
    watcher = ConfigWatcher(gateway)
    async with Client(gateway.server) as client:
        for number in range(6):
            denied = f'deny = ["basic/nothing{number}"]\n'
            config.write_text("[gateway]\nreload = false\n" + upstream("basic", BASIC) + ALLOWED + denied + audited)
            await watcher.check()
            assert (await client.call_tool("basic.echo", {"text": str(number)})).text == str(number)
            gc.collect()
            assert open_descriptors(tmp_path / "calls.jsonl") == 1
    starts = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert [record["arguments"] for record in starts if record["phase"] == "start"] == [{"text": "string(1)"}] * 6
