"""Agent skills served over MCP (SEP-2640): :class:`SkillsExtension` on servers, skills read
from folders (:func:`load_skill`, :func:`find_skills`), and the frontmatter and digest rules
clients check them with. See docs/extensions.md, "Skills".

The extension and the loading of skills from folders are imported when first named, so that
a client (which reads frontmatter and digests from here) loads none of the server's modules."""

from typing import TYPE_CHECKING, Any

from ..protocol.versions import SKILLS_EXTENSION
from .integrity import digest

if TYPE_CHECKING:
    from .extension import SkillsExtension
    from .skill import Skill, SkillInvalid, find_skills, load_skill

_LOADING = frozenset({"Skill", "SkillInvalid", "find_skills", "load_skill"})


def __getattr__(name: str) -> Any:
    if name == "SkillsExtension":
        from .extension import SkillsExtension

        return SkillsExtension
    if name in _LOADING:
        from . import skill

        return getattr(skill, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["SKILLS_EXTENSION", "Skill", "SkillInvalid", "SkillsExtension", "digest", "find_skills", "load_skill"]
