"""What the commands print on stdout: results, prompt messages and resource contents as text
and JSON, their images, audio and binary contents saved to files.

A tool's result (``call``): its text blocks as they are, then ``structuredContent`` as
indented JSON (a text block that only repeats it, as servers send for older clients, is left
out). A prompt (``prompt``): each message under a ``ROLE:`` line. Images and audio are saved
as ``TOOL-N.EXT`` or ``PROMPT-N.EXT`` (N counts the saved files from 1, EXT comes from the
MIME type; a file of that name is replaced) and named on a line of their own. A resource
link or an embedded resource is a line with its URI, followed by the embedded text if any.
A resource's contents (``read``): text as it is, binary contents saved to a file named after
the URI's last part (``resource-N.EXT`` when it gives no usable name).

What a server or a model sends is untrusted: printed to a terminal it goes through
:func:`printable`, so that it cannot move the cursor, clear the screen, retitle the window,
write the clipboard, reorder or hide text. Piped elsewhere, the text is left exactly as sent. File names made
from what it sends keep only letters, digits, ``_``, ``-`` and dots, none leading.
"""

from __future__ import annotations

import base64
import binascii
import mimetypes
import os
import re
import sys
import urllib.parse
from typing import Any, TextIO

import orjson

from ..client import (
    AudioContent,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    ProtocolViolation,
    ResourceContents,
    ResourceLink,
    TextContent,
)

#: Control characters (C0 but newline and tab, DEL, C1: every escape sequence starts with
#: one) and lone surrogates (no terminal can be sent them).
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
#: Characters that are invisible or reorder text: bidirectional controls (overrides,
#: embeddings, isolates, marks), zero-width characters, other format characters (the
#: Unicode category Cf: soft hyphen, invisible operators, tags...), line and paragraph
#: separators, and the Hangul fillers, which show as blank.
INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164"
    "\ufeff\uffa0\ufff9-\ufffb\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
LINE_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
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


def printable(text: str, lines: bool = True) -> str:
    """``text`` safe to show on a terminal: control characters as U+FFFD (all but newline and
    tab when ``lines``; ``\\r\\n`` is a newline), invisible and reordering characters as their
    escape (``\\u202e``), so that they are seen rather than obeyed. The one rule for everything
    shown to a person: what models and servers send, names, questions and prompts."""
    text = CONTROL.sub("\ufffd", text.replace("\r\n", "\n")) if lines else LINE_CONTROL.sub("\ufffd", text)
    return INVISIBLE.sub(_escape, text)


