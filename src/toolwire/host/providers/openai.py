"""OpenAI-compatible Chat Completions, through the official ``openai`` package.

Works with OpenAI, DeepSeek (``base_url="https://api.deepseek.com"``) and any server that
speaks the same API (vLLM, Ollama, LM Studio: their ``.../v1`` URL). Answers are streamed
(``stream=True``, usage included); tool calls are rebuilt from their deltas.

Tool results become ``role: "tool"`` messages of text. Chat Completions takes no images in a
tool message, so for a model that reads images (``media={"image"}``; the default for OpenAI's
own API, not for other servers) the images of a round's results follow its tool messages in
one ``user`` message; for other models each becomes a one-line note. Audio is sent only to a
model declared to read it (``media={"audio", ...}``; WAV and MP3).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from ..model import Message, ModelError, ModelRequest, ModelTurn, Part, ToolCallRequest, ToolSpec, Usage
from .common import api_message, media_note

AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}


class OpenAIProvider:
    """A model behind the Chat Completions API. ``api_key`` and ``base_url`` as the ``openai``
    package takes them (``None``: its defaults, ``OPENAI_API_KEY`` and OpenAI's URL);
    ``media``: what the model reads besides text (default: images for OpenAI's own API,
    nothing for other servers); ``stream``: ask for the answer piece by piece; ``options``:
    more fields for every request (``temperature``...). The ``openai`` package is imported
    on first use (or by :meth:`prepare`)."""

    name = "openai"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        media: frozenset[str] | set[str] | None = None,
        stream: bool = True,
        max_retries: int = 2,
        timeout: float = 600.0,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.api_key = api_key
        self.base_url = base_url
        self.media = frozenset(media if media is not None else ({"image"} if base_url is None else ()))
        self.stream = stream
        self.max_retries = max_retries
        self.timeout = timeout
        self.options = options or {}
        self._client: Any = None

    def prepare(self) -> None:
        """Import the SDK and make its client (safe to call from a thread, ahead of use)."""
        if self._client is None:
            from ...extras import needs

            with needs("openai", "OpenAIProvider"):
                import openai

            self._client = openai.AsyncOpenAI(
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
        import openai

        body: dict[str, Any] = {"model": self.model, "messages": self.messages(request), **self.options}
        if request.tools:
            body["tools"] = [_tool(spec) for spec in request.tools]
            body["tool_choice"] = "auto"
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        try:
            if not self.stream:
                return _turn(await self._client.chat.completions.create(**body))
            stream = await self._client.chat.completions.create(
                **body, stream=True, stream_options={"include_usage": True}
            )
            return await _streamed(stream, on_text)
        except openai.APIStatusError as exc:
            raise ModelError(f"the model API answered HTTP {exc.status_code}: {api_message(exc)}") from None
        except openai.APIConnectionError as exc:
            where = self.base_url or "the OpenAI API"
            raise ModelError(f"cannot reach {where}: {exc.__cause__ or exc}") from None
        except openai.OpenAIError as exc:
            raise ModelError(f"the model API failed: {exc}") from None

    def messages(self, request: ModelRequest) -> list[dict[str, Any]]:
        """The conversation as Chat Completions messages."""
        out: list[dict[str, Any]] = []
        if request.system:
            out.append({"role": "system", "content": request.system})
        held: list[dict[str, Any]] = []  # media of tool results, sent after the round's tool messages
        for message in request.messages:
            role = message["role"]
            if role != "tool" and held:
                out.append(
                    {"role": "user", "content": [{"type": "text", "text": "Media from the tool results above:"}, *held]}
                )
                held = []
            if role == "user":
                out.append({"role": "user", "content": self._content(message["content"])})
            elif role == "assistant":
                out.append(_assistant(message))
            elif role == "tool":
                out.append(
                    {"role": "tool", "tool_call_id": message["call_id"], "content": self._tool_text(message, held)}
                )
        if held:
            out.append(
                {"role": "user", "content": [{"type": "text", "text": "Media from the tool results above:"}, *held]}
            )
        return out

    def _content(self, parts: list[Part]) -> str | list[dict[str, Any]]:
        if all(part["type"] == "text" for part in parts):
            return "\n".join(part["text"] for part in parts)
        content: list[dict[str, Any]] = []
        for part in parts:
            media = self._media(part)
            content.append(media if media is not None else {"type": "text", "text": _text_of(part)})
        return content

    def _media(self, part: Part) -> dict[str, Any] | None:
        """The Chat Completions part for an image or audio part this model reads, or ``None``."""
        kind = part["type"]
        if kind == "image" and "image" in self.media:
            return {"type": "image_url", "image_url": {"url": f"data:{part['mime_type']};base64,{part['data']}"}}
        if kind == "audio" and "audio" in self.media and part["mime_type"] in AUDIO_FORMATS:
            return {
                "type": "input_audio",
                "input_audio": {"data": part["data"], "format": AUDIO_FORMATS[part["mime_type"]]},
            }
        return None

    def _tool_text(self, message: Message, held: list[dict[str, Any]]) -> str:
        lines = ["The tool reported an error:"] if message.get("is_error") else []
        for part in message["content"]:
            media = self._media(part) if part["type"] != "text" else None
            if media is not None:
                held.append(media)
                lines.append(f"[{part['type']} ({part['mime_type']}): sent in the next message]")
            else:
                lines.append(_text_of(part))
        return "\n".join(lines)


def _text_of(part: Part) -> str:
    return part["text"] if part["type"] == "text" else media_note(part)


def _assistant(message: Message) -> dict[str, Any]:
    text = "\n".join(part["text"] for part in message.get("content", []) if part["type"] == "text")
    out: dict[str, Any] = {"role": "assistant", "content": text or None}
    calls = message.get("tool_calls") or []
    if calls:
        out["tool_calls"] = [
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": orjson.dumps(call["arguments"]).decode()},
            }
            for call in calls
        ]
    return out


def _tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": spec.name, "description": spec.description, "parameters": spec.parameters},
    }


def _call(id: str, name: str, arguments: str) -> ToolCallRequest:
    """A tool call from its JSON arguments (an invalid object is kept, with its error)."""
    try:
        parsed = orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError as exc:
        return ToolCallRequest(id, name, None, f"the arguments were not valid JSON ({exc}): {arguments[:200]!r}")
    if not isinstance(parsed, dict):
        return ToolCallRequest(id, name, None, f"the arguments must be a JSON object, not {arguments[:200]!r}")
    return ToolCallRequest(id, name, parsed)


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    return Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0)


def _turn(completion: Any) -> ModelTurn:
    if not completion.choices:
        raise ModelError("the model API answered with no choices")
    choice = completion.choices[0]
    calls = [_call(call.id, call.function.name, call.function.arguments) for call in choice.message.tool_calls or []]
    return ModelTurn(choice.message.content or "", calls, _usage(completion.usage), choice.finish_reason)


async def _streamed(stream: Any, on_text: Callable[[str], Any] | None) -> ModelTurn:
    """Read a streamed answer: text to ``on_text`` as it comes, tool calls rebuilt by index."""
    text: list[str] = []
    calls: dict[int, list[str]] = {}  # index -> [id, name, arguments]
    turn = ModelTurn()
    async with stream:
        async for chunk in stream:
            if chunk.usage is not None:
                turn.usage = _usage(chunk.usage)
            for choice in chunk.choices:
                delta = choice.delta
                if delta.content:
                    text.append(delta.content)
                    if on_text is not None:
                        on_text(delta.content)
                for call in delta.tool_calls or []:
                    entry = calls.setdefault(call.index, ["", "", ""])
                    if call.id:
                        entry[0] = call.id
                    if call.function is not None:
                        entry[1] += call.function.name or ""
                        entry[2] += call.function.arguments or ""
                if choice.finish_reason:
                    turn.stop_reason = choice.finish_reason
    turn.text = "".join(text)
    turn.tool_calls = [
        _call(id or f"call_{index}", name, arguments) for index, (id, name, arguments) in sorted(calls.items())
    ]
    return turn
