"""What a release is made of: the wheel carries the inspector's page and ``py.typed``, its
version is ``toolwire.__version__`` (written nowhere else), and the changelog has a section
for it. The wheel is built from a copy of the tree, as ``scripts/wheel-check.sh`` does."""

from __future__ import annotations

import email
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

import toolwire

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    work = tmp_path_factory.mktemp("wheel")
    tree = work / "tree"
    tree.mkdir()
    shutil.copy(ROOT / "pyproject.toml", tree)
    shutil.copy(ROOT / "README.md", tree)
    shutil.copy(ROOT / "setup.py", tree)
    shutil.copytree(ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    command = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "--wheel-dir",
        str(work / "dist"),
        str(tree),
    ]
    pure = {**os.environ, "TOOLWIRE_COMPILE": "0"}  # the compiled one: scripts/compiled-check.sh
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=pure)
    assert done.returncode == 0, done.stderr
    (built,) = (work / "dist").glob("toolwire-*-py3-none-any.whl")
    return zipfile.ZipFile(built)


def test_the_wheel_carries_the_inspector_and_py_typed(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    assert "toolwire/py.typed" in names
    static = sorted(path.name for path in (ROOT / "src" / "toolwire" / "dev" / "static").iterdir())
    assert static and all(f"toolwire/dev/static/{name}" in names for name in static)


def test_the_version_is_written_once(wheel: zipfile.ZipFile) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    (metadata,) = [name for name in wheel.namelist() if name.endswith(".dist-info/METADATA")]
    assert email.message_from_bytes(wheel.read(metadata))["Version"] == toolwire.__version__


def test_the_changelog_has_a_section_for_this_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"\n## {toolwire.__version__}" in changelog
