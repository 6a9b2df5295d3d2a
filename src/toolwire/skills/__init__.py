"""Agent skills served over MCP (SEP-2640): :class:`SkillsExtension` on servers, skills read
from folders (:func:`load_skill`, :func:`find_skills`), and the frontmatter and digest rules
clients check them with. See docs/extensions.md, "Skills"."""

from .extension import SKILLS_EXTENSION, SkillsExtension
from .integrity import digest
from .skill import Skill, SkillInvalid, find_skills, load_skill

__all__ = ["SKILLS_EXTENSION", "Skill", "SkillInvalid", "SkillsExtension", "digest", "find_skills", "load_skill"]
