"""``resources/directory/read`` over a server's skills: the direct children of one of their
folders, files with their resource metadata and sub-folders as ``inode/directory``."""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterable
from typing import Any

from .skill import Skill, mime_type
from .uri import SCHEME

DIRECTORY = "inode/directory"


def children(skills: Iterable[Skill], uri: str) -> list[dict[str, Any]] | None:
    """The children of the folder at ``uri`` (a skill's root, or a folder in it; its path
    percent-decoded, so ``my%20notes`` and ``my notes`` are one folder), sorted by URI;
    ``None`` when no skill has a folder there."""
    if not uri.startswith(SCHEME):
        return None
    try:
        wanted = urllib.parse.unquote(uri[len(SCHEME) :], errors="strict")
    except UnicodeDecodeError:  # escapes of bytes that are not UTF-8: no skill's name
        return None
    for skill in skills:
        prefix = skill.path + "/"
        if wanted != skill.path and not wanted.startswith(prefix):
            continue
        inside = wanted[len(prefix) :] if wanted != skill.path else ""
        if inside not in skill.folders():
            continue
        return _listing(skill, inside)
    return None


def _listing(skill: Skill, inside: str) -> list[dict[str, Any]]:
    start = f"{inside}/" if inside else ""
    listed: dict[str, dict[str, Any]] = {}
    for relative, data in skill.files.items():
        if not relative.startswith(start):
            continue
        head, _, rest = relative[len(start) :].partition("/")
        uri = skill.file_uri(start + head)
        if rest:
            listed[uri] = {"uri": uri, "name": head, "mimeType": DIRECTORY}
        else:
            listed[uri] = {"uri": uri, "name": head, "mimeType": mime_type(relative), "size": len(data)}
    return [listed[uri] for uri in sorted(listed)]
