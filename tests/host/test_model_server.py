"""The scripted model server speaks what the real SDKs expect: plain and streamed answers, tool
calls, usage and errors, through the ``openai`` and ``anthropic`` packages themselves."""

from __future__ import annotations

import anthropic
import openai
import pytest

from tests.support.model_server import EMBEDDING_DIMENSIONS, ModelServer, Reply, ToolCall, embedding


@pytest.fixture
def model() -> ModelServer:
    with ModelServer() as server:
        yield server


def openai_client(model: ModelServer) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key="test", base_url=model.openai_url, max_retries=0)


def anthropic_client(model: ModelServer) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key="test", base_url=model.anthropic_url, max_retries=0)


CALL = ToolCall("calculator", {"operation": "add", "a": 4, "b": 4}, id="call_1")


async def test_openai_plain_answer_with_tool_calls(model: ModelServer) -> None:
    model.script(Reply(text="thinking", tool_calls=[CALL], input_tokens=7, output_tokens=3))
    async with openai_client(model) as client:
        answer = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "4+4?"}])
    [choice] = answer.choices
    assert choice.message.content == "thinking" and choice.finish_reason == "tool_calls"
    [call] = choice.message.tool_calls or []
    assert (call.id, call.function.name, call.function.arguments) == ("call_1", "calculator", CALL.arguments_json())
    assert answer.usage is not None and (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (7, 3)
    assert model.paths == ["/v1/chat/completions"] and model.requests[0]["model"] == "m"


async def test_openai_stream_in_pieces(model: ModelServer) -> None:
    model.script(Reply(text="4 加 4 等于 8。", tool_calls=[CALL, ToolCall("echo", "{not json")], chunk=2))
    async with openai_client(model) as client:
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "?"}], stream=True, stream_options={"include_usage": True}
        )
        chunks = [chunk async for chunk in stream]
    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert text == "4 加 4 等于 8。"
    arguments: dict[int, str] = {}
    for chunk in chunks:
        for delta in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            arguments[delta.index] = arguments.get(delta.index, "") + (delta.function.arguments or "")  # type: ignore[union-attr]
    assert arguments == {0: CALL.arguments_json(), 1: "{not json"}
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == 15


async def test_anthropic_plain_and_streamed(model: ModelServer) -> None:
    model.script(Reply(tool_calls=[CALL]), Reply(text="eight", tool_calls=[CALL], output_tokens=4, chunk=1))
    async with anthropic_client(model) as client:
        plain = await client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "?"}])
        async with client.messages.stream(
            model="m", max_tokens=10, messages=[{"role": "user", "content": "?"}]
        ) as stream:
            pieces = [text async for text in stream.text_stream]
            streamed = await stream.get_final_message()
    [block] = plain.content
    assert block.type == "tool_use" and block.input == CALL.arguments and plain.stop_reason == "tool_use"
    assert pieces == list("eight")
    assert [block.type for block in streamed.content] == ["text", "tool_use"]
    assert streamed.content[1].input == CALL.arguments  # type: ignore[union-attr]
    assert streamed.usage.output_tokens == 4 and model.paths == ["/v1/messages", "/v1/messages"]


async def test_errors_and_an_empty_script(model: ModelServer) -> None:
    model.script(Reply(status=529, error="overloaded"))
    async with anthropic_client(model) as client:
        with pytest.raises(anthropic.APIStatusError, match="overloaded") as raised:
            await client.messages.create(model="m", max_tokens=10, messages=[{"role": "user", "content": "?"}])
    assert raised.value.status_code == 529
    async with openai_client(model) as client:
        with pytest.raises(openai.InternalServerError, match="no reply scripted for request 2"):
            await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "?"}])


async def test_a_hanging_reply_notices_the_client_leave(model: ModelServer) -> None:
    model.script(Reply(text="a long story", hang=True))
    async with openai_client(model) as client:
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "?"}], stream=True
        )
        first = await stream.__anext__()
        assert first.choices[0].delta.role == "assistant"
        await stream.close()
    await model.wait_for_disconnect()
    assert model.disconnects == 1


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_embeddings_through_the_openai_package(model: ModelServer) -> None:
    async with openai_client(model) as client:
        answer = await client.embeddings.create(model="e", input=["高血压的诊断标准", "高血压诊断", "sleep apnea"])
    first, second, third = (item.embedding for item in answer.data)
    assert len(first) == EMBEDDING_DIMENSIONS and first == pytest.approx(embedding("高血压的诊断标准"), abs=1e-6)
    assert cosine(first, second) > 0.5 > cosine(first, third)
    assert model.embedding_requests[0]["input"][2] == "sleep apnea" and model.requests == []


async def test_embeddings_fail_when_told_to(model: ModelServer) -> None:
    model.embeddings_status = 503
    async with openai_client(model) as client:
        with pytest.raises(openai.InternalServerError):
            await client.embeddings.create(model="e", input="x")
