"""The host end to end: real MCP servers (processes over stdio, and in memory), the real
``openai`` and ``anthropic`` packages, and a local model server that speaks their HTTP APIs,
scripted per test."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.model_server import ModelServer, Reply, ToolCall
from toolwire import Content, Server
from toolwire.host import (
    ApprovalNeeded,
    ApprovalPolicy,
    Conversation,
    Done,
    ElicitationNeeded,
    Event,
    Failed,
    Host,
    SamplingNeeded,
    TextDelta,
    ToolCallDecided,
    ToolProgress,
    ToolResult,
    ToolsChanged,
)
from toolwire.host.providers import AnthropicProvider, OpenAIProvider

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "seed_server.py")
HOSTED = str(ROOT / "tests" / "servers" / "host_server.py")
PROVIDERS = ["openai", "anthropic"]


@pytest.fixture
def model() -> Any:
    with ModelServer() as server:
        yield server


def provider(kind: str, model: ModelServer, **options: Any) -> Any:
    if kind == "openai":
        return OpenAIProvider("deepseek-chat", api_key="test", base_url=model.openai_url, max_retries=0, **options)
    return AnthropicProvider("claude-test", api_key="test", base_url=model.anthropic_url, max_retries=0, **options)


async def run(conversation: Conversation, text: str, answer: Any = None) -> list[Event]:
    """The events of one turn; questions go to ``answer(event)`` (default: left unanswered)."""
    events = []
    async for event in conversation.send(text):
        events.append(event)
        if answer is not None and isinstance(event, ApprovalNeeded | SamplingNeeded | ElicitationNeeded):
            answer(event)
    return events


def of(events: list[Event], kind: type) -> list[Any]:
    return [event for event in events if isinstance(event, kind)]


def tool_messages(request: dict[str, Any]) -> list[Any]:
    """The tool results a model request carries, in either API's shape."""
    found = []
    for message in request["messages"]:
        if message["role"] == "tool":
            found.append(message)
        elif isinstance(message.get("content"), list):
            found += [block for block in message["content"] if block.get("type") == "tool_result"]
    return found


# -- the seed flow ---------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "plain"])
@pytest.mark.parametrize("kind", PROVIDERS)
async def test_the_seed_flow_calls_the_calculator_and_answers(model: ModelServer, kind: str, stream: bool) -> None:
    model.script(
        Reply(
            tool_calls=[ToolCall("calculator", {"operation": "add", "a": 4, "b": 4})], input_tokens=50, output_tokens=9
        ),
        Reply(text="4 加 4 等于 8。", input_tokens=70, output_tokens=6),
    )
    policy = ApprovalPolicy(trusted={"seed"})
    async with Host([f"seed={SEED}"], provider=provider(kind, model, stream=stream), policy=policy) as host:
        conversation = host.conversation(system="你是一个智能助手")
        events = await run(conversation, "4 加 4 等于多少")
    deltas = [event.text for event in of(events, TextDelta)]
    assert "".join(deltas) == "4 加 4 等于 8。" and len(deltas) == (4 if stream else 1)
    [result] = of(events, ToolResult)
    assert (result.tool, result.is_error, result.summary) == ("calculator", False, "8")
    [decided] = of(events, ToolCallDecided)
    assert (decided.decision, decided.by) == ("allow", "policy")
    done = events[-1]
    assert isinstance(done, Done)
    assert (done.reason, done.steps, done.input_tokens, done.output_tokens) == ("answered", 2, 120, 15)
    assert conversation.text == "4 加 4 等于 8。"
    first, second = model.requests
    names = [tool["function"]["name"] if kind == "openai" else tool["name"] for tool in first["tools"]]
    assert "calculator" in names and "delete_file" in names
    assert first["tool_choice"] in ("auto", {"type": "auto"}) and first.get("stream", False) is stream
    [sent] = tool_messages(second)
    text = sent["content"] if kind == "openai" else sent["content"][0]["text"]
    assert text == "8"
    assert (second["messages"][0] if kind == "openai" else {"content": second["system"]})[
        "content"
    ] == "你是一个智能助手"


# -- many servers ----------------------------------------------------------------------------


def search_server(name: str, result: str) -> Server:
    server = Server(name)

    @server.tool(read_only=True)
    def search(query: str) -> str:
        """Search."""
        return f"{result}: {query}"

    return server


