"""Per-version wire codecs: the one place that knows what each protocol version looks like.

Tools, results and notifications are built once in neutral terms (the newest shape, every
field present); a :class:`Codec` renders them for the version a peer speaks, leaving out what
that version lacks and reshaping what it spells differently. Nothing outside this module
compares version strings.

What changes, by version:

=================  =========================================================================
2024-11-05         tools: name, description, inputSchema; content: text, image, resource;
                   resources, templates, prompts without title, icons or ``_meta``;
                   resource not found is ``-32002``
2025-03-26         + tool annotations, audio content, progress ``message``, JSON-RPC batches,
                   the ``completions`` capability
2025-06-18         + title, ``_meta``, outputSchema and structuredContent (objects only),
                   resource_link, ``lastModified`` annotations, elicitation; batches removed
2025-11-25         + icons; argument validation failures become ``isError`` results;
                   elicitation carries ``mode``; HTTP streams open with a priming event
                   and may be resumed; tasks (``tasks`` capability, ``execution`` on
                   tools, ``ttl``/``pollInterval``, ``tasks/result`` and ``tasks/list``)
2026-07-28         no handshake; ``resultType`` on every result; ``ttlMs``/``cacheScope`` on
                   discover, list and read results; outputSchema and structuredContent of
                   any type; ``-32021`` for a missing client capability; resource not found
                   is ``-32602``; tasks are the ``io.modelcontextprotocol/tasks``
                   extension (``ttlMs``/``pollIntervalMs``, results inlined in ``tasks/get``)
=================  =========================================================================
"""

from __future__ import annotations

from typing import Any, Protocol

import orjson

from .errors import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, RESOURCE_NOT_FOUND, ProtocolError
from .versions import LEGACY_VERSIONS, META_SERVER_INFO, MODERN_VERSIONS


class TaskView(Protocol):
    """What :meth:`Codec.task` reads of a task (a :class:`toolwire.tasks.model.TaskRecord`
    is one): the protocol package imports nothing else of toolwire."""

    @property
    def id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def message(self) -> str | None: ...
    @property
    def created(self) -> float: ...
    @property
    def updated(self) -> float: ...
    @property
    def ttl_ms(self) -> int | None: ...
    @property
    def poll_ms(self) -> int: ...
    @property
    def inputs(self) -> dict[str, Any] | None: ...
    @property
    def result(self) -> dict[str, Any] | None: ...
    @property
    def error(self) -> dict[str, Any] | None: ...


def timestamp(seconds: float) -> str:
    """``seconds`` since the epoch as ISO 8601 UTC with milliseconds (``...T10:30:00.000Z``)."""
    from datetime import UTC, datetime  # only servers and clients with tasks need it

    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


LOG_LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
LOG_SEVERITY: dict[str, int] = {level: rank for rank, level in enumerate(LOG_LEVELS)}

_TOOL_FIELDS_BASE = ("name", "description", "inputSchema")
_RESOURCE_FIELDS_BASE = ("uri", "name", "description", "mimeType", "size", "annotations")
_TEMPLATE_FIELDS_BASE = ("uriTemplate", "name", "description", "mimeType", "annotations")
_PROMPT_FIELDS_BASE = ("name", "description", "arguments")


#: The end of a 2026-07-28 result of one text block after the text, given the server's info.
_MODERN_TEXT_END = b'}],"resultType":"complete","_meta":{"' + META_SERVER_INFO.encode() + b'":%b}}'


