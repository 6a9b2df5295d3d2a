"""Per-user search: the search transform's two tools listed to the callers the policy gives
``search = true``, every tool to the others; what ``search_tools`` finds and what
``call_tool`` runs obey the caller's policy (over HTTP with real JWTs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gateway.support import served_over_http, write_config

SEARCH = """
[policy.default]
allow = ["files/*", "github/get_*"]
search = true

[policy.users."bob@example.com"]
allow = ["github/*"]
search = false
"""


async def test_search_is_per_caller_and_obeys_their_policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with served_over_http(write_config(tmp_path, SEARCH), monkeypatch) as served:
        async with served.client("alice") as alice:
            assert sorted(tool.name for tool in await alice.list_tools()) == ["call_tool", "search_tools"]
            found = await alice.call_tool("search_tools", {"query": "delete a repository or an issue", "limit": 50})
            names = {tool["name"] for tool in found.structured["tools"]}
            assert "github.get_issue" in names and not any("delete" in name for name in names)
            refused = await alice.call_tool("call_tool", {"name": "github.delete_repo", "arguments": {"name": "x"}})
            assert refused.is_error and refused.text.startswith("github.delete_repo is not allowed for alice")
            ran = await alice.call_tool("call_tool", {"name": "github.get_issue", "arguments": {"number": 4}})
            assert ran.text == "issue 4"
        async with served.client("bob") as bob:
            names = {tool.name for tool in await bob.list_tools()}
            assert {"github.delete_repo", "github.get_issue", "files.read_file"} <= names
