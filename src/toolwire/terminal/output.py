"""What ``toolwire call`` prints: a tool's result on stdout, its images and audio in files.

Text blocks are printed as they are, then ``structuredContent`` as indented JSON (a text block
that only repeats it, as servers send for older clients, is left out). Images and audio are
saved as ``TOOL-N.EXT`` (N counts the saved files from 1, EXT comes from the MIME type; a
file of that name is replaced) and named on a line of their own. A resource link or an
embedded resource is a line with its URI, followed by the embedded text if any.

What a server sends is untrusted: printed to a terminal, its control characters (all but
newline and tab) are shown as U+FFFD, so that it cannot move the cursor, retitle the window
or write the clipboard. Piped elsewhere, the text is left exactly as sent.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
import os
import re
import sys
from typing import Any, TextIO

import orjson

from ..client import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ProtocolViolation,
    ResourceLink,
    TextContent,
)

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
EXTENSIONS = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "image/svg+xml": ".svg",
    "audio/wav": ".wav",
    "audio/x-wav": ".wav",
    "audio/mpeg": ".mp3",
    "audio/ogg": ".ogg",
    "audio/flac": ".flac",
}


def printable(text: str) -> str:
    """``text`` with its control characters, except newline and tab, replaced by U+FFFD."""
    return CONTROL.sub("\ufffd", text.replace("\r\n", "\n"))


def write(text: str, stream: TextIO | None = None) -> None:
    """Write ``text`` and a newline to ``stream`` (stdout), made printable on a terminal."""
    stream = stream or sys.stdout
    if stream.isatty():
        text = printable(text)
    stream.write(text if text.endswith("\n") else text + "\n")


def print_result(result: CallToolResult, tool: str, out: str) -> None:
    """Print a successful result of ``tool`` to stdout, saving its media in directory ``out``
    (made if missing). :class:`ProtocolViolation` for media that is not base64; ``OSError``
    when a file cannot be written."""
    has_structured = "structuredContent" in result.raw
    saved = 0
    for block in result.content:
        if isinstance(block, TextContent):
            if not (has_structured and _repeats(block.text, result.structured)):
                write(block.text)
        elif isinstance(block, ImageContent | AudioContent):
            saved += 1
            data = _decode(block.data, f"the {'image' if isinstance(block, ImageContent) else 'audio'} #{saved}")
            os.makedirs(out, exist_ok=True)
            path = os.path.normpath(os.path.join(out, f"{_file_stem(tool)}-{saved}{_extension(block.mime_type)}"))
            with open(path, "wb") as file:
                file.write(data)
            write(f"saved {path} ({block.mime_type or 'no MIME type'}, {len(data)} bytes)")
        elif isinstance(block, ResourceLink):
            name = block.title or block.name
            write(f"resource link: {block.uri}" + (f" ({name})" if name else ""))
        elif isinstance(block, EmbeddedResource):
            kind = f" ({block.mime_type})" if block.mime_type else ""
            if block.text is not None:
                write(f"resource: {block.uri}{kind}")
                write(block.text)
            else:
                size = len(_decode(block.blob or "", f"the resource {block.uri}"))
                write(f"resource: {block.uri}{kind}, {size} bytes of binary data")
        else:
            write(f"content of unknown type {block.type!r}: {orjson.dumps(block.raw).decode()}")
    if has_structured:
        write(orjson.dumps(result.structured, option=orjson.OPT_INDENT_2).decode())


def _repeats(text: str, structured: Any) -> bool:
    """Whether ``text`` is the JSON of ``structured`` (the copy for older clients)."""
    try:
        return bool(orjson.loads(text) == structured)
    except orjson.JSONDecodeError:
        return False


def _decode(data: str, what: str) -> bytes:
    try:
        return base64.b64decode(data)
    except binascii.Error:
        raise ProtocolViolation(f"the server sent {what} as something that is not base64") from None


def _file_stem(tool: str) -> str:
    """``tool`` as a file name: only letters, digits, ``_``, ``-`` and dots, none leading."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", tool).lstrip(".") or "tool"


def _extension(mime_type: str) -> str:
    mime = mime_type.partition(";")[0].strip().lower()
    return EXTENSIONS.get(mime) or mimetypes.guess_extension(mime) or ".bin"
