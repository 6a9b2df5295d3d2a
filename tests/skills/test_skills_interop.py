"""Skills against other implementations, over stdio in both eras: the official TypeScript
SDK's ``SkillsClient`` (``@modelcontextprotocol/client/ext/skills``: it checks every result's
schema, the caching hints of 2026-07-28 included, and verifies every file) and the MCP
Inspector's command line (``--method resources/directory/read``, ``--method skills/list
--verify``), both from npm (tests/interop/node), against ``toolwire run --skills``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import node_binary
from tests.support.skills import write_skill

NODE = Path(__file__).resolve().parents[1] / "interop" / "node"
INSPECTOR = (
    NODE / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js"
)
SERVER = str(Path(__file__).resolve().parents[1] / "servers" / "skills.py")
ERAS = ["legacy", "2026-07-28"]


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    """Two skills: one plain, one whose file and folder names need escaping in a URI, with
    a Python cache beside its script."""
    folder = tmp_path / "skills"
    write_skill(folder, "git-workflow", "Branch and commit the team's way", {"examples/commit.md": "Add it\n"})
    write_skill(
        folder,
        "pdf-forms",
        "Fill in PDF forms",
        {"my notes/q?x=1#frag.md": "fragment\n", "中文.md": "中文\n", "scripts/fill.py": "print()\n"},
    )
    (folder / "pdf-forms" / "scripts" / "__pycache__").mkdir()
    (folder / "pdf-forms" / "scripts" / "__pycache__" / "fill.cpython-311.pyc").write_bytes(b"\x00cache")
    return folder


def serve(skills: Path) -> list[str]:
    return [sys.executable, "-m", "toolwire", "run", SERVER, "--skills", str(skills)]


@pytest.mark.parametrize("era", ERAS)
def test_the_typescript_sdk_skills_client_lists_verifies_and_reads_folders(skills: Path, era: str) -> None:
    done = subprocess.run(
        [str(node_binary()), str(NODE / "sdk_skills_client.mjs"), era, *serve(skills)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=NODE,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert "error" not in seen, seen["error"]  # 2026-07-28: its schema refused a directory read without ttlMs
    assert seen["era"] == ("legacy" if era == "legacy" else "modern") and seen["directoryRead"] is True
    git, pdf = seen["skills"]
    assert all(file["verified"] for skill in seen["skills"] for file in skill["files"])
    assert {file["uri"] for file in pdf["files"]} == {
        "skill://pdf-forms/SKILL.md",
        "skill://pdf-forms/my%20notes/q%3Fx=1%23frag.md",
        "skill://pdf-forms/scripts/fill.py",
        "skill://pdf-forms/%E4%B8%AD%E6%96%87.md",
    }
    assert sorted(pdf["children"]) == [
        ["SKILL.md", "text/markdown"],
        ["my notes", "inode/directory"],
        ["scripts", "inode/directory"],
        ["中文.md", "text/markdown"],
    ]
    assert git["cached"] is pdf["cached"] is (era != "legacy")
    assert seen["got"] == "skill://git-workflow/SKILL.md"


def inspector(tmp_path: Path, era: str, *options: str, target: list[str]) -> subprocess.CompletedProcess[str]:
    """The Inspector's command line, its catalog and settings kept in ``tmp_path``."""
    environment = {**os.environ, "HOME": str(tmp_path), "MCP_CATALOG_PATH": str(tmp_path / "mcp.json")}
    command = [str(node_binary()), str(INSPECTOR), "--cli", "--protocol-era", "modern" if era != "legacy" else "legacy"]
    return subprocess.run(
        [*command, "--format", "json", "-q", *options, *target],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=NODE,
        env=environment,
    )


@pytest.mark.parametrize("era", ERAS)
def test_the_inspector_reads_a_skill_folder_and_verifies_every_skill(tmp_path: Path, skills: Path, era: str) -> None:
    read = inspector(
        tmp_path,
        era,
        "--method",
        "resources/directory/read",
        "--uri",
        "skill://pdf-forms/my%20notes",
        target=serve(skills),
    )
    assert read.returncode == 0, read.stdout + read.stderr
    result: dict[str, Any] = json.loads(read.stdout)["result"]
    assert [child["uri"] for child in result["resources"]] == ["skill://pdf-forms/my%20notes/q%3Fx=1%23frag.md"]
    assert ("ttlMs" in result and "cacheScope" in result) is (era != "legacy")
    verified = inspector(tmp_path, era, "--method", "skills/list", "--verify", target=serve(skills))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    reports = [json.loads(line) for line in verified.stdout.splitlines()]
    assert [(report["name"], report["ok"], report["outcome"]) for report in reports] == [
        ("git-workflow", True, "verified"),
        ("pdf-forms", True, "verified"),
    ]