async def test_two_servers_with_the_same_tool_name_are_told_apart(model: ModelServer) -> None:
    model.script(
        Reply(tool_calls=[ToolCall("books__search", {"query": "a"}), ToolCall("films__search", {"query": "b"})]),
        Reply(text="done"),
    )
    servers = [search_server("books", "book"), search_server("films", "film")]
    policy = ApprovalPolicy(trusted={"books", "films"})
    async with Host(servers, provider=provider("openai", model), policy=policy) as host:
        assert [tool.name for tool in host.tools] == ["books__search", "films__search"]
        events = await run(host.conversation(), "find")
    assert [result.summary for result in of(events, ToolResult)] == ["book: a", "film: b"]


async def test_parallel_calls_run_at_the_same_time(model: ModelServer) -> None:
    model.script(
        Reply(tool_calls=[ToolCall("slow", {"seconds": 0.6}) for _ in range(3)]),
        Reply(text="all done"),
    )
    async with Host([f"h={HOSTED}"], provider=provider("openai", model), policy=ApprovalPolicy(trusted={"h"})) as host:
        events = await run(host.conversation(), "go")
    assert len(of(events, ToolResult)) == 3
    first_result = next(index for index, event in enumerate(events) if isinstance(event, ToolResult))
    running = {event.call_id for event in of(events[:first_result], ToolProgress)}
    assert len(running) == 3  # all three reported progress before any of them finished


# -- approval --------------------------------------------------------------------------------


async def test_allow_once_always_and_refuse(model: ModelServer) -> None:
    model.script(
        Reply(tool_calls=[ToolCall("remove", {"path": "a"})]),
        Reply(text="1"),
        Reply(tool_calls=[ToolCall("remove", {"path": "b"})]),
        Reply(text="2"),
        Reply(tool_calls=[ToolCall("remove", {"path": "c"})]),
        Reply(text="3"),
        Reply(tool_calls=[ToolCall("mutable", {"text": "x"})]),
        Reply(text="4"),
    )
    async with Host([f"h={HOSTED}"], provider=provider("anthropic", model)) as host:
        conversation = host.conversation()
        once = await run(conversation, "remove a", lambda event: event.allow())
        [question] = of(once, ApprovalNeeded)
        assert (question.server, question.name, question.arguments) == ("h", "remove", {"path": "a"})
        assert "not trusted" in question.reason
        always = await run(conversation, "remove b", lambda event: event.allow(always=True))
        assert of(always, ApprovalNeeded)
        remembered = await run(conversation, "remove c")
        assert not of(remembered, ApprovalNeeded)
        assert of(remembered, ToolCallDecided)[0].reason == "always allowed in this conversation"
        refused = await run(conversation, "store", lambda event: event.refuse("not with my notes"))
    assert [r.summary for r in of(once + always + remembered, ToolResult)] == ["deleted a", "deleted b", "deleted c"]
    [result] = of(refused, ToolResult)
    assert result.is_error and result.summary == "The user refused this call: not with my notes"
    sent = tool_messages(model.requests[-1])[-1]
    assert sent["is_error"] is True and sent["content"][0]["text"] == "The user refused this call: not with my notes"


async def test_a_changed_definition_is_asked_about_again_with_the_change(model: ModelServer) -> None:
    model.script(
        Reply(tool_calls=[ToolCall("mutable", {"text": "x"})]),
        Reply(text="stored"),
        Reply(tool_calls=[ToolCall("mutate", {})]),
        Reply(tool_calls=[ToolCall("mutable", {"text": "y"})]),
        Reply(text="stored again"),
    )
    policy = ApprovalPolicy(trusted={"h"})
    async with Host([f"h={HOSTED}"], provider=provider("openai", model), policy=policy) as host:
        conversation = host.conversation()
        await run(conversation, "store x", lambda event: event.allow(always=True))
        events = await run(conversation, "change it and store y", lambda event: event.refuse())
    changed = of(events, ToolsChanged)
    assert changed and "changed its tools" in changed[0].reason
    [question] = of(events, ApprovalNeeded)
    assert question.reason == "its definition changed since it was approved"
    [change] = question.changes
    assert change.field == "description" and "stranger" in (change.after or "")
    assert of(events, ToolResult)[-1].is_error


async def test_an_unanswered_question_is_a_refusal(model: ModelServer) -> None:
    model.script(Reply(tool_calls=[ToolCall("remove", {"path": "a"})]), Reply(text="ok"))
    async with Host([f"h={HOSTED}"], provider=provider("openai", model)) as host:
        events = await run(host.conversation(), "remove a")
    assert of(events, ToolResult)[0].summary == "The call was refused: nobody answered the question"


# -- failures become results -----------------------------------------------------------------


