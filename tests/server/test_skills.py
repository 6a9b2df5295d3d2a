"""The skills extension (SEP-2640) on a server: its capability, skills/list and skills/get in
both eras (caching hints in 2026-07-28), the skills' files as resources, directory reads, the
errors, and `toolwire run --skills` over stdio and HTTP."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import LEGACY, MODERN
from tests.support.httpserve import toolwire_http
from tests.support.skills import write_skill
from toolwire import Client, Server
from toolwire.client import ServerError
from toolwire.protocol.tokens import offset_cursor
from toolwire.skills import SKILLS_EXTENSION, digest
from toolwire.skills import extension as extension_module

SERVER = str(Path(__file__).parents[1] / "servers" / "skills.py")


def skilled(folder: Path) -> Server:
    write_skill(folder, "pdf-processing", "Fill in PDF forms", {"references/FORMS.md": "forms\n", "logo.png": ""})
    (folder / "pdf-processing" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\xff")
    write_skill(folder, "git-workflow", "Branch and commit the team's way")
    server = Server("skilled")
    server.add_skills(folder)
    return server


@pytest.mark.parametrize("version", [LEGACY[-1], MODERN])
async def test_skills_are_listed_got_and_read_in_both_eras(tmp_path: Path, version: str) -> None:
    server = skilled(tmp_path)
    async with Client(server, protocol=version) as client:
        assert client.server_extensions == {SKILLS_EXTENSION: {"directoryRead": True}}
        assert "resources" in client.capabilities
        listed = await client.request("skills/list", {})
        got = await client.request("skills/get", {"uri": "skill://pdf-processing/SKILL.md"})
        resources = {resource.uri: resource for resource in await client.list_resources()}
        logo = await client.read_resource("skill://pdf-processing/logo.png")
    assert [entry["uri"] for entry in listed["skills"]] == [
        "skill://git-workflow/SKILL.md",
        "skill://pdf-processing/SKILL.md",
    ]
    assert "nextCursor" not in listed and "nextCursor" not in got
    assert got["skill"] == listed["skills"][1]
    assert ("ttlMs" in listed and listed["cacheScope"] == "public") is (version == MODERN)
    assert ("ttlMs" in got) is (version == MODERN)
    manifest = resources["skill://pdf-processing/SKILL.md"]
    assert (manifest.name, manifest.description, manifest.mime_type) == (
        "pdf-processing",
        "Fill in PDF forms",
        "text/markdown",
    )
    assert logo[0].bytes() == b"\x89PNG\r\n\x1a\n\xff" and logo[0].mime_type == "image/png"
    sizes = {item["uri"]: (item["digest"], item["size"]) for item in got["skill"]["resources"]}
    assert sizes["skill://pdf-processing/logo.png"] == (digest(b"\x89PNG\r\n\x1a\n\xff"), 9)


async def test_a_directory_lists_its_direct_children_and_sub_folders(tmp_path: Path) -> None:
    async with Client(skilled(tmp_path)) as client:
        root = await client.read_directory("skill://pdf-processing")
        inside = await client.read_directory("skill://pdf-processing/references")
    assert [(item.uri, item.mime_type) for item in root] == [
        ("skill://pdf-processing/SKILL.md", "text/markdown"),
        ("skill://pdf-processing/logo.png", "image/png"),
        ("skill://pdf-processing/references", "inode/directory"),
    ]
    assert [(item.name, item.size) for item in inside] == [("FORMS.md", 6)]


@pytest.mark.parametrize(
    ("method", "params", "said"),
    [
        ("skills/get", {"uri": "skill://nowhere/SKILL.md"}, "no skill at skill://nowhere/SKILL.md"),
        ("skills/get", {"uri": 5}, '"uri" must be a string'),
        ("skills/list", {"cursor": "7"}, "was not handed out"),
        ("resources/directory/read", {"uri": "skill://pdf-processing/SKILL.md"}, "is not a directory"),
        ("resources/directory/read", {"uri": "skill://elsewhere"}, "is not a directory"),
    ],
)
async def test_wrong_params_are_invalid_params(tmp_path: Path, method: str, params: dict[str, Any], said: str) -> None:
    async with Client(skilled(tmp_path), protocol=MODERN) as client:
        with pytest.raises(ServerError, match=said) as raised:
            await client.request(method, params)
    assert raised.value.code == -32602
    if method == "skills/get" and isinstance(params["uri"], str):
        assert raised.value.data == {"uri": params["uri"]}


async def test_the_listing_is_paged_and_each_entry_is_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extension_module, "PAGE", 2)
    for name in ("a-one", "b-two", "c-three"):
        write_skill(tmp_path, name)
    server = Server("paged")
    server.add_skills(tmp_path)
    async with Client(server, protocol=MODERN) as client:
        first = await client.request("skills/list", {})
        assert len(first["skills"]) == 2 and first["nextCursor"] == offset_cursor("skills", 2)
        names = [entry.name for entry in await client.list_skills()]
    assert names == ["a-one", "b-two", "c-three"]


def test_a_skill_served_twice_is_refused(tmp_path: Path) -> None:
    server = skilled(tmp_path)
    with pytest.raises(ValueError, match=r"served at skill://git-workflow/SKILL\.md already"):
        server.add_skill(tmp_path / "git-workflow")
    server.add_skill(tmp_path / "git-workflow", prefix="team")
    assert "skill://team/git-workflow/SKILL.md" in server.extensions[SKILLS_EXTENSION].skills  # type: ignore[attr-defined]


async def test_toolwire_run_serves_a_folder_of_skills_over_stdio_and_http(tmp_path: Path) -> None:
    write_skill(tmp_path, "git-workflow", "Branch and commit the team's way")
    command = [sys.executable, "-m", "toolwire", "run", SERVER, "--skills", str(tmp_path)]
    async with Client(command) as client:
        assert [entry.name for entry in await client.list_skills()] == ["git-workflow"]
    with toolwire_http(SERVER, "--skills", str(tmp_path)) as (url, _):
        async with Client(url) as client:
            loaded = await client.load_skill("skill://git-workflow/SKILL.md")
    assert loaded.body.strip() == "The body of git-workflow."


def test_toolwire_run_refuses_a_broken_skill_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "SKILL.md").write_text("---\nname: broken\n---\n")
    done = subprocess.run(
        [sys.executable, "-m", "toolwire", "run", SERVER, "--skills", str(tmp_path / "broken")],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"toolwire: --skills {tmp_path / 'broken'}: {tmp_path / 'broken' / 'SKILL.md'}: it has no description"
        " (see toolwire run -h)"
    ]


async def test_a_directory_read_carries_the_caching_hints_in_2026_07_28(tmp_path: Path) -> None:
    async with Client(skilled(tmp_path), protocol=MODERN) as client:
        listed = await client.request("resources/directory/read", {"uri": "skill://pdf-processing"})
    assert listed["ttlMs"] >= 0 and listed["cacheScope"] in ("public", "private")


async def test_names_that_need_escaping_are_listed_encoded_and_their_folders_read_either_way(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-forms", files={"my notes/q?x=1#frag.md": "fragment\n"})
    server = Server("escaped")
    server.add_skills(tmp_path)
    async with Client(server) as client:
        (entry,) = await client.list_skills()
        encoded = await client.read_directory("skill://pdf-forms/my%20notes")
        raw = await client.read_directory("skill://pdf-forms/my notes")
        data = await client.read_skill_file(entry, "my notes/q%3Fx=1%23frag.md")
    assert (
        [item.uri for item in encoded]
        == [item.uri for item in raw]
        == ["skill://pdf-forms/my%20notes/q%3Fx=1%23frag.md"]
    )
    assert data == b"fragment\n"


async def test_a_large_integer_in_one_skill_leaves_the_listing_whole(tmp_path: Path) -> None:
    write_skill(tmp_path, "alpha")
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "SKILL.md").write_text(
        "---\nname: big\ndescription: x\nsize: 123456789012345678901234567890\n---\n"
    )
    server = Server("listed")
    server.add_skills(tmp_path)
    async with Client(server) as client:
        listed = await client.list_skills()
        loaded = await client.load_skill(listed[1])
    assert [entry.name for entry in listed] == ["alpha", "big"]
    assert loaded.entry.frontmatter["size"] == 1.2345678901234568e29


@pytest.mark.parametrize(
    ("frontmatter", "said"),
    [("x: " + "[" * 5000 + "]" * 5000, "nested more than 32 levels deep"), ("x: &a [*a]", r"aliases \(\*a\)")],
)
def test_toolwire_run_refuses_hostile_frontmatter_in_one_line(tmp_path: Path, frontmatter: str, said: str) -> None:
    (tmp_path / "hostile").mkdir()
    (tmp_path / "hostile" / "SKILL.md").write_text(f"---\nname: hostile\ndescription: x\n{frontmatter}\n---\n")
    done = subprocess.run(
        [sys.executable, "-m", "toolwire", "run", SERVER, "--skills", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()  # a RecursionError's traceback before
    assert re.search(said, line) and line.startswith(f"toolwire: --skills {tmp_path}: ")
