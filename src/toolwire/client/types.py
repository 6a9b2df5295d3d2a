"""Typed views of what a server sends: tool definitions, call results and their content.

Each keeps the raw dict it came from (``.raw``), so nothing a server sends is lost, even
fields a later protocol version adds.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class ToolInfo:
    """A tool as the server lists it."""

    name: str
    input_schema: dict[str, Any]
    description: str | None = None
    title: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] = field(default_factory=dict)
    icons: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, tool: dict[str, Any]) -> ToolInfo:
        annotations = tool.get("annotations")
        return cls(
            name=tool["name"],
            input_schema=tool.get("inputSchema") or {"type": "object"},
            description=tool.get("description"),
            title=tool.get("title"),
            output_schema=tool.get("outputSchema"),
            annotations=annotations if isinstance(annotations, dict) else {},
            icons=tool.get("icons") or [],
            meta=tool.get("_meta"),
            raw=tool,
        )

    @property
    def task_support(self) -> str | None:
        """2025-11-25 ``execution.taskSupport``: ``"optional"``, ``"required"``, or ``None``
        (the tool runs in its request; ``"forbidden"`` reads as ``None``)."""
        execution = self.raw.get("execution")
        support = execution.get("taskSupport") if isinstance(execution, dict) else None
        return support if support in ("optional", "required") else None

    @property
    def display_name(self) -> str:
        """``title``, then ``annotations.title``, then ``name`` (the specification's order)."""
        return self.title or self.annotations.get("title") or self.name

    def hint(self, name: str) -> bool:
        """An annotation hint with the specification's default (``readOnly``: false,
        ``destructive``: true, ``idempotent``: false, ``openWorld``: true). Hints come from the
        server and are not to be trusted for security decisions."""
        defaults = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}
        return bool(self.annotations.get(name, defaults.get(name, False)))


@dataclass(slots=True)
class TextContent:
    text: str
    annotations: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(slots=True)
class ImageContent:
    data: str
    mime_type: str
    annotations: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    def bytes(self) -> bytes:
        return base64.b64decode(self.data)


@dataclass(slots=True)
class AudioContent:
    data: str
    mime_type: str
    annotations: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    def bytes(self) -> bytes:
        return base64.b64decode(self.data)


@dataclass(slots=True)
class ResourceLink:
    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(slots=True)
class EmbeddedResource:
    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None
    annotations: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass(slots=True)
class UnknownContent:
    """A content type this client does not know (from a newer protocol, say)."""

    type: str
    raw: dict[str, Any] = field(default_factory=dict, repr=False)


ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource | UnknownContent


def content_block(block: dict[str, Any]) -> ContentBlock:
    """The typed view of one content block (:class:`UnknownContent` for what is not one)."""
    if not isinstance(block, dict):
        return UnknownContent(type(block).__name__, {"value": block})
    kind = block.get("type")
    notes = block.get("annotations")
    if kind == "text":
        return TextContent(block.get("text", ""), notes, block)
    if kind == "image":
        return ImageContent(block.get("data", ""), block.get("mimeType", ""), notes, block)
    if kind == "audio":
        return AudioContent(block.get("data", ""), block.get("mimeType", ""), notes, block)
    if kind == "resource_link":
        return ResourceLink(
            block.get("uri", ""),
            block.get("name", ""),
            block.get("title"),
            block.get("description"),
            block.get("mimeType"),
            block.get("size"),
            notes,
            block,
        )
    if kind == "resource":
        resource = block.get("resource") or {}
        return EmbeddedResource(
            resource.get("uri", ""), resource.get("mimeType"), resource.get("text"), resource.get("blob"), notes, block
        )
    return UnknownContent(str(kind), block)


