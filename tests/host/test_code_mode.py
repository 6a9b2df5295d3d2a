"""Code mode end to end: the model (the real ``openai`` and ``anthropic`` packages against the
scripted model server) writes a program that chains calls of a real server process; the
program runs in the real sandbox (bubblewrap), and each of its calls is decided, audited by
the server's guard and reported as the model's own calls are. ``toolwire ask --code-mode`` as
a process, ``toolwire chat --code-mode`` in tmux, and the refusal to start without bubblewrap."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.cli.test_host_cli import PROMPT, Tmux, chat_env, tmux  # noqa: F401 (tmux: a fixture)
from tests.support.clirun import failed, toolwire
from tests.support.model_server import ModelServer, Reply, ToolCall
from toolwire.host import (
    ApprovalNeeded,
    ApprovalPolicy,
    Conversation,
    Event,
    Host,
    SandboxLimits,
    SandboxUnavailable,
    ToolCallDecided,
    ToolCallProposed,
    ToolResult,
)
from toolwire.host.providers import AnthropicProvider, OpenAIProvider
from toolwire.host.sandbox import INSTALL

ROOT = Path(__file__).resolve().parents[2]
ORDERS = str(ROOT / "tests" / "servers" / "orders.py")
HOSTED = str(ROOT / "tests" / "servers" / "host_server.py")
#: Five chained calls: a customer, their orders, the total of each of the three.
CHAIN = """
customer = await find_customer(name="Ada")
orders = await list_orders(customer_id=customer["customer_id"])
totals = [(await order_total(order_id=order))["total"] for order in orders["order_ids"]]
print("orders:", orders["order_ids"])
return sum(totals)
"""


@pytest.fixture
def model() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


def provider(kind: str, model: ModelServer) -> Any:
    if kind == "openai":
        return OpenAIProvider("deepseek-chat", api_key="test", base_url=model.openai_url, max_retries=0)
    return AnthropicProvider("claude-test", api_key="test", base_url=model.anthropic_url, max_retries=0)


async def run(conversation: Conversation, text: str, answer: Any = None) -> list[Event]:
    events = []
    async for event in conversation.send(text):
        events.append(event)
        if answer is not None and isinstance(event, ApprovalNeeded):
            answer(event)
    return events


def tool_texts(request: dict[str, Any]) -> list[str]:
    """The text of the tool results a model request carries, in either API's shape."""
    found = []
    for message in request["messages"]:
        if message["role"] == "tool":
            found.append(message["content"])
        elif isinstance(message.get("content"), list):
            found += [block["content"][0]["text"] for block in message["content"] if block.get("type") == "tool_result"]
    return found


