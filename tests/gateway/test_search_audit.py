"""With the gateway's search on, ``call_tool`` is audited as the upstream tool it runs, and
the policy judges that tool, as for a direct call."""

from __future__ import annotations

import json
from pathlib import Path

from tests.gateway.test_gateway import BASIC, command_of
from toolwire.client import Client
from toolwire.gateway import Gateway


async def test_the_audit_records_the_tool_call_tool_runs(tmp_path: Path) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text(
        '[gateway]\nsearch = true\n[audit]\nfile = "audit.jsonl"\n'
        '[policy.default]\nallow = ["basic/*"]\ndeny = ["basic/sleepy"]\n'
        f'[upstreams.basic]\ncommand = {command_of(BASIC)}\nstart = "eager"\n'
    )
    async with Client(Gateway.from_file(config).server) as client:
        assert sorted(tool.name for tool in await client.list_tools()) == ["call_tool", "search_tools"]
        ran = await client.call_tool("call_tool", {"name": "basic.echo", "arguments": {"text": "found"}})
        assert ran.text == "found"
        refused = await client.call_tool("call_tool", {"name": "basic.sleepy", "arguments": {"seconds": 0}})
        assert refused.is_error and "basic.sleepy is not allowed for anonymous" in refused.text
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    started = [(record["name"], record["upstream"], record["tool"]) for record in records if record["phase"] == "start"]
    assert started == [("basic.echo", "basic", "echo"), ("basic.sleepy", "basic", "sleepy")]
    ended = [(record["outcome"], record["error"]) for record in records if record["phase"] == "end"]
    assert ended == [("ok", None), ("tool_error", "refused")]
