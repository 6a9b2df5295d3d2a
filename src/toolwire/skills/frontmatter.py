"""A ``SKILL.md``'s YAML frontmatter (the Agent Skills format): reading it, and the rules it
must follow.

A ``SKILL.md`` begins with a block between two ``---`` lines; the YAML in it is a mapping
with at least ``name`` (1 to 64 characters of lowercase letters, digits and hyphens, no
hyphen first, last or twice in a row) and ``description`` (1 to 1024 characters).
:func:`split` reads the block leniently (``None`` when there is none, for clients comparing
what they read); :func:`check` says what is wrong with one, for servers refusing a skill.
Reading YAML needs PyYAML (the ``skills`` extra).
"""

from __future__ import annotations

import re
from typing import Any

from ..extras import needs

#: The Agent Skills naming rule for a skill's ``name``.
NAME = re.compile(r"(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
MAX_DESCRIPTION = 1024
_BLOCK = re.compile(r"---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)


def split(text: str) -> tuple[dict[str, Any], str] | None:
    """The frontmatter of ``text`` as a dict, and the body after it; ``None`` when ``text``
    does not begin with a ``---`` block whose YAML is a mapping (a leading BOM is allowed)."""
    match = _BLOCK.match(text.removeprefix("\ufeff"))
    if match is None:
        return None
    with needs("skills", "reading a SKILL.md"):
        import yaml

    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict):
        return None
    return _plain(data), text.removeprefix("\ufeff")[match.end() :]


def _plain(value: Any) -> Any:
    """``value`` as JSON has it: dates and other YAML scalars become strings."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


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
    if metadata is not None and not isinstance(metadata, dict):
        found.append("its metadata is not a mapping")
    return found