async def test_tool_errors_unknown_tools_and_bad_arguments_reach_the_model(model: ModelServer) -> None:
    model.script(
        Reply(
            tool_calls=[
                ToolCall("fail", {"reason": "disk on fire"}, id="c1"),
                ToolCall("nonexistent", {}, id="c2"),
                ToolCall("slow", "{not json", id="c3"),
                ToolCall("slow", {"seconds": "soon"}, id="c4"),
            ]
        ),
        Reply(text="sorry"),
    )
    async with Host([f"h={HOSTED}"], provider=provider("openai", model), policy=ApprovalPolicy(trusted={"h"})) as host:
        events = await run(host.conversation(), "try")
    results = sorted(of(events, ToolResult), key=lambda result: result.call_id)  # in the order they finished
    assert all(result.is_error for result in results)
    assert results[0].summary == "it failed: disk on fire"
    assert results[1].summary.startswith("There is no tool named 'nonexistent'. The tools are: slow, crash")
    assert results[2].summary.startswith("The call was not made: the arguments were not valid JSON")
    assert "seconds" in results[3].summary
    sent = tool_messages(model.requests[-1])
    assert sent[0]["content"] == "The tool reported an error:\nit failed: disk on fire"
    assert isinstance(events[-1], Done) and events[-1].reason == "answered"


async def test_a_server_that_crashes_mid_call_is_a_tool_error_and_its_tools_go(model: ModelServer) -> None:
    model.script(Reply(tool_calls=[ToolCall("crash", {})]), Reply(text="it crashed"))
    servers = [f"h={HOSTED}", f"seed={SEED}"]
    async with Host(servers, provider=provider("openai", model), policy=ApprovalPolicy(trusted={"h"})) as host:
        conversation = host.conversation()
        events = await run(conversation, "crash it")
        [result] = of(events, ToolResult)
        assert result.is_error and result.summary.startswith("The server 'h' stopped during the call")
        assert host.servers["h"].error is not None
        model.script(Reply(text="still here"))
        later = await run(conversation, "hello")
    [changed] = of(events, ToolsChanged)[1:]  # seen before the model's next request, in the same turn
    assert not of(later, ToolsChanged)
    assert "the server 'h' stopped" in changed.reason
    assert all(tool.server == "seed" for tool in changed.tools)
    names = [tool["function"]["name"] for tool in model.requests[-1]["tools"]]
    assert "crash" not in names and "calculator" in names


async def test_a_call_that_takes_too_long_times_out(model: ModelServer) -> None:
    model.script(Reply(tool_calls=[ToolCall("slow", {"seconds": 30})]), Reply(text="too slow"))
    host = Host(
        [f"h={HOSTED}"], provider=provider("openai", model), policy=ApprovalPolicy(trusted={"h"}), call_timeout=0.5
    )
    async with host:
        events = await run(host.conversation(), "wait")
    assert of(events, ToolResult)[0].summary.startswith("The call timed out")


async def test_a_failing_model_api_ends_the_turn_and_the_conversation_goes_on(model: ModelServer) -> None:
    model.script(Reply(status=500, error="the model is overloaded"), Reply(text="back"))
    async with Host([f"seed={SEED}"], provider=provider("openai", model)) as host:
        conversation = host.conversation()
        events = await run(conversation, "hello")
        [failed] = of(events, Failed)
        assert failed.message == "the model API answered HTTP 500: the model is overloaded"
        assert events[-1].reason == "error"
        again = await run(conversation, "hello again")
    assert again[-1].reason == "answered" and conversation.text == "back"


async def test_the_step_limit_stops_a_model_that_never_answers(model: ModelServer) -> None:
    model.script(*[Reply(tool_calls=[ToolCall("calculator", {"operation": "add", "a": 1, "b": 1})]) for _ in range(3)])
    async with Host([f"seed={SEED}"], provider=provider("openai", model), policy=ApprovalPolicy(allow=["*"])) as host:
        conversation = host.conversation(max_steps=3)
        events = await run(conversation, "loop")
    assert (events[-1].reason, events[-1].steps) == ("step_limit", 3)


# -- cancellation ----------------------------------------------------------------------------


