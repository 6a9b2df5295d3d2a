"""A tool's result as a model reads it, and a short summary for people.

:func:`model_parts` turns a ``tools/call`` result into the neutral parts of a ``tool``
message (:mod:`.model`):

- text blocks as they are; ``structuredContent`` as JSON (a text block that only repeats it,
  as servers send for older clients, is left out);
- images and audio as media parts (each provider sends them to a model that reads them and
  a one-line note to one that does not);
- a resource link as a line with its URI, name and type, and how to read it (the host's
  ``read_resource`` tool); an embedded resource's text under its URI, its blob as an image
  when it is one, a note otherwise;
- content of a kind this host does not know as a note.

The text of one result is cut at ``max_chars`` with a note that says how much was left out.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..client import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
)
from .model import Part, text_part

#: The default cap on the text of one tool result, in characters.
MAX_RESULT_CHARS = 32_000
READ_HINT = "read it with the read_resource tool"


def model_parts(result: CallToolResult, max_chars: int = MAX_RESULT_CHARS, readable: bool = True) -> list[Part]:
    """The parts a model is given for ``result`` (see the module's description). ``readable``:
    whether resource links are said to be readable with the host's ``read_resource`` tool."""
    parts: list[Part] = []
    structured = result.raw.get("structuredContent")
    repeated = _json_text(structured) if structured is not None else None
    for block in result.content:
        if isinstance(block, TextContent):
            if repeated is None or _json_text_of(block.text) != repeated:
                parts.append(text_part(block.text))
        elif isinstance(block, ImageContent | AudioContent):
            kind = "image" if isinstance(block, ImageContent) else "audio"
            parts.append({"type": kind, "data": block.data, "mime_type": block.mime_type})
        elif isinstance(block, ResourceLink):
            described = ", ".join(x for x in (block.title or block.name, block.mime_type) if x)
            hint = f"; {READ_HINT}" if readable else ""
            parts.append(text_part(f"Resource link: {block.uri}" + (f" ({described})" if described else "") + hint))
        elif isinstance(block, EmbeddedResource):
            parts.extend(_embedded(block))
        else:
            parts.append(text_part(f"[content of type {block.type!r} that this host cannot show]"))
    if structured is not None:
        parts.append(text_part(orjson.dumps(structured).decode()))
    if not parts:
        parts.append(text_part("(the tool returned no content)"))
    return cut(parts, max_chars)


def _embedded(block: EmbeddedResource) -> list[Part]:
    header = f"Resource {block.uri}" + (f" ({block.mime_type})" if block.mime_type else "")
    if block.text is not None:
        return [text_part(f"{header}:\n{block.text}")]
    if block.blob is not None and (block.mime_type or "").startswith("image/"):
        return [text_part(f"{header}:"), {"type": "image", "data": block.blob, "mime_type": block.mime_type}]
    return [text_part(f"{header}: binary contents, not shown")]


def cut(parts: list[Part], max_chars: int) -> list[Part]:
    """``parts`` with their text cut to ``max_chars`` in all, and a note of what was cut."""
    total = sum(len(part["text"]) for part in parts if part["type"] == "text")
    if total <= max_chars:
        return parts
    kept: list[Part] = []
    room = max_chars
    for part in parts:
        if part["type"] != "text":
            kept.append(part)
        elif room > 0:
            kept.append(text_part(part["text"][:room]))
            room -= len(part["text"])
    kept.append(text_part(f"[cut: {total - max_chars} more characters of this result were left out]"))
    return kept


def summary(parts: list[Part], width: int = 200) -> str:
    """A one-line summary of a result for people: its first text, then how many media."""
    texts = " ".join(part["text"] for part in parts if part["type"] == "text")
    line = " ".join(texts.split())
    media = [part["type"] for part in parts if part["type"] != "text"]
    if media:
        line += "".join(f" [{kind}]" for kind in media)
    return line if len(line) <= width else line[: width - 1] + "…"


def _json_text(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def _json_text_of(text: str) -> bytes | None:
    try:
        return _json_text(orjson.loads(text))
    except orjson.JSONDecodeError:
        return None
