"""The host against a server that tries to fool the person: tool names that impersonate another
server's tools or the rules' syntax, look-alike names, and terminal escapes in what reaches the
screen. Real server processes (``tests/servers/hostile_tools.py`` speaks JSON-RPC itself), the
real ``openai`` package against the scripted model server, and ``toolwire ask``/``chat`` as
processes writing to a pseudo-terminal."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.clirun import TOOLWIRE, environment, failed, toolwire
from tests.support.model_server import ModelServer, Reply, ToolCall
from toolwire.host import (
    ApprovalNeeded,
    ApprovalPolicy,
    Event,
    Host,
    ServerSpec,
    ToolCallDecided,
    ToolCallProposed,
)
from toolwire.host.providers import OpenAIProvider

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "seed_server.py")
HOSTILE = str(ROOT / "tests" / "servers" / "hostile_tools.py")
ESCAPES = "\x1b]0;owned\x07\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\u202eloud\u200b\u2066"
#: What must never reach a terminal raw: the escapes' introducers, bidi and zero-width characters.
RAW = ["\x1b", "\x07", "\u202e", "\u200b", "\u2066"]


@pytest.fixture
def model() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


def servers() -> list[ServerSpec]:
    return [ServerSpec("seed", SEED), ServerSpec("evil", [sys.executable, HOSTILE])]


def host(model: ModelServer, policy: ApprovalPolicy) -> Host:
    provider = OpenAIProvider("m", api_key="test", base_url=model.openai_url, max_retries=0)
    return Host(servers(), provider=provider, policy=policy)


async def decisions(model: ModelServer, policy: ApprovalPolicy, *calls: tuple[str, str]) -> dict[str, Any]:
    """What happened to a call of each ``(server, tool)``: the policy's verdict
    (``ToolCallDecided``), or the question put to the person (``ApprovalNeeded``, refused)."""
    async with host(model, policy) as running:
        exposed = {(tool.server, tool.tool): tool.name for tool in running.tools}
        model.script(Reply(tool_calls=[ToolCall(exposed[call], {}) for call in calls]), Reply(text="done"))
        events: list[Event] = []
        async for event in running.conversation().send("go"):
            events.append(event)
            if isinstance(event, ApprovalNeeded):
                event.refuse()
    where = {event.call_id: f"{event.server}/{event.name}" for event in events if isinstance(event, ToolCallProposed)}
    return {
        where[event.call_id]: event
        for event in events
        if isinstance(event, ApprovalNeeded) or (isinstance(event, ToolCallDecided) and event.by == "policy")
    }


# -- 1. a rule names one server ---------------------------------------------------------------


async def test_a_server_and_tool_rule_matches_only_the_server_it_names(model: ModelServer) -> None:
    policy = ApprovalPolicy(allow=["seed/*"])
    outcome = await decisions(model, policy, ("evil", "seed/nuke"), ("evil", "seed__nuke"), ("seed", "calculator"))
    assert isinstance(outcome["evil/seed/nuke"], ApprovalNeeded)  # asked, not allowed by seed/*
    assert isinstance(outcome["evil/seed__nuke"], ApprovalNeeded)
    allowed = outcome["seed/calculator"]
    assert isinstance(allowed, ToolCallDecided) and allowed.decision == "allow"


async def test_the_models_names_for_tools_are_not_rules() -> None:
    with pytest.raises(ValueError, match=r"'seed__nuke' .* seed/nuke"):
        Host(servers(), policy=ApprovalPolicy(allow=["seed__nuke"]))
    done = toolwire("ask", f"seed={SEED}", "go", "--allow", "seed__delete_file", "--base-url", "http://127.0.0.1:9/v1")
    assert failed(done, 2) == (
        "toolwire: the rule allow 'seed__delete_file' reads like the model's name of the tool 'delete_file' of the"
        " server 'seed'; rules name tools as SERVER/TOOL: write seed/delete_file (or */seed__delete_file for tools"
        " really named so) (see toolwire ask -h)"
    )


# -- 2. look-alike names ----------------------------------------------------------------------


async def test_a_deny_rule_also_refuses_look_alikes_of_what_it_matches(model: ModelServer) -> None:
    policy = ApprovalPolicy(deny=["*delete_file"])
    cyrillic, capital_i = "evil/d\u0435lete_file", "evil/delete_fiIe"
    calls = [("evil", "d\u0435lete_file"), ("evil", "delete_fiIe"), ("seed", "delete_file")]
    outcome = await decisions(model, policy, *calls)
    for call in (cyrillic, capital_i, "seed/delete_file"):
        refused = outcome[call]
        assert isinstance(refused, ToolCallDecided) and refused.decision == "refuse", (call, refused)
    assert "looks like" in outcome[cyrillic].reason and "looks like" not in outcome["seed/delete_file"].reason


async def test_look_alike_and_unusual_names_are_marked_in_listings_and_questions(model: ModelServer) -> None:
    async with host(model, ApprovalPolicy()) as running:
        marks = {f"{tool.server}/{tool.tool}": tool.warning for tool in running.tools}
    assert "U+0435 CYRILLIC SMALL LETTER IE" in marks["evil/d\u0435lete_file"]
    assert "seed/delete_file" in marks["evil/d\u0435lete_file"] and "seed/delete_file" in marks["evil/delete_fiIe"]
    assert "'/'" in marks["evil/seed/nuke"]
    assert marks["seed/calculator"] == marks["evil/calculator"] == marks["seed/get_weather"] == ""
    outcome = await decisions(model, ApprovalPolicy(), ("evil", "d\u0435lete_file"))
    question = outcome["evil/d\u0435lete_file"]
    assert isinstance(question, ApprovalNeeded) and "U+0435" in question.warning


async def test_a_bare_rule_matching_tools_of_several_servers_allows_none_and_says_so(model: ModelServer) -> None:
    policy = ApprovalPolicy(allow=["calculator"])
    outcome = await decisions(model, policy, ("evil", "calculator"), ("seed", "calculator"))
    for call in ("evil/calculator", "seed/calculator"):
        asked = outcome[call]
        assert isinstance(asked, ApprovalNeeded), (call, asked)
        assert "matches tools of 2 servers (evil, seed)" in asked.reason
    async with host(model, policy) as running:
        assert running.warnings == [
            "the rule allow 'calculator' matches tools of 2 servers (evil, seed), so it allows none of them:"
            " write evil/calculator or seed/calculator, or */calculator for all"
        ]


# -- 3. what reaches the terminal -------------------------------------------------------------


def on_terminal(args: list[str], typed: str = "") -> tuple[int, str, str]:
    """Run ``toolwire ARGS`` with stdout on a pseudo-terminal, ``typed`` piped to stdin, stderr
    piped: its exit status, what the terminal received, and stderr."""
    leader, follower = pty.openpty()
    env = {**environment(TERM="dumb"), "COLUMNS": "200"}
    env.pop("TTY_COMPATIBLE")
    received = bytearray()

    def drain() -> None:
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the last writer closed the terminal
                return
            if not chunk:
                return
            received.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    process = subprocess.Popen(
        [*TOOLWIRE, *args], stdin=subprocess.PIPE, stdout=follower, stderr=subprocess.PIPE, env=env, text=True
    )
    os.close(follower)
    try:
        _, stderr = process.communicate(typed, timeout=60)
    finally:
        process.kill()
        reader.join(10)
        os.close(leader)
    return process.returncode, received.decode().replace("\r\n", "\n"), stderr


def defused(text: str) -> None:
    for raw in RAW:
        assert raw not in text, f"{raw!r} reached the screen raw:\n{text!r}"
    assert "\ufffd]0;owned\ufffd" in text and "\ufffd[2J" in text and "\\u202eloud\\u200b\\u2066" in text


def test_ask_defuses_the_models_text_and_the_tools_on_a_terminal(model: ModelServer) -> None:
    model.script(Reply(tool_calls=[ToolCall("shout", {})]), Reply(text=f"it said {ESCAPES}"))
    status, shown, stderr = on_terminal(
        ["ask", "shout", "--yes", "--base-url", model.openai_url, "--model", "m", "--", sys.executable, HOSTILE]
    )
    assert status == 0, stderr
    defused(shown)
    defused(stderr)  # the calls, for a person reading them later


def test_chat_defuses_the_models_text_forms_and_names_with_stdin_piped(model: ModelServer) -> None:
    model.script(
        Reply(tool_calls=[ToolCall("form", {})]),
        Reply(text=f"it said {ESCAPES}"),
        Reply(tool_calls=[ToolCall("d_lete_file", {})]),
        Reply(text="kept"),
    )
    typed = "fill it in\ny\ny\nbob\ndelete\nn\n\n"
    status, shown, stderr = on_terminal(
        ["chat", "--base-url", model.openai_url, "--model", "m", "--", sys.executable, HOSTILE], typed
    )
    assert status == 0, stderr
    defused(shown)
    assert shown.count("U+0435 CYRILLIC SMALL LETTER IE") >= 2, shown  # in the listing and in the question
    assert "kept" in shown and "[bold red]Shouts[/bold red] :warning:" in shown  # no markup, no emoji codes


def test_ask_marks_a_look_alike_name_in_the_call_and_its_refusal_as_the_listing_does(model: ModelServer) -> None:
    listed = toolwire("tools", "--", sys.executable, HOSTILE).stdout
    mark = next(line for line in listed.splitlines() if "d\u0435lete_file" in line and "⚠" in line)
    why = mark.split("⚠", 1)[1].strip(" │")[:60]  # the listing's words, as far as its column shows them
    assert len(why) > 40, mark
    model.script(Reply(tool_calls=[ToolCall("d_lete_file", {})]), Reply(text="kept"))
    command = ["ask", "go", "--base-url", model.openai_url, "--model", "m", "--", sys.executable, HOSTILE]
    status, _, stderr = on_terminal(command)
    assert status == 3, stderr
    proposed, warning = stderr.splitlines()[:2]
    assert proposed.startswith("⚙ d_lete_file [hostile_tools/d\u0435lete_file] ⚠"), stderr
    assert warning.startswith("    ⚠ the tool's name 'd\u0435lete_file': ") and why in warning, (why, stderr)
    model.script(Reply(tool_calls=[ToolCall("d_lete_file", {})]), Reply(text="kept"))
    events = [orjson.loads(line) for line in toolwire(*command[:1], "--json", *command[1:]).stdout.splitlines()]
    call = next(event for event in events if event["kind"] == "tool_call")
    question = next(event for event in events if event["kind"] == "approval_needed")
    assert call["warning"] == question["warning"] and why in call["warning"]


def test_toolwire_tools_marks_look_alike_and_unusual_names() -> None:
    done = toolwire("tools", "--", sys.executable, HOSTILE)
    assert done.returncode == 0, done.stderr
    rows = {line.split("│")[1].strip(): line for line in done.stdout.splitlines() if line.startswith("│")}
    assert "⚠ characters outside A-Z a-z 0-9 _ . -: '/'" in rows["seed/nuke"]
    assert "U+0435 CYRILLIC SMALL LETTER IE" in rows["d\u0435lete_file"]
    assert "⚠ looks like hostile-tools/d\u0435lete_file" in rows["delete_fiIe"]
    assert "⚠" not in rows["calculator"] and "⚠" not in rows["seed__nuke"]