def offered(request: dict[str, Any]) -> dict[str, str]:
    """The tools a model request offers: their descriptions by name, in either API's shape."""
    tools = [tool.get("function", tool) for tool in request.get("tools", [])]
    return {tool["name"]: tool["description"] for tool in tools}


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_program_chains_five_calls_in_one_round_trip(
    model: ModelServer, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    audit = tmp_path / "audit.jsonl"
    monkeypatch.setenv("AUDIT_FILE", str(audit))
    model.script(Reply(tool_calls=[ToolCall("run_code", {"program": CHAIN}, id="p")]), Reply(text="49.75 euros."))
    policy = ApprovalPolicy(trusted={"orders"})
    async with Host([f"orders={ORDERS}"], provider=provider(kind, model), policy=policy, code_mode=True) as host:
        events = await run(host.conversation(), "How much has Ada spent?")
    first, second = model.requests
    tools = offered(first)
    assert list(tools) == ["run_code"]
    assert "find_customer(*, name: str) -> dict  # The id of the customer called ``name``." in tools["run_code"]
    assert "cancel_order(*, order_id: int, reason: str = None) -> str  # Cancel an order." in tools["run_code"]
    assert tool_texts(second) == ["Printed:\norders: [101, 102, 103]\n\n\nResult:\n49.75"]
    inner = [event for event in events if isinstance(event, ToolCallProposed) and event.call_id != "p"]
    assert [(event.call_id, event.server, event.name) for event in inner] == [
        ("p.1", "orders", "find_customer"),
        ("p.2", "orders", "list_orders"),
        ("p.3", "orders", "order_total"),
        ("p.4", "orders", "order_total"),
        ("p.5", "orders", "order_total"),
    ]
    decided = [event for event in events if isinstance(event, ToolCallDecided)]
    assert [(event.decision, event.by) for event in decided] == [("allow", "host")] + [("allow", "policy")] * 5
    results = [event for event in events if isinstance(event, ToolResult)]
    assert [(event.call_id, event.is_error) for event in results][-1] == ("p", False)
    records = [orjson.loads(line) for line in audit.read_text().splitlines()]
    called = [record["name"] for record in records if record["phase"] == "start" and record["method"] == "tools/call"]
    assert called == ["find_customer", "list_orders"] + ["order_total"] * 3


async def test_calls_in_a_program_are_asked_about_and_a_refusal_raises_there(model: ModelServer) -> None:
    program = """
done = await cancel_order(order_id=101)
try:
    await cancel_order(order_id=102, reason="late")
except ToolError as exc:
    return [done, str(exc)]
"""
    model.script(Reply(tool_calls=[ToolCall("run_code", {"program": program}, id="p")]), Reply(text="One cancelled."))
    asked: list[ApprovalNeeded] = []

    def answer(event: ApprovalNeeded) -> None:
        asked.append(event)
        if len(asked) == 1:
            event.allow()
        else:
            event.refuse("keep that one")

    async with Host([f"orders={ORDERS}"], provider=provider("openai", model), code_mode=True) as host:
        await run(host.conversation(), "cancel Ada's first two orders", answer)
    assert [(event.call_id, event.name, event.arguments) for event in asked] == [
        ("p.1", "cancel_order", {"order_id": 101}),
        ("p.2", "cancel_order", {"order_id": 102, "reason": "late"}),
    ]
    [result] = tool_texts(model.requests[1])
    assert orjson.loads(result.removeprefix("Result:\n")) == [
        "order 101 cancelled",
        "The user refused this call: keep that one",
    ]


async def test_a_deny_rule_refuses_a_call_of_a_program(model: ModelServer) -> None:
    program = "await cancel_order(order_id=101)"
    model.script(Reply(tool_calls=[ToolCall("run_code", {"program": program})]), Reply(text="Not allowed."))
    policy = ApprovalPolicy(deny=["orders/cancel_*"])
    async with Host([f"orders={ORDERS}"], provider=provider("openai", model), policy=policy, code_mode=True) as host:
        events = await run(host.conversation(), "cancel order 101")
    [result] = tool_texts(model.requests[1])
    assert result == (
        "The tool reported an error:\nThe program failed: Traceback (the program's lines):\n"
        "line 1: await cancel_order(order_id=101)\n"
        "ToolError: The call was refused: refused by the rule deny 'orders/cancel_*'."
    )
    assert any(isinstance(event, ToolCallDecided) and event.by == "policy" for event in events)


async def test_without_bubblewrap_code_mode_refuses_to_start(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxUnavailable) as raised:
        await Host([f"orders={ORDERS}"], code_mode=True).start()
    assert str(raised.value) == INSTALL


def test_ask_code_mode_runs_the_program(model: ModelServer) -> None:
    model.script(Reply(tool_calls=[ToolCall("run_code", {"program": CHAIN})]), Reply(text="49.75 euros."))
    done = toolwire(
        "ask", ORDERS, "How much?", "--code-mode", "--trust", "orders", "--base-url", model.openai_url, "--model", "m"
    )
    assert (done.returncode, done.stdout) == (0, "49.75 euros.\n"), done.stderr
    assert tool_texts(model.requests[1]) == ["Printed:\norders: [101, 102, 103]\n\n\nResult:\n49.75"]


def test_ask_code_mode_without_bubblewrap_says_what_to_install(model: ModelServer, tmp_path: Path) -> None:
    path = os.pathsep.join(part for part in os.environ["PATH"].split(os.pathsep) if not Path(part, "bwrap").exists())
    done = toolwire(
        "ask", ORDERS, "How much?", "--code-mode", "--base-url", model.openai_url, "--model", "m", PATH=path
    )
    assert failed(done, 1) == f"toolwire: {INSTALL}"
    assert model.requests == []


def test_chat_code_mode_asks_about_a_call_of_the_program(
    model: ModelServer,
    tmux: Callable[..., Tmux],  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    program = "return await cancel_order(order_id=101)"
    model.script(Reply(tool_calls=[ToolCall("run_code", {"program": program})]), Reply(text="Cancelled."))
    command = [
        sys.executable,
        "-m",
        "toolwire",
        "chat",
        ORDERS,
        "--code-mode",
        "--base-url",
        model.openai_url,
        "--model",
        "m",
    ]
    chat = tmux(command, chat_env(tmp_path))
    screen = chat.wait_for(PROMPT)
    assert "code mode: the model calls these from programs it writes (run_code, sandboxed)" in screen
    chat.type("cancel order 101")
    screen = chat.wait_for("allow? [y]es once")
    assert "⚙ run_code" in screen and "? Allow orders/cancel_order" in screen and "order_id: 101" in screen
    chat.type("y")
    screen = chat.wait_for("Cancelled.")
    assert tool_texts(model.requests[1]) == ["Result:\norder 101 cancelled"]
    chat.type("exit")
    chat.wait_for_exit()


async def test_the_time_limit_does_not_count_the_time_of_the_program_s_calls(model: ModelServer) -> None:
    program = "await slow(seconds=4)\nreturn 'after the call'"
    model.script(Reply(tool_calls=[ToolCall("run_code", {"program": program})]), Reply(text="Done."))
    limits = SandboxLimits(wall_seconds=3)
    policy = ApprovalPolicy(trusted={"hosted"})
    async with Host([f"hosted={HOSTED}"], provider=provider("openai", model), policy=policy, code_mode=limits) as host:
        await run(host.conversation(), "wait")
    assert tool_texts(model.requests[1]) == ["Result:\nafter the call"]


async def test_cancelling_the_turn_stops_the_program(model: ModelServer) -> None:
    program = "import asyncio\nawait asyncio.Event().wait()"
    model.script(Reply(tool_calls=[ToolCall("run_code", {"program": program}, id="p")]))
    async with Host([f"orders={ORDERS}"], provider=provider("openai", model), code_mode=True) as host:
        conversation = host.conversation()
        events = []
        async with asyncio.timeout(60):  # a turn that cannot be cancelled fails the test, not hangs it
            async for event in conversation.send("wait"):
                events.append(event)
                if isinstance(event, ToolCallDecided) and event.call_id == "p":
                    while not sandboxes():  # the program's process is being started
                        await asyncio.sleep(0.01)
                    conversation.cancel()
        assert events[-1].reason == "cancelled"  # type: ignore[attr-defined]
        assert sandboxes() == []
        assert conversation.messages[-1]["content"] == [
            {"type": "text", "text": "The call did not finish: the user cancelled the call."}
        ]


def sandboxes() -> list[int]:
    """The ``bwrap`` processes this test process started."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            pid, rest = stat.read_text().split(" (", 1)
        except OSError:
            continue
        name, fields = rest.rsplit(") ", 1)
        if name == "bwrap" and int(fields.split()[1]) == os.getpid():
            found.append(int(pid))
    return found


async def test_a_program_goes_on_when_a_server_stops_under_it(model: ModelServer) -> None:
    program = """
try:
    await crash()
except ToolError as exc:
    first = str(exc)
try:
    await fail(reason="late")
except ToolError as exc:
    return [first, str(exc)]
"""
    model.script(Reply(tool_calls=[ToolCall("run_code", {"program": program})]), Reply(text="It stopped."))
    policy = ApprovalPolicy(trusted={"hosted"})
    async with Host([f"hosted={HOSTED}"], provider=provider("openai", model), policy=policy, code_mode=True) as host:
        await run(host.conversation(), "crash it")
    [result] = tool_texts(model.requests[1])
    stopped, missing = orjson.loads(result.removeprefix("Result:\n"))
    assert stopped.startswith("The server 'hosted' stopped during the call")
    assert missing == "There is no tool named 'fail'. The tools are: run_code."
