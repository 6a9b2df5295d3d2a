"""Approval: an ``ask`` rule's call runs only once the calling user accepts it, asked through
their own client's elicitation, in both eras, over HTTP with real JWTs; a decline or cancel,
and a client that cannot elicit, are refusals the model reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.gateway.support import TEAM, served_over_http, write_config

ERAS = ["2025-11-25", "2026-07-28"]


class Person:
    """Answers the gateway's questions with ``action``, keeping what it was asked."""

    def __init__(self, action: str) -> None:
        self.action = action
        self.asked: list[dict[str, Any]] = []

    async def elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(params)
        return {"action": self.action, "content": {}} if self.action == "accept" else {"action": self.action}


@pytest.mark.parametrize("era", ERAS)
async def test_an_ask_rule_runs_the_call_once_the_caller_accepts_having_seen_what_and_with_what(
    era: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bob = Person("accept")
    async with (
        served_over_http(write_config(tmp_path, TEAM), monkeypatch) as served,
        served.client("bob", groups=("maintainers",), protocol=era, elicitation=bob.elicit) as client,
    ):
        assert "github.delete_repo" in {tool.name for tool in await client.list_tools()}
        result = await client.call_tool("github.delete_repo", {"name": "toolwire-old"})
        assert not result.is_error and result.text == "deleted toolwire-old"
        assert (await client.call_tool("github.create_issue", {"title": "hi"})).text == "opened 'hi'"
    (question,) = bob.asked
    message = question["message"]
    assert "The gateway asks bob before running github.delete_repo (ask 'github/delete_*' in its policy)" in message
    assert "What it does: Delete a repository for good, with its issues and history." in message
    assert "destructiveHint: True" in message
    assert '"name": "toolwire-old"' in message


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_a_declined_or_cancelled_approval_is_a_refusal(
    era: str, action: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bob = Person(action)
    async with (
        served_over_http(write_config(tmp_path, TEAM), monkeypatch) as served,
        served.client("bob", groups=("maintainers",), protocol=era, elicitation=bob.elicit) as client,
    ):
        result = await client.call_tool("github.delete_repo", {"name": "toolwire"})
    said = "declined" if action == "decline" else "cancelled"
    assert result.is_error
    assert result.text == f"github.delete_repo was not run: bob {said} it when the gateway asked for approval."
    assert len(bob.asked) == 1


@pytest.mark.parametrize("era", ERAS)
async def test_a_client_that_cannot_elicit_is_told_so_and_what_would_allow_the_call(
    era: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with (
        served_over_http(write_config(tmp_path, TEAM), monkeypatch) as served,
        served.client("bob", groups=("maintainers",), protocol=era) as client,
    ):
        result = await client.call_tool("github.delete_repo", {"name": "toolwire"})
        assert result.is_error
        assert "needs the approval of bob (ask 'github/delete_*' in the gateway's policy)" in result.text
        assert "this client does not support elicitation" in result.text
        assert (
            "declares the elicitation capability, or ask the gateway's administrator for an allow rule" in result.text
        )
        assert (await client.call_tool("github.get_issue", {"number": 3})).text == "issue 3"
