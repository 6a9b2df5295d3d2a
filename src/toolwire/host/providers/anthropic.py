"""Anthropic Messages, through the official ``anthropic`` package.

Answers are streamed (``stream=True``); ``tool_use`` blocks are rebuilt from their
``input_json_delta`` pieces. Tool results go back as ``tool_result`` blocks of a ``user``
message, with ``is_error`` set for failed calls and images (JPEG, PNG, GIF, WebP) inside the
result; audio and other media become a one-line note. Messages of the same role in a row are
merged, as the API wants them to alternate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ..model import Message, ModelError, ModelRequest, ModelTurn, Part, ToolCallRequest, ToolSpec, Usage
from .common import api_message, media_note

IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
#: ``max_tokens`` is required by the API; used when the request names none.
DEFAULT_MAX_TOKENS = 4096


class AnthropicProvider:
    """A model behind the Messages API. ``api_key`` and ``base_url`` as the ``anthropic``
    package takes them (``None``: ``ANTHROPIC_API_KEY`` and Anthropic's URL); ``stream``: ask
    for the answer piece by piece; ``options``: more fields for every request. The package is
    imported on first use (or by :meth:`prepare`)."""

    name = "anthropic"
    media = frozenset({"image"})

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        stream: bool = True,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        max_retries: int = 2,
        timeout: float = 600.0,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.api_key = api_key
        self.base_url = base_url
        self.stream = stream
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        self.timeout = timeout
        self.options = options or {}
        self._client: Any = None

    def prepare(self) -> None:
        """Import the SDK and make its client (safe to call from a thread, ahead of use)."""
        if self._client is None:
            from ...extras import needs

            with needs("anthropic", "AnthropicProvider"):
                import anthropic

            self._client = anthropic.AsyncAnthropic(
                api_key=self.api_key, base_url=self.base_url, max_retries=self.max_retries, timeout=self.timeout
            )

    async def close(self) -> None:
        """Close the SDK's HTTP connections; the next answer opens new ones."""
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    async def complete(self, request: ModelRequest, on_text: Callable[[str], Any] | None = None) -> ModelTurn:
        """One answer; :class:`ModelError` for any failure of the API."""
        self.prepare()  # first: it says which extra to install if the SDK is missing
        import anthropic

        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens or self.max_tokens,
            "messages": self.messages(request),
            **self.options,
        }
        if request.system:
            body["system"] = request.system
        if request.tools:
            body["tools"] = [_tool(spec) for spec in request.tools]
            body["tool_choice"] = {"type": "auto"}
        try:
            if not self.stream:
                return _turn(await self._client.messages.create(**body))
            return await _streamed(await self._client.messages.create(**body, stream=True), on_text)
        except anthropic.APIStatusError as exc:
            raise ModelError(f"the model API answered HTTP {exc.status_code}: {api_message(exc)}") from None
        except anthropic.APIConnectionError as exc:
            where = self.base_url or "the Anthropic API"
            raise ModelError(f"cannot reach {where}: {exc.__cause__ or exc}") from None
        except anthropic.AnthropicError as exc:
            raise ModelError(f"the model API failed: {exc}") from None

    def messages(self, request: ModelRequest) -> list[dict[str, Any]]:
        """The conversation as Messages API messages (same roles in a row merged)."""
        out: list[dict[str, Any]] = []
        for message in request.messages:
            role = message["role"]
            if role == "assistant":
                blocks = _assistant(message)
            elif role == "tool":
                role, blocks = "user", [_tool_result(message)]
            else:
                blocks = [_block(part) for part in message["content"]]
            if not blocks:
                continue
            if out and out[-1]["role"] == role:
                out[-1]["content"].extend(blocks)
            else:
                out.append({"role": role, "content": blocks})
        return out


def _block(part: Part) -> dict[str, Any]:
    if part["type"] == "text":
        return {"type": "text", "text": part["text"] or " "}
    if part["type"] == "image" and part.get("mime_type") in IMAGE_TYPES:
        return {"type": "image", "source": {"type": "base64", "media_type": part["mime_type"], "data": part["data"]}}
    return {"type": "text", "text": media_note(part)}


def _assistant(message: Message) -> list[dict[str, Any]]:
    blocks = [{"type": "text", "text": part["text"]} for part in message.get("content", []) if part.get("text")]
    for call in message.get("tool_calls") or []:
        blocks.append({"type": "tool_use", "id": call["id"], "name": call["name"], "input": call["arguments"]})
    return blocks


def _tool_result(message: Message) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": message["call_id"],
        "content": [_block(part) for part in message["content"]] or [{"type": "text", "text": "(no output)"}],
    }
    if message.get("is_error"):
        block["is_error"] = True
    return block


def _tool(spec: ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description, "input_schema": spec.parameters}


def _call(id: str, name: str, arguments: Any) -> ToolCallRequest:
    if isinstance(arguments, str):
        try:
            arguments = orjson.loads(arguments or "{}")
        except orjson.JSONDecodeError as exc:
            return ToolCallRequest(id, name, None, f"the arguments were not valid JSON ({exc}): {arguments[:200]!r}")
    if not isinstance(arguments, dict):
        return ToolCallRequest(id, name, None, f"the arguments must be a JSON object, not {arguments!r:.200}")
    return ToolCallRequest(id, name, arguments)


def _turn(message: Any) -> ModelTurn:
    text = "".join(block.text for block in message.content if block.type == "text")
    calls = [_call(block.id, block.name, block.input) for block in message.content if block.type == "tool_use"]
    usage = Usage(message.usage.input_tokens or 0, message.usage.output_tokens or 0)
    return ModelTurn(text, calls, usage, message.stop_reason)


async def _streamed(stream: Any, on_text: Callable[[str], Any] | None) -> ModelTurn:
    """Read a streamed answer: text to ``on_text`` as it comes, tool inputs rebuilt per block."""
    text: list[str] = []
    blocks: dict[int, list[str]] = {}  # index -> [id, name, input JSON]
    turn = ModelTurn()
    async with stream:
        async for event in stream:
            kind = event.type
            if kind == "message_start":
                usage = event.message.usage
                turn.usage = Usage(usage.input_tokens or 0, usage.output_tokens or 0)
            elif kind == "content_block_start" and event.content_block.type == "tool_use":
                blocks[event.index] = [event.content_block.id, event.content_block.name, ""]
            elif kind == "content_block_delta":
                delta = event.delta
                if delta.type == "text_delta":
                    text.append(delta.text)
                    if on_text is not None:
                        on_text(delta.text)
                elif delta.type == "input_json_delta" and event.index in blocks:
                    blocks[event.index][2] += delta.partial_json
            elif kind == "message_delta":
                turn.stop_reason = event.delta.stop_reason
                if event.usage is not None and event.usage.output_tokens is not None:
                    turn.usage.output_tokens = event.usage.output_tokens
    turn.text = "".join(text)
    turn.tool_calls = [_call(id, name, arguments) for _, (id, name, arguments) in sorted(blocks.items())]
    return turn
