"""Content blocks a tool returns: text, image, audio, resource links and embedded resources.

Blocks are plain dicts (a :class:`Content` marks them, so a tool returning ``dict`` data is
never mistaken for one). Binary data is base64-encoded here; the MIME type of images and
audio is detected from the bytes (or the file name) when not given, and a clear
``ValueError`` says when it cannot be.
"""

import base64
from pathlib import Path
from typing import Any, Literal

Audience = Literal["user", "assistant"]


class Content(dict[str, Any]):
    """A content block: a dict in the shape of the MCP ``ContentBlock`` it stands for."""


def annotations(
    *,
    audience: list[Audience] | None = None,
    priority: float | None = None,
    last_modified: str | None = None,
) -> dict[str, Any]:
    """Content annotations: who the block is for, how important it is (0..1), when it changed."""
    if priority is not None and not 0 <= priority <= 1:
        raise ValueError(f"priority must be between 0 and 1, not {priority}")
    out: dict[str, Any] = {}
    if audience is not None:
        out["audience"] = list(audience)
    if priority is not None:
        out["priority"] = priority
    if last_modified is not None:
        out["lastModified"] = last_modified
    return out


def _block(kind: str, fields: dict[str, Any], notes: dict[str, Any] | None, meta: dict[str, Any] | None) -> Content:
    block = Content(type=kind, **{k: v for k, v in fields.items() if v is not None})
    if notes:
        block["annotations"] = notes
    if meta:
        block["_meta"] = meta
    return block


def text(value: str, *, annotations: dict[str, Any] | None = None, meta: dict[str, Any] | None = None) -> Content:
    """A text block."""
    return _block("text", {"text": value}, annotations, meta)


def image(
    data: bytes | str | Path,
    mime_type: str | None = None,
    *,
    annotations: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> Content:
    """An image block from bytes or a file path (``str`` or ``Path``); MIME type detected."""
    return _media("image", data, mime_type, annotations, meta)


def audio(
    data: bytes | str | Path,
    mime_type: str | None = None,
    *,
    annotations: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> Content:
    """An audio block from bytes or a file path; MIME type detected."""
    return _media("audio", data, mime_type, annotations, meta)


def _media(
    kind: str,
    data: bytes | str | Path,
    mime_type: str | None,
    notes: dict[str, Any] | None,
    meta: dict[str, Any] | None,
) -> Content:
    raw, mime = _load(data, mime_type, kind)
    return _block(kind, {"data": base64.b64encode(raw).decode(), "mimeType": mime}, notes, meta)


def resource_link(
    uri: str,
    name: str,
    *,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
    annotations: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> Content:
    """A link to a resource the client may read (2025-06-18 and later; older peers get text)."""
    fields = {
        "uri": uri,
        "name": name,
        "title": title,
        "description": description,
        "mimeType": mime_type,
        "size": size,
    }
    return _block("resource_link", fields, annotations, meta)


def embedded_resource(
    uri: str,
    *,
    text: str | None = None,
    blob: bytes | None = None,
    mime_type: str | None = None,
    annotations: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
) -> Content:
    """A resource embedded in the result: exactly one of ``text`` and ``blob``."""
    if (text is None) == (blob is None):
        raise ValueError("embedded_resource needs exactly one of text= and blob=")
    contents: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        contents["mimeType"] = mime_type
    if text is not None:
        contents["text"] = text
    else:
        assert blob is not None
        contents["blob"] = base64.b64encode(blob).decode()
    return _block("resource", {"resource": contents}, annotations, meta)


_MAGIC: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"WEBP", 8, "image/webp"),
    (b"WAVE", 8, "audio/wav"),
    (b"ID3", 0, "audio/mpeg"),
    (b"\xff\xfb", 0, "audio/mpeg"),
    (b"\xff\xf3", 0, "audio/mpeg"),
    (b"OggS", 0, "audio/ogg"),
    (b"fLaC", 0, "audio/flac"),
)


def detect_mime(raw: bytes, name: str | None = None) -> str | None:
    """The MIME type of ``raw`` from its leading bytes, else from ``name``'s extension."""
    for magic, offset, mime in _MAGIC:
        if raw[offset : offset + len(magic)] == magic:
            return mime
    head = raw[:256].lstrip()
    if head.startswith(b"<svg") or (head.startswith(b"<?xml") and b"<svg" in raw[:1024]):
        return "image/svg+xml"
    if name:
        import mimetypes

        return mimetypes.guess_type(name)[0]
    return None


def _load(data: bytes | str | Path, mime_type: str | None, kind: str) -> tuple[bytes, str]:
    name = None
    if isinstance(data, (str, Path)):
        name = str(data)
        data = Path(data).read_bytes()
    mime = mime_type or detect_mime(data, name)
    if mime is None or (mime_type is None and not mime.startswith(kind + "/")):
        raise ValueError(f"cannot tell the {kind} MIME type of this data: pass mime_type=")
    return data, mime
