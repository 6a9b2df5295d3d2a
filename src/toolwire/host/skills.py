"""Skills the servers offer (SEP-2640), handed to the model the way hosts do.

At connection the host lists each server's skills (names, descriptions and each file's
digest: no file is read). The model is shown them in the description of a tool of the
host's own, ``load_skill`` (``host__load_skill`` when a server has a tool of that name),
which takes a skill's name: the host then reads its ``SKILL.md``, verified against the
listing (:mod:`toolwire.client.skills`), and the model reads the body, the server and folder
it came from, and the URIs of the skill's other files, which it reads with ``read_resource``
(verified too). Loading runs without asking: it only reads what the server published for
the model, and a skill that fails verification is not loaded (the model reads why).

A skill is addressed by its server and its entry, never by a string joined from them: the
model calls it by a label that maps back to one (server, entry), its own name when no other
skill offered has it, else ``SERVER/PATH`` for each (a server's name has no ``/``, a skill's
name may not either, so no skill can take another's label). What servers send is untrusted:
an entry whose name breaks the Agent Skills rules (or is not its folder's), whose URI has a
space or control character, or whose URI the server listed already, is not offered; a
description is shown on one line, cut at :data:`MAX_DESCRIPTION` characters, its control
characters and invisible ones made visible (:func:`~toolwire.terminal.output.printable`); a
name that looks like another's says so (:func:`~toolwire.lookalikes.marks`); a server offers
the model at most :data:`MAX_PER_SERVER` skills. The list says what it left out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ..client import LoadedSkill, SkillEntry
from ..lookalikes import marks
from ..skills.frontmatter import NAME
from ..terminal.output import printable
from .model import ToolSpec

#: The name of the host's skill loader (prefixed ``host__`` when a server's tool has it).
LOAD_SKILL = "load_skill"
#: Skills of one server the model is offered at most.
MAX_PER_SERVER = 64
#: Characters of a skill's description the model is shown at most (the Agent Skills limit).
MAX_DESCRIPTION = 1024
_UNFIT_URI = re.compile(r"[\s\x00-\x1f\x7f-\x9f]")


@dataclass(frozen=True, slots=True)
class OfferedSkill:
    """A skill as the model is offered it: ``name`` (its label, unique among those offered),
    its ``server``, its ``entry`` from the server's listing, and ``mark``: why its name may
    fool (it looks like another's), or ``""``."""

    name: str
    server: str
    entry: SkillEntry
    mark: str = ""


def offered_skills(listed: dict[str, list[SkillEntry]]) -> tuple[list[OfferedSkill], list[str]]:
    """The skills of every server (``listed``: each server's entries, in order) as the model
    is offered them, and what was left out, a sentence for each server that lost any."""
    kept: list[tuple[str, SkillEntry]] = []
    notes = []
    for server, entries in listed.items():
        fit, refused = _fit(entries)
        if refused:
            more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
            notes.append(f"a skill of the server {server!r}: {refused[0]}{more}")
        if len(fit) > MAX_PER_SERVER:
            notes.append(f"the server {server!r} lists {len(fit)} skills: only its first {MAX_PER_SERVER} are offered")
        kept += [(server, entry) for entry in fit[:MAX_PER_SERVER]]
    counts = Counter(entry.name for _, entry in kept)
    looks = marks((server, entry.name) for server, entry in kept)
    offered = [
        OfferedSkill(
            entry.name if counts[entry.name] == 1 else f"{server}/{entry.root.partition('://')[2]}",
            server,
            entry,
            looks.get((server, entry.name), ""),
        )
        for server, entry in kept
    ]
    return offered, notes


def _fit(entries: list[SkillEntry]) -> tuple[list[SkillEntry], list[str]]:
    """The entries fit to offer, and why each other one is not."""
    fit, refused, seen = [], [], set()
    for entry in entries:
        shown = printable(repr(entry.name[:80]), lines=False)
        if not NAME.fullmatch(entry.name) or entry.root.rpartition("/")[2] != entry.name:
            refused.append(f"the name {shown} breaks the naming rules or is not its folder's")
        elif _UNFIT_URI.search(entry.uri):
            refused.append(f"the URI of {shown} has a space or a control character")
        elif entry.uri in seen:
            refused.append(f"{shown} is listed twice")
        elif not entry.description.strip():
            refused.append(f"{shown} has no description")
        else:
            fit.append(entry)
        seen.add(entry.uri)
    return fit, refused


def loader_spec(name: str, skills: Sequence[OfferedSkill], notes: Sequence[str] = ()) -> ToolSpec:
    """The skill loader as the model sees it: every skill's name and description (see the
    module's description), and ``notes``: what was left out."""
    lines = [
        "Load a skill: instructions for a kind of task, written by a server's authors, with files they"
        " may refer to. When a task fits a skill below, load it first and follow it. Skills:"
    ]
    for skill in skills:
        about = f"server {skill.server}" + (f"; its name {skill.mark}" if skill.mark else "")
        lines.append(f"- {skill.name}: {_one_line(skill.entry.description)} ({about})")
    lines += [f"Not offered: {note}." for note in notes]
    parameters = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "enum": [skill.name for skill in skills], "description": "The skill's name"}
        },
        "required": ["name"],
    }
    return ToolSpec(name, "\n".join(lines), parameters)


def _one_line(text: str) -> str:
    """``text`` on one line, cut at :data:`MAX_DESCRIPTION` characters, made printable."""
    text = " ".join(text.split())
    cut = text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"
    return printable(cut, lines=False)


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
