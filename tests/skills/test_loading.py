"""Reading skills from folders: what is served, and the clear refusals of skills that break
the Agent Skills rules or the limits SEP-2640 sets."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.skills import write_skill
from toolwire.skills import SkillInvalid, digest, find_skills, load_skill
from toolwire.skills import skill as skill_module


def test_a_skill_holds_its_frontmatter_and_every_file_with_digests_and_sizes(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "pdf-processing", files={"references/FORMS.md": "forms\n", ".hidden": "x"})
    skill = load_skill(folder, prefix="acme/docs")
    assert skill.path == "acme/docs/pdf-processing" and skill.uri == "skill://acme/docs/pdf-processing/SKILL.md"
    assert skill.frontmatter == {"name": "pdf-processing", "description": "Does one thing well"}
    entry = skill.entry()
    manifest = (folder / "SKILL.md").read_bytes()
    assert entry["resources"] == [
        {"uri": skill.uri, "digest": digest(manifest), "size": len(manifest)},
        {"uri": "skill://acme/docs/pdf-processing/references/FORMS.md", "digest": digest(b"forms\n"), "size": 6},
    ]
    assert skill.folders() == {"", "references"}


def test_frontmatter_passes_through_as_json(tmp_path: Path) -> None:
    folder = tmp_path / "dated"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: dated\ndescription: Has more\nlicense: MIT\nmetadata:\n  since: 2026-01-02\n  version: '2'\n---\nbody\n"
    )
    assert load_skill(folder).frontmatter == {
        "name": "dated",
        "description": "Has more",
        "license": "MIT",
        "metadata": {"since": "2026-01-02", "version": "2"},
    }


@pytest.mark.parametrize(
    ("manifest", "said"),
    [
        (None, "no SKILL.md in it"),
        ("no frontmatter here\n", "must begin with YAML frontmatter"),
        ("---\n[not, a, mapping]\n---\n", "must be a YAML mapping"),
        ("---\ndescription: x\n---\n", "it has no name"),
        ("---\nname: broken\n---\n", "it has no description"),
        ("---\nname: Broken\ndescription: x\n---\n", "is not 1-64 lowercase letters"),
        ("---\nname: bro--ken\ndescription: x\n---\n", "is not 1-64 lowercase letters"),
        ("---\nname: other\ndescription: x\n---\n", "is not the name of its folder 'broken'"),
        (f"---\nname: broken\ndescription: {'x' * 1025}\n---\n", "more than 1024"),
    ],
)
def test_a_broken_skill_is_refused_naming_the_file_and_the_problem(
    tmp_path: Path, manifest: str | None, said: str
) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    if manifest is not None:
        (folder / "SKILL.md").write_text(manifest)
    with pytest.raises(SkillInvalid, match=said) as raised:
        load_skill(folder)
    assert str(folder) in str(raised.value)
    assert isinstance(raised.value, ValueError)


def test_a_skill_over_the_limits_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = write_skill(tmp_path, "big", files={"a.txt": "a", "b.txt": "b"})
    monkeypatch.setattr(skill_module, "MAX_FILES", 2)
    with pytest.raises(SkillInvalid, match="more than the 2 files"):
        load_skill(folder)
    monkeypatch.setattr(skill_module, "MAX_FILES", 512)
    monkeypatch.setattr(skill_module, "MAX_BYTES", 10)
    with pytest.raises(SkillInvalid, match="more than the 10 bytes a skill may have"):
        load_skill(folder)


def test_a_folder_of_skills_gives_each_by_name_and_a_folder_without_any_is_refused(tmp_path: Path) -> None:
    write_skill(tmp_path, "zeta")
    write_skill(tmp_path, "alpha")
    (tmp_path / "notes").mkdir()
    assert [skill.name for skill in find_skills(tmp_path)] == ["alpha", "zeta"]
    assert [skill.name for skill in find_skills(tmp_path / "alpha")] == ["alpha"]
    with pytest.raises(SkillInvalid, match="no skill in it"):
        find_skills(tmp_path / "notes")


#: Loads the skill in the folder argv[1] in a process that may not map more than 600 MiB,
#: and prints what it said.
LOAD_BOUNDED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (600 << 20, 600 << 20))
from toolwire.skills import SkillInvalid, load_skill
try:
    load_skill(sys.argv[1])
except SkillInvalid as exc:
    print(exc)
"""


@pytest.mark.parametrize("where", ["SKILL.md", "data/blob.bin"])
def test_a_file_of_1_2_gb_is_refused_without_reading_it(tmp_path: Path, where: str) -> None:
    folder = write_skill(tmp_path, "huge")
    file = folder / where
    file.parent.mkdir(parents=True, exist_ok=True)
    with file.open("ab") as stream:
        stream.truncate(1200 << 20)  # sparse: quick to make, 1.2 GB to read
    done = subprocess.run(
        [sys.executable, "-c", LOAD_BOUNDED, str(folder)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr  # a MemoryError before: the whole file was read
    assert "more than the 16777216 bytes a skill may have" in done.stdout


def test_caches_and_hidden_files_are_not_part_of_a_skill(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path,
        "scripted",
        files={
            "scripts/fill.py": "print('fill')\n",
            "scripts/__pycache__/fill.cpython-311.pyc": "cache",
            "scripts/old.pyc": "cache",
            ".git/config": "[core]\n",
            "notes/.DS_Store": "x",
        },
    )
    assert list(load_skill(folder).files) == ["SKILL.md", "scripts/fill.py"]


def test_file_uris_are_percent_encoded_and_names_with_control_characters_refused(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "pdf-forms", files={"q?x=1#frag.md": "q", "my notes/a b.md": "a", "中文.md": "z"})
    skill = load_skill(folder)
    assert {resource["uri"] for resource in skill.entry()["resources"]} == {
        "skill://pdf-forms/SKILL.md",
        "skill://pdf-forms/q%3Fx=1%23frag.md",
        "skill://pdf-forms/%E4%B8%AD%E6%96%87.md",
        "skill://pdf-forms/my%20notes/a%20b.md",
    }
    (folder / "evil\nname.md").write_text("x")
    with pytest.raises(SkillInvalid, match=r"the name 'evil\\nname\.md' has a control character"):
        load_skill(folder)
