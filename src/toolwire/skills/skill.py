"""A skill read from disk: a folder with a ``SKILL.md`` and any other files (the Agent Skills
format), held in memory so that what a server lists is what it serves.

:func:`load_skill` reads one folder; :func:`find_skills` the skills in a folder of them.
Both raise :class:`SkillInvalid` (a ``ValueError``) naming the file and what is wrong: no
``SKILL.md``, frontmatter that is missing or breaks the rules (:mod:`.frontmatter`), a
``name`` other than the folder's, or a skill larger than a server should serve (more than
:data:`MAX_FILES` files or :data:`MAX_BYTES` bytes).
"""

from __future__ import annotations

import mimetypes
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .frontmatter import problems, split
from .integrity import digest

SKILL_MD = "SKILL.md"
SCHEME = "skill://"
#: Limits SEP-2640 asks servers to keep to, per skill.
MAX_FILES = 512
MAX_BYTES = 16 * 1024 * 1024
_MARKDOWN = "text/markdown"


class SkillInvalid(ValueError):
    """A skill that cannot be served: the message names the file and the problem."""


@dataclass(slots=True)
class Skill:
    """One skill: its ``path`` in the server's skill namespace (``pdf-processing``,
    ``acme/billing/refunds``: the last segment is its name), its ``frontmatter`` and its
    ``files`` (path within the skill, ``/``-separated, to raw bytes; ``SKILL.md`` first)."""

    path: str
    frontmatter: dict[str, Any]
    files: dict[str, bytes] = field(repr=False)

    @property
    def name(self) -> str:
        return str(self.frontmatter["name"])

    @property
    def description(self) -> str:
        return str(self.frontmatter["description"])

    @property
    def root(self) -> str:
        """The URI of the skill's folder, ``skill://PATH`` (no trailing slash)."""
        return SCHEME + self.path

    @property
    def uri(self) -> str:
        """The URI of its ``SKILL.md``."""
        return self.file_uri(SKILL_MD)

    def file_uri(self, relative: str) -> str:
        return f"{self.root}/{relative}"

    def entry(self) -> dict[str, Any]:
        """The skill as ``skills/list`` and ``skills/get`` give it: ``uri``, ``frontmatter``
        and ``resources`` (each file's ``uri``, ``digest`` and ``size``)."""
        resources = [
            {"uri": self.file_uri(relative), "digest": digest(data), "size": len(data)}
            for relative, data in self.files.items()
        ]
        return {"uri": self.uri, "frontmatter": self.frontmatter, "resources": resources}

    def folders(self) -> set[str]:
        """Every folder of the skill, as paths within it (``""``: its root)."""
        found = {""}
        for relative in self.files:
            parts = relative.split("/")[:-1]
            found.update("/".join(parts[: depth + 1]) for depth in range(len(parts)))
        return found


def mime_type(relative: str) -> str:
    """The MIME type a skill's file is served with (markdown for ``.md``)."""
    if relative.lower().endswith(".md"):
        return _MARKDOWN
    return mimetypes.guess_type(relative)[0] or "application/octet-stream"


def load_skill(folder: str | os.PathLike[str], prefix: str = "") -> Skill:
    """The skill in ``folder``, at ``PREFIX/NAME`` in the namespace (``prefix``: folders
    separated by ``/``, none by default). :class:`SkillInvalid` as the module says."""
    root = Path(folder)
    manifest = root / SKILL_MD
    if not manifest.is_file():
        raise SkillInvalid(f"{root}: no {SKILL_MD} in it, so it is not a skill")
    raw = manifest.read_bytes()
    try:
        read = split(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise SkillInvalid(f"{manifest}: not UTF-8 text") from None
    if read is None:
        raise SkillInvalid(f"{manifest}: it must begin with YAML frontmatter between two '---' lines")
    frontmatter = read[0]
    wrong = problems(frontmatter)
    if not wrong and frontmatter["name"] != root.resolve().name:
        wrong.append(f"its name {frontmatter['name']!r} is not the name of its folder {root.resolve().name!r}")
    if wrong:
        raise SkillInvalid(f"{manifest}: {'; '.join(wrong)}")
    prefix = prefix.strip("/")
    if any(not segment or segment in (".", "..") for segment in prefix.split("/") if prefix):
        raise SkillInvalid(f"{root}: the prefix {prefix!r} is not a path of folder names")
    files = {SKILL_MD: raw, **_files(root, manifest)}
    if len(files) > MAX_FILES:
        raise SkillInvalid(f"{root}: {len(files)} files, more than the {MAX_FILES} a skill may have")
    total = sum(len(data) for data in files.values())
    if total > MAX_BYTES:
        raise SkillInvalid(f"{root}: {total} bytes, more than the {MAX_BYTES} a skill may have")
    path = f"{prefix}/{frontmatter['name']}" if prefix else str(frontmatter["name"])
    return Skill(path, frontmatter, files)


def _files(root: Path, manifest: Path) -> dict[str, bytes]:
    """The skill's other files by path within it, sorted; hidden files and folders (a
    ``.git``) are left out, and so are links that lead outside the skill."""
    found: dict[str, bytes] = {}
    top = root.resolve()
    for directory, folders, names in os.walk(root):
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        for name in sorted(names):
            file = Path(directory) / name
            if name.startswith(".") or file == manifest or not file.is_file():
                continue
            if not file.resolve().is_relative_to(top):
                continue
            found[file.relative_to(root).as_posix()] = file.read_bytes()
    return found


def find_skills(folder: str | os.PathLike[str], prefix: str = "") -> list[Skill]:
    """The skills of ``folder``: the folder itself if it has a ``SKILL.md``, else each of its
    sub-folders that has one, by name. :class:`SkillInvalid` for one that is not valid, or
    for a folder without any skill."""
    root = Path(folder)
    if not root.is_dir():
        raise SkillInvalid(f"{root}: not a folder")
    if (root / SKILL_MD).is_file():
        return [load_skill(root, prefix)]
    skills = [load_skill(sub, prefix) for sub in sorted(root.iterdir()) if (sub / SKILL_MD).is_file()]
    if not skills:
        raise SkillInvalid(f"{root}: no skill in it (a skill is a folder with a {SKILL_MD})")
    return skills
