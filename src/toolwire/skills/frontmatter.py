"""A ``SKILL.md``'s YAML frontmatter (the Agent Skills format): reading it, and the rules it
must follow.

A ``SKILL.md`` begins with a block between two ``---`` lines; the YAML in it is a mapping
with at least ``name`` (1 to 64 characters of lowercase letters, digits and hyphens, no
hyphen first, last or twice in a row) and ``description`` (1 to 1024 characters), and
``metadata``, if any, maps strings to strings. :func:`split` reads the block within bounds
(:mod:`.yaml_json`: no aliases, little nesting, only what JSON carries), for servers and for
clients comparing what they read; :func:`problems` says what is wrong with one, for servers
refusing a skill. Reading YAML needs PyYAML (the ``skills`` extra).
"""

from __future__ import annotations

import re
from typing import Any

from .yaml_json import YAMLRefused, load

#: The Agent Skills naming rule for a skill's ``name``.
NAME = re.compile(r"(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
MAX_DESCRIPTION = 1024
#: Characters of frontmatter read at most.
MAX_FRONTMATTER = 64 * 1024
_BLOCK = re.compile(r"---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)


class FrontmatterInvalid(ValueError):
    """A ``SKILL.md`` whose frontmatter cannot be read: the message says why."""


def split(text: str) -> tuple[dict[str, Any], str]:
    """The frontmatter of ``text`` as JSON values, and the body after it (a leading BOM is
    allowed). :class:`FrontmatterInvalid` saying why when ``text`` does not begin with a
    ``---`` block of at most :data:`MAX_FRONTMATTER` characters whose YAML is a mapping read
    within the bounds of :mod:`.yaml_json`."""
    text = text.removeprefix("\ufeff")
    match = _BLOCK.match(text[: MAX_FRONTMATTER + 16])
    if match is None:
        raise FrontmatterInvalid(
            f"it must begin with YAML frontmatter between two '---' lines (at most {MAX_FRONTMATTER} characters)"
        )
    try:
        data = load(match.group(1), first_line=2)
    except YAMLRefused as exc:
        raise FrontmatterInvalid(f"its frontmatter is refused: {exc}") from None
    if not isinstance(data, dict):
        raise FrontmatterInvalid("its frontmatter must be a YAML mapping (KEY: VALUE lines)")
    return data, text[match.end() :]


def problems(frontmatter: dict[str, Any]) -> list[str]:
    """What is wrong with ``frontmatter`` under the Agent Skills rules (empty: nothing)."""
    found = []
    name = frontmatter.get("name")
    if not isinstance(name, str) or not name:
        found.append("it has no name")
    elif not NAME.fullmatch(name):
        found.append(
            f"the name {name!r} is not 1-64 lowercase letters, digits and hyphens"
            " (no hyphen first, last or twice in a row)"
        )
    description = frontmatter.get("description")
    if not isinstance(description, str) or not description.strip():
        found.append("it has no description")
    elif len(description) > MAX_DESCRIPTION:
        found.append(f"its description is {len(description)} characters long, more than {MAX_DESCRIPTION}")
    metadata = frontmatter.get("metadata")
    if metadata is not None and (
        not isinstance(metadata, dict) or not all(isinstance(value, str) for value in metadata.values())
    ):
        found.append("its metadata is not a mapping of strings to strings (quote numbers and booleans)")
    return found
