"""Skills seen from the client (SEP-2640): listing a server's skills, getting one by URI,
and loading a skill and its files, each read verified against the skill's entry.

Nothing is read ahead of need: :meth:`SkillCalls.list_skills` and :meth:`~SkillCalls.get_skill`
fetch entries only (names, descriptions, each file's digest and size); the ``SKILL.md`` is
read by :meth:`~SkillCalls.load_skill`, a supporting file by
:meth:`~SkillCalls.read_skill_file`, when asked. A read is checked, in this order, against
the entry: the file must be listed in it, its size must be the listed size, its SHA-256 the
listed digest, and a ``SKILL.md``'s frontmatter must equal the entry's field by field. Any
difference raises :class:`SkillVerificationFailed` and the content is not returned (call
:meth:`~SkillCalls.get_skill` again for a skill that changed since it was listed). An entry
that publishes no files (``"resources": "dynamic"``) cannot be verified: its reads are only
held to the skill's folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..protocol.versions import SKILLS_EXTENSION
from ..skills.frontmatter import FrontmatterInvalid, split
from ..skills.integrity import digest
from ..skills.uri import encode_path
from .errors import ClientError, ProtocolViolation
from .types import ResourceContents, ResourceInfo

SKILL_MD = "/SKILL.md"


class SkillVerificationFailed(ClientError):
    """What a server sent for a skill is not what its entry promised (see the module)."""


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a skill as its entry lists it."""

    uri: str
    digest: str
    size: int | None = None


@dataclass(slots=True)
class SkillEntry:
    """A skill as ``skills/list`` or ``skills/get`` gives it: the ``uri`` of its
    ``SKILL.md``, its ``frontmatter``, and its ``files`` (``None``: a dynamic skill that
    lists none)."""

    uri: str
    frontmatter: dict[str, Any]
    files: list[SkillFile] | None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, entry: Any) -> SkillEntry:
        """:class:`ProtocolViolation` for an entry without a ``SKILL.md`` URI, frontmatter
        or a list of files with digests."""
        if not isinstance(entry, dict) or not isinstance(entry.get("uri"), str) or not entry["uri"].endswith(SKILL_MD):
            raise ProtocolViolation(f"a skill entry needs the uri of a SKILL.md: {entry!r}")
        frontmatter = entry.get("frontmatter")
        if not isinstance(frontmatter, dict):
            raise ProtocolViolation(f"the skill entry {entry['uri']} has no frontmatter object")
        listed = entry.get("resources")
        if listed == "dynamic":
            return cls(entry["uri"], frontmatter, None, entry)
        if not isinstance(listed, list) or not all(
            isinstance(item, dict) and isinstance(item.get("uri"), str) and isinstance(item.get("digest"), str)
            for item in listed
        ):
            raise ProtocolViolation(f"the skill entry {entry['uri']} does not list its files with their digests")
        files = [SkillFile(item["uri"], item["digest"], _size(item.get("size"))) for item in listed]
        return cls(entry["uri"], frontmatter, files, entry)

    @property
    def name(self) -> str:
        return str(self.frontmatter.get("name", ""))

    @property
    def description(self) -> str:
        return str(self.frontmatter.get("description", ""))

    @property
    def root(self) -> str:
        """The URI of the skill's folder (its ``SKILL.md``'s, without ``/SKILL.md``)."""
        return self.uri.removesuffix(SKILL_MD)

    def resolve(self, reference: str) -> str:
        """The URI of ``reference``: a URI as it is, a path relative to the skill's folder
        (``references/FORMS.md``, ``my notes.md``) under it, percent-encoded as a server
        lists it (an escape already in it, ``my%20notes.md``, is kept)."""
        return reference if "://" in reference else f"{self.root}/{encode_path(reference.lstrip('/'), escapes=True)}"

    def file(self, uri: str) -> SkillFile | None:
        """The listed file at ``uri``, or ``None``."""
        return next((listed for listed in self.files or () if listed.uri == uri), None)


@dataclass(frozen=True, slots=True)
class LoadedSkill:
    """A skill whose ``SKILL.md`` was read and verified: the whole ``text``, and its
    ``body`` (what follows the frontmatter)."""

    entry: SkillEntry
    text: str
    body: str


def _size(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


class SkillCalls:
    """The :class:`~toolwire.client.Client`'s skill methods (a mixin of it)."""

    if TYPE_CHECKING:

        @property
        def server_extensions(self) -> dict[str, dict[str, Any]]: ...

        async def request(self, method: str, params: dict[str, Any] | None = None) -> Any: ...

        async def _walk(
            self, method: str, key: str, params: dict[str, Any] | None = None
        ) -> tuple[list[dict[str, Any]], float]: ...

    async def list_skills(self) -> list[SkillEntry]:
        """Every skill the server lists, walking all pages (a listing may leave skills out:
        :meth:`get_skill` finds those by URI). Reads no skill's files. :class:`ClientError`,
        sending nothing, when the server does not offer skills."""
        self._offers_skills("skills/list")
        listed, _ = await self._walk("skills/list", "skills")
        return [SkillEntry.from_dict(entry) for entry in listed]

    async def get_skill(self, uri: str) -> SkillEntry:
        """The entry of the skill whose ``SKILL.md`` is at ``uri``, listed or not; a
        :class:`~toolwire.client.ServerError` (``-32602``) if the server serves no skill there;
        :class:`ClientError`, sending nothing, when it does not offer skills."""
        self._offers_skills("skills/get")
        result = await self.request("skills/get", {"uri": uri})
        return SkillEntry.from_dict(result.get("skill") if isinstance(result, dict) else None)

    async def load_skill(self, skill: SkillEntry | str) -> LoadedSkill:
        """Read and verify the ``SKILL.md`` of ``skill`` (an entry, or a URI whose entry is
        got first). :class:`SkillVerificationFailed` as the module says."""
        entry = skill if isinstance(skill, SkillEntry) else await self.get_skill(skill)
        data = await self._verified(entry, entry.uri)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise SkillVerificationFailed(f"{entry.uri} is not UTF-8 text") from None
        try:
            frontmatter, body = split(text)
        except FrontmatterInvalid as exc:
            raise SkillVerificationFailed(f"{entry.uri}: {exc}") from None
        differing = sorted(
            key for key in {*frontmatter, *entry.frontmatter} if frontmatter.get(key) != entry.frontmatter.get(key)
        )
        if differing:
            raise SkillVerificationFailed(
                f"the frontmatter of {entry.uri} differs from the skill's entry in {', '.join(differing)}: not loaded"
            )
        return LoadedSkill(entry, text, body)

    async def read_skill_file(self, skill: SkillEntry, reference: str) -> bytes:
        """The verified bytes of a file of ``skill``: ``reference`` is its URI or its path in
        the skill's folder. :class:`SkillVerificationFailed` as the module says."""
        return await self._verified(skill, skill.resolve(reference))

    async def read_directory(self, uri: str) -> list[ResourceInfo]:
        """The direct children of the folder at ``uri`` (``resources/directory/read``; a
        server that offers it says ``directoryRead`` in its skills settings), walking all
        pages (as every list is walked: at most ``MAX_PAGES``); sub-folders have the MIME type
        ``inode/directory``. :class:`ClientError`, sending nothing, when the server does not
        say ``directoryRead: true``."""
        settings = self._offers_skills("resources/directory/read")
        if settings.get("directoryRead") is not True:
            raise ClientError(
                "resources/directory/read was not sent: the server's skills extension does not say directoryRead: true"
            )
        listed, _ = await self._walk("resources/directory/read", "resources", {"uri": uri})
        return [ResourceInfo.from_dict(item) for item in listed]

    def _offers_skills(self, method: str) -> dict[str, Any]:
        """The settings of the server's skills extension; :class:`ClientError` naming
        ``method`` when the server does not declare it (the request is not sent)."""
        settings = self.server_extensions.get(SKILLS_EXTENSION)
        if not isinstance(settings, dict):
            raise ClientError(f"{method} was not sent: the server does not offer skills ({SKILLS_EXTENSION})")
        return settings

    async def _verified(self, entry: SkillEntry, uri: str) -> bytes:
        """The bytes at ``uri``, read and checked against ``entry``."""
        listed = entry.file(uri)
        if entry.files is not None and listed is None:
            raise SkillVerificationFailed(f"{uri} is not a file the skill {entry.uri} lists: not read")
        if entry.files is None and uri != entry.uri and not uri.startswith(entry.root + "/"):
            raise SkillVerificationFailed(f"{uri} is not in the folder of the skill {entry.uri}: not read")
        result = await self.request("resources/read", {"uri": uri})
        contents = [item for item in result.get("contents") or [] if isinstance(item, dict)]
        if len(contents) != 1:
            raise SkillVerificationFailed(f"{uri} came back as {len(contents)} parts, not one file")
        data = ResourceContents.from_dict(contents[0]).bytes()
        if listed is not None:
            if listed.size is not None and len(data) != listed.size:
                raise SkillVerificationFailed(f"{uri} is {len(data)} bytes, not the {listed.size} its skill lists")
            if digest(data) != listed.digest:
                raise SkillVerificationFailed(f"{uri} does not match the digest its skill lists")
        return data
