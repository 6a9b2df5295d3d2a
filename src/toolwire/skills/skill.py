"""A skill read from disk: a folder with a ``SKILL.md`` and any other files (the Agent Skills
format), held in memory so that what a server lists is what it serves.

:func:`load_skill` reads one folder; :func:`find_skills` the skills in a folder of them.
Both raise :class:`SkillInvalid` (a ``ValueError``) naming the file and what is wrong: no
``SKILL.md``, frontmatter that is missing, cannot be read or breaks the rules
(:mod:`.frontmatter`), a ``name`` other than the folder's, a file name with a control
character, or a skill larger than a server should serve (more than :data:`MAX_FILES` files
or :data:`MAX_BYTES` bytes: files are measured before they are read, and read in pieces
never past the limit). Hidden files and folders and Python's caches are not part of a
skill. A file's URI is its path percent-encoded segment by segment (:mod:`.uri`).
"""

from __future__ import annotations

import mimetypes
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .frontmatter import FrontmatterInvalid, problems, split
from .integrity import digest
from .uri import SCHEME, encode_path

SKILL_MD = "SKILL.md"
#: Limits SEP-2640 asks servers to keep to, per skill.
MAX_FILES = 512
MAX_BYTES = 16 * 1024 * 1024
#: Folders that are not part of a skill, besides hidden ones: Python's caches (their files,
#: :data:`CACHE_SUFFIXES`, are left out wherever they are).
CACHES = frozenset({"__pycache__"})
CACHE_SUFFIXES = (".pyc", ".pyo")
_MARKDOWN = "text/markdown"
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


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
        return SCHEME + encode_path(self.path)

    @property
    def uri(self) -> str:
        """The URI of its ``SKILL.md``."""
        return self.file_uri(SKILL_MD)

    def file_uri(self, relative: str) -> str:
        """The URI of the file or folder at ``relative`` in the skill (percent-encoded)."""
        return f"{self.root}/{encode_path(relative)}"

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
    raw = _read(manifest, MAX_BYTES)
    try:
        frontmatter = split(raw.decode("utf-8"))[0]
    except UnicodeDecodeError:
        raise SkillInvalid(f"{manifest}: not UTF-8 text") from None
    except FrontmatterInvalid as exc:
        raise SkillInvalid(f"{manifest}: {exc}") from None
    wrong = problems(frontmatter)
    if not wrong and frontmatter["name"] != root.resolve().name:
        wrong.append(f"its name {frontmatter['name']!r} is not the name of its folder {root.resolve().name!r}")
    if wrong:
        raise SkillInvalid(f"{manifest}: {'; '.join(wrong)}")
    prefix = prefix.strip("/")
    segments = prefix.split("/") if prefix else []
    if any(not segment or segment in (".", "..") or _CONTROL.search(segment) for segment in segments):
        raise SkillInvalid(f"{root}: the prefix {prefix!r} is not a path of folder names")
    others = _others(root, manifest)
    total = len(raw) + sum(size for _, size in others.values())
    if total > MAX_BYTES:
        raise SkillInvalid(f"{root}: {total} bytes in all, more than the {MAX_BYTES} bytes a skill may have")
    files, used = {SKILL_MD: raw}, len(raw)
    for relative, (file, _) in others.items():
        files[relative] = _read(file, MAX_BYTES - used)  # a file that grew since it was measured stops here
        used += len(files[relative])
    path = f"{prefix}/{frontmatter['name']}" if prefix else str(frontmatter["name"])
    return Skill(path, frontmatter, files)


def _others(root: Path, manifest: Path) -> dict[str, tuple[Path, int]]:
    """The skill's other files by path within it, sorted, with their sizes (none is read);
    left out: hidden files and folders (a ``.git``), caches (:data:`CACHES`), and links
    that lead outside the skill. :class:`SkillInvalid` for a name with a control character,
    or for more than :data:`MAX_FILES` files."""
    found: dict[str, tuple[Path, int]] = {}
    top = root.resolve()
    for directory, folders, names in os.walk(root):
        folders[:] = sorted(name for name in folders if not _left_out(name, folder=True))
        for name in sorted(names):
            file = Path(directory) / name
            if _left_out(name, folder=False) or file == manifest or not file.is_file():
                continue
            if not file.resolve().is_relative_to(top):
                continue
            relative = file.relative_to(root).as_posix()
            if _CONTROL.search(relative):
                raise SkillInvalid(f"{root}: the name {relative!r} has a control character (a newline, an escape)")
            found[relative] = (file, file.stat().st_size)
            if len(found) + 1 > MAX_FILES:
                raise SkillInvalid(f"{root}: more than the {MAX_FILES} files a skill may have")
    return found


def _left_out(name: str, folder: bool) -> bool:
    """Whether a file or folder of this name is not part of a skill (see :data:`CACHES`)."""
    return name.startswith(".") or (name in CACHES if folder else name.endswith(CACHE_SUFFIXES))


def _read(file: Path, limit: int) -> bytes:
    """The bytes of ``file``, read in pieces and never more than ``limit`` of them:
    :class:`SkillInvalid` if it has more (the skill it is part of would be too large)."""
    pieces: list[bytes] = []
    left = limit + 1
    with file.open("rb") as stream:
        while left > 0 and (piece := stream.read(min(left, 1 << 16))):
            pieces.append(piece)
            left -= len(piece)
    if left <= 0:
        raise SkillInvalid(f"{file}: with it the skill has more than the {MAX_BYTES} bytes a skill may have")
    return b"".join(pieces)


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