def counted(count: int, noun: str) -> str:
    """``1 tool``, ``2 tools``, ``0 tools``: a count and its noun, plural unless one."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def for_stream(text: str, stream: TextIO) -> str:
    """``text`` as :func:`printable` makes it when ``stream`` is a terminal, else as it is."""
    return printable(text) if stream.isatty() else text


def write(text: str, stream: TextIO | None = None) -> None:
    """Write ``text`` and a newline to ``stream`` (stdout), made printable on a terminal."""
    stream = stream or sys.stdout
    text = for_stream(text, stream)
    stream.write(text if text.endswith("\n") else text + "\n")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def write_json(value: Any) -> None:
    """Write ``value`` as indented JSON, as :func:`write` does."""
    write(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode())


class Saver:
    """Saves the files of one answer in directory ``out`` (made if missing), each named on a
    line of stdout: ``saved PATH (MIME type, N bytes)``. A file of the same name is replaced."""

    def __init__(self, out: str, stem: str) -> None:
        self.out = out
        self.stem = _file_name(stem) or "file"
        self.count = 0
        self._names: set[str] = set()

    def save(self, data: bytes, mime_type: str | None, name: str = "") -> None:
        """Save ``data`` as ``name`` (its MIME type's extension added when it has none), or as
        ``STEM-N.EXT`` when ``name`` is empty or this answer already saved a file of that name
        (N counts the answer's files from 1). ``OSError`` when the file cannot be written."""
        self.count += 1
        extension = _extension(mime_type or "")
        if name and not os.path.splitext(name)[1]:
            name += extension
        if not name or name in self._names:
            name = f"{self.stem}-{self.count}{extension}"
        self._names.add(name)
        os.makedirs(self.out, exist_ok=True)
        path = os.path.normpath(os.path.join(self.out, name))
        with open(path, "wb") as file:
            file.write(data)
        write(f"saved {path} ({mime_type or 'no MIME type'}, {counted(len(data), 'byte')})")


def print_block(block: ContentBlock, saver: Saver) -> None:
    """Print one content block to stdout, saving images and audio with ``saver``.
    :class:`ProtocolViolation` for media that is not base64; ``OSError`` when a file cannot
    be written."""
    if isinstance(block, TextContent):
        write(block.text)
    elif isinstance(block, ImageContent | AudioContent):
        kind = "image" if isinstance(block, ImageContent) else "audio"
        saver.save(_decode(block.data, f"the {kind} #{saver.count + 1}"), block.mime_type)
    elif isinstance(block, ResourceLink):
        name = block.title or block.name
        write(f"resource link: {block.uri}" + (f" ({name})" if name else ""))
    elif isinstance(block, EmbeddedResource):
        kind = f" ({block.mime_type})" if block.mime_type else ""
        if block.text is not None:
            write(f"resource: {block.uri}{kind}")
            write(block.text)
        else:
            write(f"resource: {block.uri}{kind}")
            saver.save(_decode(block.blob or "", f"the resource {block.uri}"), block.mime_type, _uri_name(block.uri))
    else:
        write(f"content of unknown type {block.type!r}: {orjson.dumps(block.raw).decode()}")


def print_result(result: CallToolResult, tool: str, out: str) -> None:
    """Print a successful result of ``tool`` to stdout, saving its media in directory ``out``;
    the structured content too, only when it adds something to the blocks. Raises as
    :func:`print_block`."""
    has_structured = "structuredContent" in result.raw
    saver = Saver(out, tool)
    for block in result.content:
        if not (has_structured and isinstance(block, TextContent) and _repeats(block.text, result.structured)):
            print_block(block, saver)
    if has_structured and _adds(result):
        write_json(result.structured)


def _adds(result: CallToolResult) -> bool:
    """Whether the structured content says more than the blocks printed: not when it is the
    blocks themselves (media that was saved, not to be dumped as base64), nor when it only
    wraps (``{"result": ...}``) a value a printed text already is, as legacy versions wrap
    non-object values and some frameworks wrap text. A text block that is its JSON was left
    out, so then it is printed."""
    structured = result.structured
    blocks = [block.raw for block in result.content]
    if structured in (blocks, {"result": blocks}):
        return False
    if isinstance(structured, dict) and set(structured) == {"result"}:
        wrapped = structured["result"]
        texts = [block.text for block in result.content if isinstance(block, TextContent)]
        if any(text == wrapped or _repeats(text, wrapped) for text in texts):
            return False
    return True


def print_messages(result: GetPromptResult, prompt: str, out: str) -> None:
    """Print the messages of ``prompt``, each as a ``ROLE:`` line and its content, saving
    their media in directory ``out``; raises as :func:`print_block`."""
    saver = Saver(out, prompt)
    for message in result.messages:
        write(f"{message.role}:")
        print_block(message.content, saver)


def print_contents(contents: list[ResourceContents], out: str) -> None:
    """Print a resource's text contents, and save its binary ones in directory ``out``; when
    there are several entries, each follows a line ``resource: URI (MIME type)``.
    :class:`ProtocolViolation` for a blob that is not base64; ``OSError`` when a file cannot
    be written."""
    saver = Saver(out, "resource")
    for entry in contents:
        if len(contents) > 1:
            write(f"resource: {entry.uri}" + (f" ({entry.mime_type})" if entry.mime_type else ""))
        if entry.blob is None:
            write(entry.text or "")
        else:
            data = _decode(entry.blob, f"the contents of {entry.uri}")
            saver.save(data, entry.mime_type, _uri_name(entry.uri))


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


def _uri_name(uri: str) -> str:
    """The last part of ``uri`` (after its scheme, before its query), percent-decoded, as a
    file name: ``logo`` for ``library://logo``, ``q3.pdf`` for ``file:///r/q3.pdf``; empty
    when there is none."""
    path = SCHEME.sub("", uri.partition("#")[0].partition("?")[0]).rstrip("/")
    return _file_name(urllib.parse.unquote(path.rpartition("/")[2]))


def _file_name(text: str) -> str:
    """``text`` with only letters, digits, ``_``, ``-`` and dots, none leading."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text).lstrip(".")


def _extension(mime_type: str) -> str:
    mime = mime_type.partition(";")[0].strip().lower()
    return EXTENSIONS.get(mime) or mimetypes.guess_extension(mime) or ".bin"
