"""The policy joined to the gateway, end to end: a real ``toolwire gateway`` process over HTTP
with two upstreams run over stdio, callers with real JWTs of a token issuer served over HTTP,
three users — alice refused, bob asked (and accepting), carol allowed — and the audit file
holding one record per call with the upstream, the tool and the caller."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from tests.gateway.support import TEAM
from tests.gateway.waiting import ListChanges
from tests.support.clirun import environment
from tests.support.httpserve import free_port, wait_for_port
from tests.support.tokenissuer import TokenIssuer
from toolwire.client import Client

UPSTREAM = str(Path(__file__).resolve().parent / "servers" / "team.py")


def config_text(issuer: str) -> str:
    upstream = [sys.executable, UPSTREAM]
    return f"""
[auth]
issuer = {json.dumps(issuer)}

[upstreams.files]
command = {json.dumps([*upstream, "files"])}

[upstreams.github]
command = {json.dumps([*upstream, "github"])}

{TEAM}
[audit]
file = "audit.jsonl"
"""


async def test_three_users_meet_the_gateways_policy_and_every_call_is_audited(tmp_path: Path) -> None:
    asked: list[dict[str, Any]] = []

    async def bob_accepts(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {}}

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    async with TokenIssuer() as issuer:
        config = tmp_path / "gateway.toml"
        config.write_text(config_text(issuer.url))
        command = [sys.executable, "-m", "toolwire", "gateway", str(config), "--http", str(port)]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment())

        def client(subject: str, *groups: str, **options: Any) -> Client:
            token = issuer.token(url, subject=subject, email=f"{subject}@example.com", groups=list(groups))
            return Client(url, headers={"Authorization": f"Bearer {token}"}, **options)

        try:
            wait_for_port(port, process)
            changes = ListChanges()
            async with client("alice", "maintainers", on_tools_changed=changes.changed) as alice:
                # the upstreams start at the first use, their tools announced with list_changed
                names = await changes.until(alice, lambda names: {"github.create_issue", "files.read_file"} <= names)
                assert "github.delete_repo" not in names
                refused = await alice.call_tool("github.delete_repo", {"name": "toolwire"})
                assert refused.is_error and "not allowed for alice" in refused.text
                outside = await alice.call_tool("files.read_file", {"path": "/etc/passwd"})
                assert outside.is_error and "path" in outside.text
                assert (await alice.call_tool("files.read_file", {"path": "/srv/shared/a.txt"})).text == (
                    "read /srv/shared/a.txt"
                )
            async with client("bob", "maintainers", elicitation=bob_accepts) as bob:
                assert (await bob.call_tool("github.delete_repo", {"name": "old"})).text == "deleted old"
            async with client("carol") as carol:
                names = {tool.name for tool in await carol.list_tools()}
                assert names == {"files.read_file"}
                hidden = await carol.call_tool("github.create_issue", {"title": "hi"})
                assert hidden.is_error
        finally:
            process.terminate()
            process.wait(10)
    (question,) = asked
    assert "github.delete_repo" in question["message"] and '"name": "old"' in question["message"]
    records = [orjson.loads(line) for line in (tmp_path / "audit.jsonl").read_bytes().splitlines()]
    calls = [record for record in records if record.get("phase") == "start" and record.get("method") == "tools/call"]
    who_what = [(record.get("caller"), record.get("upstream"), record.get("tool")) for record in calls]
    assert ("alice", "github", "delete_repo") in who_what
    assert ("bob", "github", "delete_repo") in who_what
    assert ("carol", "github", "create_issue") in who_what


async def test_without_an_audit_table_every_call_is_recorded_by_shape_on_stderr(tmp_path: Path) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text(f'[upstreams.files]\ncommand = {json.dumps([sys.executable, UPSTREAM, "files"])}\nstart = "eager"\n')
    port = free_port()
    command = [sys.executable, "-m", "toolwire", "gateway", str(config), "--http", str(port)]
    with (tmp_path / "stderr").open("wb") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=environment())
        try:
            wait_for_port(port, process)
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                assert (await client.call_tool("files.read_file", {"path": "/srv/a"})).text == "read /srv/a"
        finally:
            process.terminate()
            process.wait(10)
    lines = (tmp_path / "stderr").read_bytes().splitlines()
    records = [orjson.loads(line) for line in lines if line.startswith(b'{"time"')]
    start = next(record for record in records if record["phase"] == "start" and record["method"] == "tools/call")
    assert (start["upstream"], start["tool"], start["arguments"]) == ("files", "read_file", {"path": "string(6)"})
    assert any(record["phase"] == "end" and record["id"] == start["id"] for record in records)
