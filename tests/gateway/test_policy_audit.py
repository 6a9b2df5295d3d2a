"""The gateway's ``[audit]`` table: one start and one end record per call in toolwire's
audit trail, naming who, the upstream and its tool, the arguments' shape or their redacted
values, the outcome and the duration; a server killed with SIGKILL right after a call
returned has both records on disk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.gateway.support import SERVER, write_config
from tests.support.httpserve import toolwire_http
from toolwire.client import Client
from toolwire.gateway.audit import load_audit


def records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


@pytest.mark.parametrize(
    ("values", "arguments"),
    [
        ("shape", {"title": "string(5)", "body": "string(32)"}),
        ("redacted", {"title": "hello", "body": "use token=[REDACTED]"}),
    ],
)
async def test_each_call_is_recorded_with_upstream_and_tool_and_survives_sigkill(
    values: str, arguments: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(
        tmp_path,
        f'[policy.default]\nallow = ["github/create_*"]\n\n[audit]\nfile = "audit.jsonl"\nvalues = "{values}"\n',
    )
    monkeypatch.setenv("TOOLWIRE_TEST_GATEWAY", str(config))
    with toolwire_http(SERVER) as (url, process):
        async with Client(url) as client:
            body = "use token=ghp_abcdefghijklmnop12"
            assert (await client.call_tool("github.create_issue", {"title": "hello", "body": body})).text
            assert (await client.call_tool("github.delete_repo", {"name": "x"})).is_error
            process.kill()  # SIGKILL, right after the calls returned
            process.wait(10)
    start, end, refused_start, refused_end = records(tmp_path / "audit.jsonl")
    assert start["phase"] == "start" and (start["upstream"], start["tool"]) == ("github", "create_issue")
    assert start["name"] == "github.create_issue" and start["arguments"] == arguments
    assert "caller" in start and start["caller"] is None  # anonymous: no [auth]
    assert end["phase"] == "end" and end["id"] == start["id"] and end["outcome"] == "ok" and end["ms"] >= 0
    assert (refused_start["upstream"], refused_start["tool"]) == ("github", "delete_repo")
    assert (refused_end["outcome"], refused_end["error"]) == ("tool_error", "refused")


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ({"values": "all"}, "[audit] 'values' must be \"shape\" or \"redacted\", not 'all'"),
        ({"fle": "a.jsonl"}, "[audit] 'fle' is not a known key (did you mean 'file'?)"),
        ({"file": 3}, "[audit] 'file' must be a path (a string), not a number"),
    ],
)
def test_an_audit_table_that_cannot_be_read_is_refused_naming_the_key(table: dict[str, Any], said: str) -> None:
    with pytest.raises(ValueError) as caught:
        load_audit(table)
    assert str(caught.value) == said