class Codec:
    """Renders neutral protocol objects for one protocol version.

    Codecs are immutable and shared: get one with :func:`codec_for`.
    """

    __slots__ = (
        "_prompt_fields",
        "_resource_fields",
        "_template_fields",
        "_tool_fields",
        "annotations",
        "audio",
        "batches",
        "elicitation",
        "elicitation_mode",
        "icons",
        "modern",
        "progress_message",
        "renders_content",
        "resumable_streams",
        "structured",
        "tasks",
        "validation_is_error",
        "version",
    )

    def __init__(self, version: str) -> None:
        at_least = version.__ge__  # ISO dates compare in order as strings
        self.version = version
        self.modern = version in MODERN_VERSIONS
        self.batches = version == "2025-03-26"
        self.annotations = at_least("2025-03-26")
        self.audio = at_least("2025-03-26")
        self.progress_message = at_least("2025-03-26")
        self.structured = at_least("2025-06-18")
        self.elicitation = at_least("2025-06-18")
        self.icons = at_least("2025-11-25")
        self.validation_is_error = at_least("2025-11-25")
        self.elicitation_mode = at_least("2025-11-25")
        #: Streamable HTTP: SSE streams open with a priming event (id, empty data) and may be
        #: resumed with ``Last-Event-ID`` (clients of older versions expect no priming event).
        self.resumable_streams = at_least("2025-11-25")
        #: Tasks in the core protocol (2025-11-25 only; 2026-07-28 has them as an extension).
        self.tasks = version == "2025-11-25"
        #: Whether :meth:`call_result` changes a result without structured content.
        self.renders_content = not (self.structured and self.audio)
        fields = list(_TOOL_FIELDS_BASE)
        if self.annotations:
            fields.append("annotations")
        if self.structured:
            fields += ["title", "outputSchema", "_meta"]
        if self.icons:
            fields.append("icons")
        if self.tasks:
            fields.append("execution")
        self._tool_fields = tuple(fields)
        newer = (("title", "_meta") if self.structured else ()) + (("icons",) if self.icons else ())
        self._resource_fields = _RESOURCE_FIELDS_BASE + newer
        self._template_fields = _TEMPLATE_FIELDS_BASE + newer
        self._prompt_fields = _PROMPT_FIELDS_BASE + newer

    def __repr__(self) -> str:
        return f"Codec({self.version!r})"

    # -- results ---------------------------------------------------------------------------

    def finish(self, result: dict[str, Any], server_info: dict[str, Any] | None) -> dict[str, Any]:
        """Complete a result for the wire: modern results get ``resultType`` and ``serverInfo``."""
        if not self.modern:
            return result
        result.setdefault("resultType", "complete")
        if server_info is not None:
            meta = result.get("_meta")
            if meta is None:
                result["_meta"] = {META_SERVER_INFO: server_info}
            elif META_SERVER_INFO not in meta:
                result["_meta"] = {**meta, META_SERVER_INFO: server_info}
        return result

    def text_result_end(self, server_info: dict[str, Any]) -> bytes:
        """What ends a result of one text block after its text, encoded, as :meth:`finish`
        completes it with ``server_info``: the closing brackets, and in 2026-07-28
        ``resultType`` and the server's info."""
        return _MODERN_TEXT_END % orjson.dumps(server_info) if self.modern else b"}]}"

    def cacheable(self, result: dict[str, Any], ttl_ms: int, scope: str) -> dict[str, Any]:
        """Add the caching hints 2026-07-28 requires on discover, list and read results."""
        if self.modern:
            result["ttlMs"] = ttl_ms
            result["cacheScope"] = scope
        return result

    # -- tools -----------------------------------------------------------------------------

    def tool(self, tool: dict[str, Any]) -> dict[str, Any]:
        """Render a neutral tool definition: only the fields this version has."""
        rendered = {key: tool[key] for key in self._tool_fields if key in tool}
        if not self.modern and "outputSchema" in rendered:
            rendered["outputSchema"] = object_output_schema(rendered["outputSchema"])
        if self.annotations and not self.structured and "title" in tool:
            # 2025-03-26 has no Tool.title; its annotations carry one.
            rendered["annotations"] = {"title": tool["title"], **tool.get("annotations", {})}
        return rendered

    def call_result(self, result: dict[str, Any], wrap_structured: bool) -> dict[str, Any]:
        """Render a neutral ``CallToolResult``.

        ``wrap_structured`` says the tool's output schema is not an object: legacy versions
        then receive ``{"result": value}``, matching :func:`object_output_schema`.
        """
        if "structuredContent" in result:
            if not self.structured:
                del result["structuredContent"]
            elif wrap_structured and not self.modern:
                result["structuredContent"] = {"result": result["structuredContent"]}
        if self.renders_content:
            result["content"] = self.content(result["content"])
        return result

    def content(self, blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Content blocks this version cannot carry become text that says what they were."""
        if self.structured:
            return blocks
        return [self._downgrade(block) for block in blocks]

    def _downgrade(self, block: dict[str, Any]) -> dict[str, Any]:
        kind = block.get("type")
        if kind == "resource_link":
            name = block.get("title") or block.get("name") or block.get("uri")
            return {"type": "text", "text": f"Resource {name}: {block.get('uri')}"}
        if kind == "audio" and not self.audio:
            size = len(block.get("data", "")) * 3 // 4
            return {"type": "text", "text": f"[audio {block.get('mimeType')}, {size} bytes]"}
        if "_meta" in block:
            block = {key: value for key, value in block.items() if key != "_meta"}
        return block

    # -- resources, prompts, completion ----------------------------------------------------

    def capabilities(self, capabilities: dict[str, Any]) -> dict[str, Any]:
        """The server's capabilities as this version names them (2024-11-05 has no
        ``completions`` capability: completion was offered without one). Extensions add
        theirs per version (see :meth:`ServerIdentity.capabilities_in
        <toolwire.protocol.connection.ServerIdentity.capabilities_in>`)."""
        if not self.audio and "completions" in capabilities:
            capabilities = {key: value for key, value in capabilities.items() if key != "completions"}
        return capabilities

    def resource(self, resource: dict[str, Any]) -> dict[str, Any]:
        """Render a neutral ``Resource`` (also the body of a ``resource_link``)."""
        return self._described(resource, self._resource_fields)

    def resource_template(self, template: dict[str, Any]) -> dict[str, Any]:
        return self._described(template, self._template_fields)

    def prompt(self, prompt: dict[str, Any]) -> dict[str, Any]:
        rendered = {key: prompt[key] for key in self._prompt_fields if key in prompt}
        if not self.structured and "arguments" in rendered:  # PromptArgument.title is 2025-06-18
            rendered["arguments"] = [{k: v for k, v in a.items() if k != "title"} for a in rendered["arguments"]]
        return rendered

    def _described(self, item: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
        rendered = {key: item[key] for key in fields if key in item}
        annotations = rendered.get("annotations")
        if annotations is not None and not self.structured and "lastModified" in annotations:
            rendered["annotations"] = {k: v for k, v in annotations.items() if k != "lastModified"}
        return rendered

    def resource_contents(self, contents: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``resources/read`` contents: ``_meta`` on them is 2025-06-18 and later."""
        if self.structured:
            return contents
        return [{k: v for k, v in item.items() if k != "_meta"} for item in contents]

    def prompt_messages(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Prompt messages, their content downgraded as tool results' is."""
        if self.structured:
            return messages
        return [{**message, "content": self._downgrade(message["content"])} for message in messages]

    def resource_not_found(self, uri: str, reason: str | None = None) -> ProtocolError:
        """The error for a resource that does not exist: ``-32002`` up to 2025-11-25,
        ``-32602`` from 2026-07-28 (which must never send ``-32002``); ``data.uri`` in both."""
        code = INVALID_PARAMS if self.modern else RESOURCE_NOT_FOUND
        return ProtocolError(code, f"Resource not found: {uri}" + (f" ({reason})" if reason else ""), {"uri": uri})

    def invalid_arguments(self, message: str) -> dict[str, Any]:
        """Arguments that break the inputSchema: an ``isError`` result from 2025-11-25 on,
        a ``-32602`` error before (raised)."""
        if not self.validation_is_error:
            raise ProtocolError(INVALID_PARAMS, message)
        return {"content": [{"type": "text", "text": message}], "isError": True}

    def missing_capability(self, capability: str, message: str) -> dict[str, Any]:
        """A tool needs a client capability the request did not declare.

        Modern: ``-32021`` naming the capability (raised). Legacy has no such code: the call
        becomes an ``isError`` result the model can read.
        """
        if self.modern:
            raise ProtocolError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                message,
                {"requiredCapabilities": {capability: {}}},
            )
        return {"content": [{"type": "text", "text": message}], "isError": True}

    # -- tasks -----------------------------------------------------------------------------

    def task(self, record: TaskView, detailed: bool = False) -> dict[str, Any]:
        """A task as this version spells it (2025-11-25 ``ttl``/``pollInterval``, 2026-07-28
        ``ttlMs``/``pollIntervalMs``). ``detailed`` (2026-07-28 ``tasks/get``): with the
        questions it waits on, its result or its error."""
        task: dict[str, Any] = {"taskId": record.id, "status": record.status}
        if record.message is not None:
            task["statusMessage"] = record.message
        task["createdAt"] = timestamp(record.created)
        task["lastUpdatedAt"] = timestamp(record.updated)
        if self.modern:
            task["ttlMs"] = record.ttl_ms
            task["pollIntervalMs"] = record.poll_ms
            if detailed:
                if record.status == "input_required":
                    task["inputRequests"] = record.inputs
                elif record.status == "completed" and record.result is not None:
                    task["result"] = record.result
                elif record.status == "failed" and record.error is not None:
                    task["error"] = record.error
        else:
            task["ttl"] = record.ttl_ms
            task["pollInterval"] = record.poll_ms
        return task

    # -- notifications and server requests -------------------------------------------------

    def progress(self, token: str | int, progress: float, total: float | None, message: str | None) -> dict[str, Any]:
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and self.progress_message:
            params["message"] = message
        return params

    def elicitation_request(self, message: str, schema: dict[str, Any]) -> dict[str, Any]:
        params: dict[str, Any] = {"message": message, "requestedSchema": schema}
        if self.elicitation_mode:
            params = {"mode": "form", **params}
        return params


def object_output_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Legacy versions allow only object output schemas: wrap others as ``{"result": ...}``."""
    if schema.get("type") == "object":
        return schema
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
    }
    if "$defs" in schema:
        inner = {key: value for key, value in schema.items() if key != "$defs"}
        wrapped = {**wrapped, "properties": {"result": inner}, "$defs": schema["$defs"]}
    return wrapped


_CODECS: dict[str, Codec] = {v: Codec(v) for v in (*LEGACY_VERSIONS, *MODERN_VERSIONS)}
#: The 2026-07-28-era codecs by version: a request's ``_meta`` names one (absent: not served).
MODERN_CODECS: dict[str, Codec] = {v: _CODECS[v] for v in MODERN_VERSIONS}


def codec_for(version: str) -> Codec:
    """The shared codec of a supported version (``KeyError`` for an unknown one)."""
    return _CODECS[version]