async def test_cancelling_stops_the_calls_in_flight_and_keeps_the_conversation_valid(
    model: ModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOST_TEST_MARKS", str(tmp_path))
    model.script(Reply(tool_calls=[ToolCall("slow", {"seconds": 30})]), Reply(text="fine"))
    async with Host([f"h={HOSTED}"], provider=provider("openai", model), policy=ApprovalPolicy(trusted={"h"})) as host:
        conversation = host.conversation()
        events = []
        async for event in conversation.send("wait"):
            events.append(event)
            if isinstance(event, ToolProgress):
                conversation.cancel()
        assert events[-1].reason == "cancelled"
        marked = tmp_path / "cancelled"
        for _ in range(50):
            if marked.exists() and marked.read_text():  # written, not only created
                break
            await asyncio.sleep(0.05)
        assert marked.read_text() == "slow"
        assert (
            conversation.messages[-1]["content"][0]["text"] == "The call did not finish: the user cancelled the call."
        )
        await run(conversation, "and now?")
    assert tool_messages(model.requests[-1])[0]["tool_call_id"] == conversation.messages[1]["tool_calls"][0]["id"]


async def test_cancelling_stops_the_model_request(model: ModelServer) -> None:
    model.script(Reply(text="a long story", hang=True))
    async with Host([f"seed={SEED}"], provider=provider("anthropic", model)) as host:
        conversation = host.conversation()
        task = asyncio.create_task(run(conversation, "tell me"))
        for _ in range(200):  # until the request is at the model (the SDK's first import is slow)
            if model.requests:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await model.wait_for_disconnect()


# -- media, sampling, elicitation, list changes ----------------------------------------------


async def test_an_image_result_reaches_a_model_that_reads_images(model: ModelServer) -> None:
    model.script(Reply(tool_calls=[ToolCall("picture", {})]), Reply(text="a pixel"))
    async with Host(
        [f"h={HOSTED}"], provider=provider("anthropic", model), policy=ApprovalPolicy(trusted={"h"})
    ) as host:
        await run(host.conversation(), "show me")
    [result] = tool_messages(model.requests[-1])
    [block] = result["content"]
    assert block["type"] == "image" and block["source"]["media_type"] == "image/png"


async def test_an_image_is_a_note_for_a_model_that_does_not_read_them_and_follows_for_one_that_does(
    model: ModelServer,
) -> None:
    model.script(Reply(tool_calls=[ToolCall("picture", {})]), Reply(text="?"))
    model.script(Reply(tool_calls=[ToolCall("picture", {})]), Reply(text="a pixel"))
    for media in (set(), {"image"}):
        chosen = provider("openai", model, media=media)
        async with Host([f"h={HOSTED}"], provider=chosen, policy=ApprovalPolicy(trusted={"h"})) as host:
            await run(host.conversation(), "show me")
    blind, seeing = model.requests[1], model.requests[3]
    assert "this model cannot read it" in tool_messages(blind)[0]["content"]
    assert seeing["messages"][-1]["role"] == "user"
    assert seeing["messages"][-1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
async def test_a_server_may_use_the_model_once_the_person_allows(model: ModelServer, protocol: str) -> None:
    model.script(Reply(tool_calls=[ToolCall("consult", {"question": "capital of France?"})]), Reply(text="Paris"))
    model.script(Reply(text="Paris it is", input_tokens=3, output_tokens=2))
    options = {"client_options": {"protocol": protocol}}
    async with Host(
        [f"h={HOSTED}"], provider=provider("openai", model), policy=ApprovalPolicy(trusted={"h"}), **options
    ) as host:
        events = await run(host.conversation(), "ask", lambda event: event.allow())
    [question] = of(events, SamplingNeeded)
    assert question.server == "h" and question.request["systemPrompt"] == "Answer briefly."
    assert of(events, ToolResult)[0].summary == "the model said: Paris"
    sampled = model.requests[1]
    assert sampled["messages"] == [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "capital of France?"},
    ]
    assert "tools" not in sampled and sampled["max_tokens"] == 50


async def test_a_refused_sampling_request_fails_the_call(model: ModelServer) -> None:
    model.script(Reply(tool_calls=[ToolCall("consult", {"question": "?"})]), Reply(text="ok"))
    async with Host([f"h={HOSTED}"], provider=provider("openai", model), policy=ApprovalPolicy(trusted={"h"})) as host:
        events = await run(host.conversation(), "ask", lambda event: event.refuse())
    assert of(events, ToolResult)[0].is_error and len(model.requests) == 2


async def test_a_model_failure_while_sampling_is_the_servers_error(model: ModelServer) -> None:
    model.script(
        Reply(tool_calls=[ToolCall("consult", {"question": "?"})]), Reply(status=500, error="down"), Reply(text="ok")
    )
    async with Host([f"h={HOSTED}"], provider=provider("openai", model), policy=ApprovalPolicy(trusted={"h"})) as host:
        events = await run(host.conversation(), "ask", lambda event: event.allow())
    [result] = of(events, ToolResult)
    assert result.is_error and "the host's model failed: the model API answered HTTP 500: down" in result.summary
    assert events[-1].reason == "answered"


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
async def test_a_form_is_asked_of_the_person(model: ModelServer, protocol: str) -> None:
    model.script(Reply(tool_calls=[ToolCall("register", {})]), Reply(text="welcome"))

    def answer(event: Any) -> None:
        assert isinstance(event, ElicitationNeeded) and event.message == "Who are you?"
        with pytest.raises(ValueError, match="does not fit the form"):
            event.accept({"age": -1})
        event.accept({"name": "Ada", "age": 36})

    options = {"client_options": {"protocol": protocol}}
    async with Host(
        [f"h={HOSTED}"], provider=provider("openai", model), policy=ApprovalPolicy(trusted={"h"}), **options
    ) as host:
        events = await run(host.conversation(), "register me", answer)
    assert of(events, ToolResult)[0].summary == "accept: {'name': 'Ada', 'age': 36}"


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
async def test_roots_are_the_working_directory_unless_given(model: ModelServer, protocol: str) -> None:
    policy = ApprovalPolicy(trusted={"h"})
    options: dict[str, Any] = {"client_options": {"protocol": protocol}}
    for roots, expected in ((None, Path.cwd().as_uri()), ([{"uri": "file:///srv/data"}], "file:///srv/data")):
        model.script(Reply(tool_calls=[ToolCall("roots", {})]), Reply(text="ok"))
        async with Host(
            [f"h={HOSTED}"], provider=provider("openai", model), policy=policy, roots=roots, **options
        ) as host:
            events = await run(host.conversation(), "where?")
        assert of(events, ToolResult)[0].summary == expected


async def test_a_new_tool_is_shown_to_the_model_at_its_next_request(model: ModelServer) -> None:
    model.script(Reply(tool_calls=[ToolCall("grow", {})]), Reply(tool_calls=[ToolCall("fresh", {})]), Reply(text="ok"))
    async with Host([f"h={HOSTED}"], provider=provider("openai", model), policy=ApprovalPolicy(trusted={"h"})) as host:
        events = await run(host.conversation(), "grow")
    assert [result.summary for result in of(events, ToolResult)] == ["grown", "fresh"]
    assert [event.reason for event in of(events, ToolsChanged)] == ["start", "the server 'h' changed its tools"]


async def test_resource_links_can_be_read_with_the_hosts_tool(model: ModelServer) -> None:
    server = Server("library")

    @server.resource("library://readme", mime_type="text/plain")
    def readme() -> str:
        return "Read me first."

    @server.tool(read_only=True)
    def recommend() -> Content:
        """Recommend a document."""
        return server.link_resource("library://readme")

    model.script(
        Reply(tool_calls=[ToolCall("recommend", {})]),
        Reply(tool_calls=[ToolCall("read_resource", {"uri": "library://readme"})]),
        Reply(text="It says: read me first."),
    )
    async with Host([server], provider=provider("openai", model), policy=ApprovalPolicy(trusted={"library"})) as host:
        events = await run(host.conversation(), "what should I read?")
    first, second = of(events, ToolResult)
    assert "library://readme" in first.summary and "read_resource" in first.summary
    assert second.summary == "Resource library://readme (text/plain): Read me first."


# -- saving ----------------------------------------------------------------------------------


async def test_a_conversation_saves_and_loads(model: ModelServer, tmp_path: Path) -> None:
    model.script(Reply(tool_calls=[ToolCall("remove", {"path": "a"})]), Reply(text="removed"), Reply(text="yes"))
    async with Host([f"h={HOSTED}"], provider=provider("openai", model)) as host:
        conversation = host.conversation(system="be brief")
        await run(conversation, "remove a", lambda event: event.allow(always=True))
        conversation.save(tmp_path / "chat.json")
        loaded = Conversation.load(host, tmp_path / "chat.json")
        assert (loaded.messages, loaded.system, loaded.usage) == (conversation.messages, "be brief", conversation.usage)
        assert loaded.approvals.remembered("h", "remove")
        await run(loaded, "did you?")
    assert (
        len(model.requests[-1]["messages"]) == len(conversation.messages) + 2
    )  # the system prompt and the new question
    (tmp_path / "other.json").write_text("{}")
    with pytest.raises(ValueError, match="not a saved toolwire conversation"):
        Conversation.load(host, tmp_path / "other.json")


def test_the_host_never_imports_a_providers_sdk_until_it_is_used() -> None:
    import subprocess

    code = "import sys, toolwire.host, toolwire.host.providers.openai; print('openai' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ}, check=True)
    assert done.stdout.strip() == "False"
