"""Skills as an extension of the server (SEP-2640, ``io.modelcontextprotocol/skills``).

A server offers it from its first skill (:meth:`Server.add_skill
<toolwire.server.server.Server.add_skill>`). What it adds:

==============================  ===============================================================
capabilities                    ``extensions["io.modelcontextprotocol/skills"]``:
                                ``{"directoryRead": true}``
resources                       every file of every skill, ``skill://PATH/FILE`` (a
                                ``SKILL.md`` named and described by its frontmatter)
``skills/list``                 the skills' entries (``uri``, ``frontmatter``, ``resources``
                                with each file's ``digest`` and ``size``), :data:`PAGE` a
                                page; caching hints in 2026-07-28
``skills/get``                  one entry by its ``SKILL.md``'s URI
``resources/directory/read``    the children of a skill's folder; caching hints in 2026-07-28
==============================  ===============================================================

No request needs to declare the extension (its methods answer every client, as the
conformance suite expects). Errors are ``-32602``: a ``uri`` or ``cursor`` that is not a
string, a cursor the server did not hand out, a URI that is no skill's ``SKILL.md``
(``skills/get``, with ``data.uri``) or no folder of a skill (``resources/directory/read``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..protocol import tokens
from ..protocol.errors import INVALID_PARAMS, ProtocolError
from ..protocol.versions import SKILLS_EXTENSION
from ..server.extensions import Extension, MethodCall, method
from ..server.offering import withdraw
from .directory import children
from .skill import SKILL_MD, Skill, mime_type

if TYPE_CHECKING:
    from ..server.server import Server

#: Skills per page of ``skills/list``.
PAGE = 50


class SkillsExtension(Extension):
    """The skills a server serves (see the module's documentation)."""

    id = SKILLS_EXTENSION

    def __init__(self) -> None:
        self.skills: dict[str, Skill] = {}
        #: The skills of the servers mounted here, by mount prefix (see :meth:`mount_into`).
        self.mounted_skills: dict[str, SkillsExtension] = {}
        self._server: Server | None = None

    def settings(self) -> dict[str, Any]:
        return {"directoryRead": True}

    def install(self, server: Server) -> None:
        super().install(server)
        self._server = server
        for skill in self.skills.values():
            _serve_files(server, skill)

    def mount_into(self, server: Server, prefix: str) -> Callable[[], None]:
        """A server mounting this one's under ``prefix`` lists its skills too, each at
        ``PREFIX/PATH`` (where the mount serves the files: ``skill://PREFIX/PATH/FILE``),
        beside its own and other mounts' (it offers the extension from the first). Returns
        how to take them out again, withdrawing the extension when nothing is left in it."""
        extension = skills_of(server)
        extension.mounted_skills[prefix] = self

        def leave() -> None:
            extension.mounted_skills.pop(prefix, None)
            if not extension.skills and not extension.mounted_skills:
                withdraw(server, self.id)

        return leave

    def all(self) -> dict[str, Skill]:
        """Every skill served here, its own and the mounted servers', by ``SKILL.md`` URI."""
        if not self.mounted_skills:
            return self.skills
        every = dict(self.skills)
        for prefix, mounted in self.mounted_skills.items():
            for skill in mounted.all().values():
                moved = Skill(f"{prefix}/{skill.path}", skill.frontmatter, skill.files)
                every.setdefault(moved.uri, moved)
        return every

    def add(self, skill: Skill) -> Skill:
        """Serve ``skill``; ``ValueError`` if a skill is served at its URI already."""
        if skill.uri in self.skills:
            raise ValueError(f"a skill is served at {skill.uri} already")
        if self._server is not None:
            _serve_files(self._server, skill)
        self.skills[skill.uri] = skill
        return skill

    def remove(self, uri: str) -> Skill:
        """Stop serving the skill at ``uri`` (its files too); ``KeyError`` if none is served there."""
        skill = self.skills.pop(uri)
        if self._server is not None:
            for relative in skill.files:
                self._server.remove_resource(skill.file_uri(relative))
        return skill

    @method("skills/list", declared=False)
    def list_skills(self, call: MethodCall) -> dict[str, Any]:
        skills = self.all()
        start = _cursor(call.params.get("cursor"), len(skills))
        listed = list(skills.values())[start : start + PAGE]
        result: dict[str, Any] = {"skills": [skill.entry() for skill in listed]}
        if start + PAGE < len(skills):
            result["nextCursor"] = tokens.offset_cursor("skills", start + PAGE)
        return call.cacheable(result)

    @method("skills/get", declared=False)
    def get_skill(self, call: MethodCall) -> dict[str, Any]:
        uri = _uri(call.params)
        skill = self.all().get(uri)
        if skill is None:
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: no skill at {uri}", {"uri": uri})
        return call.cacheable({"skill": skill.entry()})

    @method("resources/directory/read", declared=False)
    def read_directory(self, call: MethodCall) -> dict[str, Any]:
        uri = _uri(call.params)
        _cursor(call.params.get("cursor"), 0, "resources/directory/read")
        listed = children(self.all().values(), uri)
        if listed is None:
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: {uri} is not a directory", {"uri": uri})
        return call.cacheable({"resources": listed})


def skills_of(server: Server) -> SkillsExtension:
    """The skills extension ``server`` offers, offering one first if it offers none;
    ``TypeError`` if it offers another object under the identifier."""
    extension = server.extensions.get(SKILLS_EXTENSION)
    if extension is None:
        extension = server.add_extension(SkillsExtension())
    if not isinstance(extension, SkillsExtension):
        raise TypeError(f"this server offers {SKILLS_EXTENSION} through {extension!r}, not toolwire's SkillsExtension")
    return extension


def _serve_files(server: Server, skill: Skill) -> None:
    """Register each file of ``skill`` as a resource of ``server``."""
    for relative, data in skill.files.items():
        try:
            value: str | bytes = data.decode("utf-8")
        except UnicodeDecodeError:
            value = data
        if relative == SKILL_MD:
            options = {"name": skill.name, "description": skill.description}
        else:
            options = {"name": f"{skill.path}/{relative}", "description": f"A file of the skill {skill.name}"}
        server.add_resource(skill.file_uri(relative), value, mime_type=mime_type(relative), size=len(data), **options)


def _uri(params: dict[str, Any]) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str):
        raise ProtocolError(INVALID_PARAMS, 'Invalid params: "uri" must be a string')
    return uri


def _cursor(cursor: Any, count: int, method: str = "skills/list") -> int:
    """Where a page starts: 0 without a cursor; ``-32602`` for one not handed out (see
    :func:`toolwire.protocol.tokens.read_offset`)."""
    if cursor is None:
        return 0
    start = tokens.read_offset(cursor, "skills")
    if start is None or start >= count:
        raise ProtocolError(INVALID_PARAMS, "Invalid params: " + tokens.invalid_cursor(cursor, method))
    return start
