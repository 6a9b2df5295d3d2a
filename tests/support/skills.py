"""Skill folders for the tests, written into a temporary folder as a test needs them."""

from __future__ import annotations

from pathlib import Path


def write_skill(
    parent: Path, name: str, description: str = "Does one thing well", files: dict[str, str] | None = None
) -> Path:
    """The skill folder ``parent/name``: its SKILL.md (body ``The body of NAME.``) and
    ``files`` (path within the folder to text); returns the folder."""
    folder = parent / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n\nThe body of {name}.\n")
    for relative, text in (files or {}).items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder
