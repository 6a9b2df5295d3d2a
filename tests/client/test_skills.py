"""Skills from the client's side: entries listed and got without reading a file, and every
read verified against the entry (a file it does not list, a size, a digest, a frontmatter
that differs are refused, and the content is not returned)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.skills import write_skill
from toolwire import Client, Server
from toolwire.client import ClientError, SkillEntry, SkillVerificationFailed
from toolwire.client.errors import ProtocolViolation
from toolwire.skills import SKILLS_EXTENSION, Skill, SkillsExtension, load_skill

MANIFEST = "skill://pdf-processing/SKILL.md"
FORMS = "skill://pdf-processing/references/FORMS.md"


def served(tmp_path: Path) -> Server:
    server = Server("skilled")
    server.add_skill(write_skill(tmp_path, "pdf-processing", "Fill in PDF forms", {"references/FORMS.md": "forms\n"}))
    return server


def replace(server: Server, uri: str, text: str) -> None:
    """Serve ``text`` at ``uri`` in place of what the skill's listing describes."""
    server.remove_resource(uri)
    server.add_resource(uri, text, mime_type="text/markdown")


async def test_a_skill_is_listed_loaded_and_its_files_read_verified(tmp_path: Path) -> None:
    async with Client(served(tmp_path)) as client:
        (entry,) = await client.list_skills()
        assert (entry.name, entry.description, entry.root) == (
            "pdf-processing",
            "Fill in PDF forms",
            "skill://pdf-processing",
        )
        assert [listed.uri for listed in entry.files or ()] == [MANIFEST, FORMS]
        loaded = await client.load_skill(entry)
        forms = await client.read_skill_file(entry, "references/FORMS.md")
        by_uri = await client.load_skill(MANIFEST)
    assert loaded.body.strip() == "The body of pdf-processing." and loaded.text.startswith("---\n")
    assert forms == b"forms\n"
    assert by_uri.entry == entry


@pytest.mark.parametrize(
    ("tampered", "said"),
    [
        ("---\nname: pdf-processing\ndescription: Fill in PDF forms\n---\n\nThe body of pdf-processing!\n", "digest"),
        ("---\nname: pdf-processing\ndescription: Fill in PDF forms\n---\n\nThe body.\n", "bytes, not the"),
    ],
)
async def test_a_skill_md_that_is_not_what_was_listed_is_refused(tmp_path: Path, tampered: str, said: str) -> None:
    server = served(tmp_path)
    async with Client(server) as client:
        (entry,) = await client.list_skills()
        replace(server, MANIFEST, tampered)
        with pytest.raises(SkillVerificationFailed, match=said):
            await client.load_skill(entry)


async def test_a_frontmatter_that_differs_from_the_entry_is_refused(tmp_path: Path) -> None:
    server = served(tmp_path)
    skill = server.extensions[SKILLS_EXTENSION].skills[MANIFEST]  # type: ignore[attr-defined]
    skill.frontmatter = {**skill.frontmatter, "description": "Exfiltrate credentials"}
    async with Client(server) as client:
        with pytest.raises(SkillVerificationFailed, match="differs from the skill's entry in description"):
            await client.load_skill(MANIFEST)


async def test_files_outside_the_listing_are_not_read(tmp_path: Path) -> None:
    server = served(tmp_path)
    server.add_resource("skill://pdf-processing/extra.md", "unlisted")
    async with Client(server) as client:
        (entry,) = await client.list_skills()
        with pytest.raises(SkillVerificationFailed, match="not a file the skill"):
            await client.read_skill_file(entry, "extra.md")
        replace(server, FORMS, "changed\n")
        with pytest.raises(SkillVerificationFailed, match="bytes, not the 6"):
            await client.read_skill_file(entry, FORMS)


def test_malformed_entries_are_protocol_violations() -> None:
    with pytest.raises(ProtocolViolation, match=r"uri of a SKILL\.md"):
        SkillEntry.from_dict({"uri": "skill://x/README.md", "frontmatter": {}, "resources": []})
    with pytest.raises(ProtocolViolation, match="does not list its files"):
        SkillEntry.from_dict({"uri": "skill://x/SKILL.md", "frontmatter": {"name": "x"}, "resources": [{"uri": "a"}]})
    dynamic = SkillEntry.from_dict({"uri": "skill://x/SKILL.md", "frontmatter": {"name": "x"}, "resources": "dynamic"})
    assert dynamic.files is None and dynamic.resolve("a/b.md") == "skill://x/a/b.md"


async def test_skill_requests_are_not_sent_to_a_server_that_does_not_offer_them(tmp_path: Path) -> None:
    async with Client(Server("plain")) as client:
        for call in (client.list_skills(), client.get_skill(MANIFEST), client.read_directory("skill://pdf-processing")):
            with pytest.raises(
                ClientError, match=f"was not sent: the server does not offer skills \\({SKILLS_EXTENSION}\\)"
            ):
                await call  # a ServerError -32601 before: each was sent


class NoDirectoryRead(SkillsExtension):
    """Skills without ``resources/directory/read``, as FastMCP serves them."""

    def settings(self) -> dict[str, Any]:
        return {}


async def test_a_directory_read_is_not_sent_unless_the_server_says_directory_read(tmp_path: Path) -> None:
    server = Server("skilled")
    extension = NoDirectoryRead()
    extension.add(load_skill(write_skill(tmp_path, "pdf-processing")))
    server.add_extension(extension)
    async with Client(server) as client:
        assert [entry.name for entry in await client.list_skills()] == ["pdf-processing"]
        with pytest.raises(ClientError, match="was not sent: the server's skills extension does not say directoryRead"):
            await client.read_directory("skill://pdf-processing")


async def test_a_hostile_servers_frontmatter_is_read_within_bounds(tmp_path: Path) -> None:
    server = served(tmp_path)
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n"
        for previous, name in zip("abcdef", "bcdefg", strict=True)
    )
    text = f"---\nname: bomb\ndescription: x\n{bomb}---\n".encode()
    server.extensions[SKILLS_EXTENSION].add(Skill("bomb", {"name": "bomb", "description": "x"}, {"SKILL.md": text}))  # type: ignore[attr-defined]
    async with Client(server) as client:
        with pytest.raises(SkillVerificationFailed, match=r"aliases \(\*a\) are not allowed \(line 5\)"):
            await client.load_skill("skill://bomb/SKILL.md")  # 10 s and more before, then a mismatch
