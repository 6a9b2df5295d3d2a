"""Skills the servers offer (SEP-2640), handed to the model the way hosts do.

At connection the host lists each server's skills (names, descriptions and each file's
digest: no file is read). The model is shown them in the description of a tool of the
host's own, ``load_skill`` (``host__load_skill`` when a server has a tool of that name),
which takes a skill's name: the host then reads its ``SKILL.md``, verified against the
listing (:mod:`toolwire.client.skills`), and the model reads the body, the server and folder
it came from, and the URIs of the skill's other files, which it reads with ``read_resource``
(verified too). Loading runs without asking: it only reads what the server published for
the model, and a skill that fails verification is not loaded (the model reads why).

Names are labels, not identifiers: a name that two skills share (on one server or two) is
offered as ``SERVER/PATH`` for each, so neither shadows the other.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..client import LoadedSkill, SkillEntry
from .model import ToolSpec

#: The name of the host's skill loader (prefixed ``host__`` when a server's tool has it).
LOAD_SKILL = "load_skill"


@dataclass(frozen=True, slots=True)
class OfferedSkill:
    """A skill as the model is offered it: ``name`` (qualified if shared), its ``server``
    and its ``entry`` from the server's listing."""

    name: str
    server: str
    entry: SkillEntry


def offered_skills(listed: dict[str, list[SkillEntry]]) -> list[OfferedSkill]:
    """The skills of every server (``listed``: each server's entries, in order), named for
    the model: by their own name, or ``SERVER/PATH`` when several skills share it."""
    counts = Counter(entry.name for entries in listed.values() for entry in entries)
    offered = []
    for server, entries in listed.items():
        for entry in entries:
            path = entry.root.partition("://")[2] or entry.name
            name = entry.name if counts[entry.name] == 1 else f"{server}/{path}"
            offered.append(OfferedSkill(name, server, entry))
    return offered


def loader_spec(name: str, skills: Sequence[OfferedSkill]) -> ToolSpec:
    """The skill loader as the model sees it: every skill's name and description."""
    lines = [
        "Load a skill: instructions for a kind of task, written by a server's authors, with files they"
        " may refer to. When a task fits a skill below, load it first and follow it. Skills:"
    ]
    lines += [f"- {skill.name}: {skill.entry.description.strip()} (server {skill.server})" for skill in skills]
    parameters = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "enum": [skill.name for skill in skills], "description": "The skill's name"}
        },
        "required": ["name"],
    }
    return ToolSpec(name, "\n".join(lines), parameters)


def loaded_text(skill: OfferedSkill, loaded: LoadedSkill, reader: str) -> str:
    """What the model reads once ``skill`` is loaded: where it comes from, its other files
    (read with the host's resource reader ``reader``), then its body."""
    entry = loaded.entry
    others = [listed.uri for listed in entry.files or () if listed.uri != entry.uri]
    lines = [f"Skill {skill.name} (server {skill.server}), its folder {entry.root}."]
    if others:
        lines.append(f"Paths in it are relative to that folder; read its files with {reader} (server {skill.server}):")
        lines += [f"- {uri}" for uri in others]
    return "\n".join(lines) + "\n\n" + loaded.body.strip()