class CallToolResult:
    """A tool's answer: content blocks, structured content (if any), and the error flag.

    The typed content blocks are made on first use: a caller that only reads ``structured``
    or ``text`` pays for no more than it reads.
    """

    __slots__ = ("_content", "raw")

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        self._content: list[ContentBlock] | None = None

    @classmethod
    def from_dict(cls, result: dict[str, Any]) -> CallToolResult:
        return cls(result)

    @property
    def content(self) -> list[ContentBlock]:
        if self._content is None:
            self._content = [content_block(block) for block in self.raw.get("content") or []]
        return self._content

    @property
    def structured(self) -> Any:
        """``structuredContent``, or ``None``."""
        return self.raw.get("structuredContent")

    @property
    def is_error(self) -> bool:
        return bool(self.raw.get("isError"))

    @property
    def meta(self) -> dict[str, Any] | None:
        return self.raw.get("_meta")

    @property
    def text(self) -> str:
        """The text blocks, joined by newlines."""
        return "\n".join(
            block.get("text", "") for block in self.raw.get("content") or [] if block.get("type") == "text"
        )

    def __repr__(self) -> str:
        return f"CallToolResult(content={self.content!r}, structured={self.structured!r}, is_error={self.is_error})"


def _described(item: dict[str, Any]) -> dict[str, Any]:
    """The fields resources and resource templates share, by their Python names."""
    return {
        "name": item.get("name", ""),
        "title": item.get("title"),
        "description": item.get("description"),
        "mime_type": item.get("mimeType"),
        "annotations": item.get("annotations"),
        "icons": item.get("icons") or [],
        "meta": item.get("_meta"),
        "raw": item,
    }


@dataclass(slots=True)
class ResourceInfo:
    """A resource as the server lists it."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: dict[str, Any] | None = None
    icons: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, resource: dict[str, Any]) -> ResourceInfo:
        return cls(uri=resource.get("uri", ""), size=resource.get("size"), **_described(resource))


@dataclass(slots=True)
class ResourceTemplateInfo:
    """A resource template (RFC 6570) as the server lists it; :meth:`expand` fills it in."""

    uri_template: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: dict[str, Any] | None = None
    icons: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, template: dict[str, Any]) -> ResourceTemplateInfo:
        return cls(uri_template=template.get("uriTemplate", ""), **_described(template))

    @property
    def variables(self) -> list[str]:
        """The template's variable names, in order."""
        from ..resources.uri_template import UriTemplate

        return UriTemplate(self.uri_template).variables

    def expand(self, **values: Any) -> str:
        """The URI for ``values``; ``ValueError`` if the server's template is not valid RFC 6570."""
        from ..resources.uri_template import UriTemplate

        return UriTemplate(self.uri_template).expand(values)


@dataclass(slots=True)
class ResourceContents:
    """One entry of a ``resources/read`` result: ``text``, or ``blob`` (base64; :meth:`bytes`)."""

    uri: str
    mime_type: str | None = None
    text: str | None = None
    blob: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, entry: dict[str, Any]) -> ResourceContents:
        return cls(entry.get("uri", ""), entry.get("mimeType"), entry.get("text"), entry.get("blob"), entry)

    def bytes(self) -> bytes:
        """The contents as bytes: the blob decoded, or the text in UTF-8."""
        if self.blob is not None:
            return base64.b64decode(self.blob)
        return (self.text or "").encode()


@dataclass(slots=True)
class PromptInfo:
    """A prompt as the server lists it; ``arguments`` are dicts with ``name``,
    ``description`` and ``required``."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[dict[str, Any]] = field(default_factory=list)
    icons: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, prompt: dict[str, Any]) -> PromptInfo:
        return cls(
            name=prompt.get("name", ""),
            title=prompt.get("title"),
            description=prompt.get("description"),
            arguments=[a for a in prompt.get("arguments") or [] if isinstance(a, dict)],
            icons=prompt.get("icons") or [],
            meta=prompt.get("_meta"),
            raw=prompt,
        )

    @property
    def required_arguments(self) -> list[str]:
        return [a.get("name", "") for a in self.arguments if a.get("required")]


@dataclass(slots=True)
class PromptMessage:
    role: str
    content: ContentBlock


@dataclass(slots=True)
class GetPromptResult:
    """A rendered prompt: its ``messages`` (typed content) and an optional ``description``."""

    messages: list[PromptMessage]
    description: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, result: dict[str, Any]) -> GetPromptResult:
        messages = [
            PromptMessage(str(m.get("role", "")), content_block(m.get("content") or {}))
            for m in result.get("messages") or []
            if isinstance(m, dict)
        ]
        return cls(messages, result.get("description"), result)
