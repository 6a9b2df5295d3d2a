"""``resources/directory/read`` over a server's skills: the direct children of one of their
folders, files with their resource metadata and sub-folders as ``inode/directory``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .skill import Skill, mime_type

DIRECTORY = "inode/directory"


def children(skills: Iterable[Skill], uri: str) -> list[dict[str, Any]] | None:
    """The children of the folder at ``uri`` (a skill's root, or a folder in it), sorted by
    URI; ``None`` when no skill has a folder there."""
    for skill in skills:
        prefix = skill.root + "/"
        if uri != skill.root and not uri.startswith(prefix):
            continue
        inside = uri[len(prefix) :] if uri != skill.root else ""
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
