"""A local model server for the tests: the real HTTP wire of the OpenAI Chat Completions API and
of the Anthropic Messages API, answering from a script.

There is no network and no language model here, so the host's tests point the real ``openai``
and ``anthropic`` packages at this server by base URL. Each request takes the next scripted
:class:`Reply`, answered plainly or as the API's server-sent events when the request asks for a
stream. It runs uvicorn in a thread of its own on 127.0.0.1, so it serves tests that drive the
host in their event loop and tests that run ``toolwire`` as a process alike.

* ``ModelServer(*replies)`` (a context manager; :meth:`script` adds more replies), with
  :attr:`openai_url` (``…/v1``) and :attr:`anthropic_url` for the SDKs' ``base_url``.
* :attr:`requests` holds every request body, :attr:`paths` the paths, :attr:`disconnects` counts
  clients that went away before a reply ended (see :meth:`wait_for_disconnect`).
* A request with nothing left in the script gets HTTP 500 "no reply scripted for request N".
* ``/v1/embeddings`` answers without the script, with :func:`embedding` vectors (floats, or
  base64 when asked, as the ``openai`` package asks); its request bodies go to
  :attr:`embedding_requests`, and :attr:`embeddings_status` other than 200 makes it fail.
  Hostile answers: :attr:`embeddings_sizes` gives the vectors of the next answers other sizes,
  :attr:`embeddings_padding` pads each answer with that many bytes of white space (streamed
  in 1 MiB pieces), :attr:`embeddings_trickle` sends each answer a byte at a time, that many
  seconds apart; both stop when the client goes away (counted in :attr:`disconnects`), and
  :attr:`embeddings_sent` says how many bytes of the last answer were sent.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import itertools
import math
import re
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
import uvicorn

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass
class ToolCall:
    """A tool call the model asks for; ``arguments`` as a string is sent as it is (bad JSON too)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_json(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else orjson.dumps(self.arguments).decode()


@dataclass
class Reply:
    """One scripted answer: text and tool calls, or an error status; ``hang`` sends the first piece
    of a stream (or nothing, unstreamed) and then waits until the client goes away."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    input_tokens: int = 10
    output_tokens: int = 5
    status: int = 200
    error: str = "scripted error"
    hang: bool = False
    #: Characters per streamed piece of text or arguments.
    chunk: int = 3


#: The size of :func:`embedding` vectors.
EMBEDDING_DIMENSIONS = 256


def embedding(text: str, dimensions: int = EMBEDDING_DIMENSIONS) -> list[float]:
    """A deterministic unit vector for ``text``: its words (runs of letters or digits, lower-cased)
    and character bigrams hashed into ``dimensions`` counts, so that texts sharing words or
    Chinese characters get similar vectors."""
    counts = [0.0] * dimensions
    text = text.lower()
    features = re.findall(r"[a-z0-9]+", text) + [text[i : i + 2] for i in range(len(text) - 1)]
    for feature in features:
        if feature.strip():
            digest = hashlib.blake2b(feature.encode(), digest_size=4).digest()
            counts[int.from_bytes(digest, "big") % dimensions] += 1.0
    norm = math.sqrt(sum(count * count for count in counts)) or 1.0
    return [count / norm for count in counts]


def _pieces(text: str, size: int) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)]


class ModelServer:
    """The scripted server; see the module docstring."""

    def __init__(self, *replies: Reply) -> None:
        self._script: deque[Reply] = deque(replies)
        self._lock = threading.Lock()
        self._disconnected = threading.Condition(self._lock)
        self._ids = itertools.count(1)
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.disconnects = 0
        self.embedding_requests: list[dict[str, Any]] = []
        self.embeddings_status = 200
        self.embeddings_sizes: list[int] = []
        self.embeddings_padding = 0
        self.embeddings_trickle = 0.0
        self.embeddings_sent = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # -- the test's side -----------------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def anthropic_url(self) -> str:
        return self.url

    def start(self) -> ModelServer:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        self.port = listener.getsockname()[1]
        config = uvicorn.Config(
            self._app, log_level="warning", lifespan="off", loop="asyncio", http="h11", interface="asgi3"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [listener]}, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the model server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(10)
            self._server = self._thread = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    async def wait_for_disconnect(self, timeout: float = 5.0) -> None:
        """Return once a client has gone away before its reply ended; AssertionError on timeout."""

        def wait() -> bool:
            with self._disconnected:
                return self._disconnected.wait_for(lambda: self.disconnects > 0, timeout)

        assert await asyncio.to_thread(wait), "no client went away"

    # -- the server's side ---------------------------------------------------------------------

    async def _app(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        path = scope["path"]
        request = orjson.loads(body) if body else {}
        if path == "/v1/embeddings":
            await self._embeddings(receive, send, request)
            return
        with self._lock:
            self.requests.append(request)
            self.paths.append(path)
            number = len(self.requests)
            reply = self._script.popleft() if self._script else None
        api = "anthropic" if path.endswith("/messages") else "openai"
        if path not in ("/v1/chat/completions", "/v1/messages"):
            await self._error(send, api, 404, f"no such endpoint: {path}")
        elif reply is None:
            await self._error(send, api, 500, f"no reply scripted for request {number}")
        elif reply.status != 200:
            await self._error(send, api, reply.status, reply.error)
        else:
            events = (
                self._anthropic_events(request, reply) if api == "anthropic" else self._openai_events(request, reply)
            )
            if request.get("stream"):
                await self._stream(receive, send, events, reply.hang)
            elif reply.hang:
                await self._hang(receive)
            else:
                answer = (
                    self._anthropic_message(request, reply)
                    if api == "anthropic"
                    else self._openai_message(request, reply)
                )
                await self._respond(send, 200, "application/json", orjson.dumps(answer))

    async def _embeddings(self, receive: Receive, send: Send, request: dict[str, Any]) -> None:
        with self._lock:
            self.embedding_requests.append(request)
            size = self.embeddings_sizes.pop(0) if self.embeddings_sizes else EMBEDDING_DIMENSIONS
        if self.embeddings_status != 200:
            await self._error(send, "openai", self.embeddings_status, "scripted embeddings failure")
            return
        inputs = request.get("input")
        inputs = [inputs] if isinstance(inputs, str) else inputs
        if not isinstance(inputs, list) or not all(isinstance(each, str) for each in inputs):
            await self._error(send, "openai", 400, "input must be a string or a list of strings")
            return
        data = []
        for index, text in enumerate(inputs):
            vector: Any = embedding(text, size)
            if request.get("encoding_format") == "base64":
                vector = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
            data.append({"object": "embedding", "index": index, "embedding": vector})
        tokens = sum(len(text) for text in inputs)
        answer = {
            "object": "list",
            "data": data,
            "model": request.get("model", ""),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        if self.embeddings_padding or self.embeddings_trickle:
            await self._dribble(receive, send, orjson.dumps(answer))
        else:
            await self._respond(send, 200, "application/json", orjson.dumps(answer))

    async def _dribble(self, receive: Receive, send: Send, body: bytes) -> None:
        """``body`` padded with :attr:`embeddings_padding` bytes of white space after its first
        byte, or a byte every :attr:`embeddings_trickle` seconds, until the client goes away."""
        gone = asyncio.Event()

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        watcher = asyncio.create_task(watch())
        mib = 1 << 20
        if self.embeddings_trickle:
            pieces: Any = (body[at : at + 1] for at in range(len(body)))
        else:
            spaces = itertools.repeat(b" " * mib, self.embeddings_padding // mib)
            pieces = itertools.chain([body[:1]], spaces, [b" " * (self.embeddings_padding % mib), body[1:]])
        self.embeddings_sent = 0
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        for piece in pieces:
            await send({"type": "http.response.body", "body": piece, "more_body": True})
            self.embeddings_sent += len(piece)
            if self.embeddings_trickle:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(gone.wait(), self.embeddings_trickle)
            else:
                await asyncio.sleep(0)  # the watcher's turn: has the client gone?
            if gone.is_set():
                with self._disconnected:
                    self.disconnects += 1
                    self._disconnected.notify_all()
                return
        await send({"type": "http.response.body", "body": b""})
        watcher.cancel()

    async def _respond(self, send: Send, status: int, content_type: str, body: bytes) -> None:
        await send(
            {"type": "http.response.start", "status": status, "headers": [(b"content-type", content_type.encode())]}
        )
        await send({"type": "http.response.body", "body": body})

    async def _error(self, send: Send, api: str, status: int, message: str) -> None:
        if api == "anthropic":
            error: dict[str, Any] = {"type": "error", "error": {"type": "api_error", "message": message}}
        else:
            error = {"error": {"message": message, "type": "server_error", "param": None, "code": None}}
        await self._respond(send, status, "application/json", orjson.dumps(error))

    async def _stream(self, receive: Receive, send: Send, events: list[bytes], hang: bool) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        for event in events[:2] if hang else events:
            await send({"type": "http.response.body", "body": event, "more_body": True})
        if hang:
            await self._hang(receive)
            return
        await send({"type": "http.response.body", "body": b""})

    async def _hang(self, receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        with self._disconnected:
            self.disconnects += 1
            self._disconnected.notify_all()

    def _call_id(self, call: ToolCall, prefix: str) -> str:
        return call.id or f"{prefix}{next(self._ids)}"

    # -- OpenAI Chat Completions ---------------------------------------------------------------

    def _openai_message(self, request: dict[str, Any], reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": self._call_id(call, "call_"),
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_json()},
                }
                for call in reply.tool_calls
            ]
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", ""),
            "choices": [
                {"index": 0, "message": message, "finish_reason": self._openai_finish(reply), "logprobs": None}
            ],
            "usage": self._openai_usage(reply),
        }

    @staticmethod
    def _openai_finish(reply: Reply) -> str:
        return "tool_calls" if reply.tool_calls else "stop"

    @staticmethod
    def _openai_usage(reply: Reply) -> dict[str, int]:
        return {
            "prompt_tokens": reply.input_tokens,
            "completion_tokens": reply.output_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens,
        }

    def _openai_events(self, request: dict[str, Any], reply: Reply) -> list[bytes]:
        head = {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": request.get("model", ""),
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

        chunks = [chunk({"role": "assistant", "content": ""})]
        chunks += [chunk({"content": piece}) for piece in _pieces(reply.text, reply.chunk)]
        for index, call in enumerate(reply.tool_calls):
            start = {"index": index, "id": self._call_id(call, "call_"), "type": "function"}
            chunks.append(chunk({"tool_calls": [{**start, "function": {"name": call.name, "arguments": ""}}]}))
            for piece in _pieces(call.arguments_json(), reply.chunk):
                chunks.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
        chunks.append(chunk({}, self._openai_finish(reply)))
        if (request.get("stream_options") or {}).get("include_usage"):
            chunks.append({**head, "choices": [], "usage": self._openai_usage(reply)})
        return [b"data: " + orjson.dumps(each) + b"\n\n" for each in chunks] + [b"data: [DONE]\n\n"]

    # -- Anthropic Messages --------------------------------------------------------------------

    def _anthropic_blocks(self, reply: Reply) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
        for call in reply.tool_calls:
            arguments = call.arguments if isinstance(call.arguments, dict) else {"raw": call.arguments}
            blocks.append(
                {"type": "tool_use", "id": self._call_id(call, "toolu_"), "name": call.name, "input": arguments}
            )
        return blocks

    @staticmethod
    def _anthropic_stop(reply: Reply) -> str:
        return "tool_use" if reply.tool_calls else "end_turn"

    def _anthropic_message(self, request: dict[str, Any], reply: Reply) -> dict[str, Any]:
        return {
            "id": f"msg_{next(self._ids)}",
            "type": "message",
            "role": "assistant",
            "model": request.get("model", ""),
            "content": self._anthropic_blocks(reply),
            "stop_reason": self._anthropic_stop(reply),
            "stop_sequence": None,
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
        }

    def _anthropic_events(self, request: dict[str, Any], reply: Reply) -> list[bytes]:
        start = self._anthropic_message(request, reply)
        start.update(content=[], stop_reason=None, usage={"input_tokens": reply.input_tokens, "output_tokens": 1})
        events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
        for index, block in enumerate(self._anthropic_blocks(reply)):
            if block["type"] == "text":
                events.append(
                    {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
                )
                deltas = [{"type": "text_delta", "text": piece} for piece in _pieces(block["text"], reply.chunk)]
            else:
                opening = {**block, "input": {}}
                events.append({"type": "content_block_start", "index": index, "content_block": opening})
                arguments = orjson.dumps(block["input"]).decode()
                deltas = [
                    {"type": "input_json_delta", "partial_json": piece} for piece in _pieces(arguments, reply.chunk)
                ]
            events += [{"type": "content_block_delta", "index": index, "delta": delta} for delta in deltas]
            events.append({"type": "content_block_stop", "index": index})
        events.append(
            {
                "type": "message_delta",
                "delta": {"stop_reason": self._anthropic_stop(reply), "stop_sequence": None},
                "usage": {"output_tokens": reply.output_tokens},
            }
        )
        events.append({"type": "message_stop"})
        return [f"event: {event['type']}\ndata: ".encode() + orjson.dumps(event) + b"\n\n" for event in events]
