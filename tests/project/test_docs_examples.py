"""Every Python code block in the README and docs/ runs as written (each in a process of its
own), unless the line before its fence says ``<!-- fragment: why -->``: a piece of a larger
program, or one that needs what a test cannot have (an API key, a public server)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", ROOT / "README.zh-CN.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"(?P<before>[^\n]*)\n```python\n(?P<code>.*?)\n```", re.S)
FRAGMENT = re.compile(r"<!-- fragment: .+ -->")


def blocks() -> list[tuple[str, str]]:
    found = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            if not FRAGMENT.fullmatch(match.group("before").strip()):
                line = text[: match.start("code")].count("\n") + 1
                found.append((f"{document.relative_to(ROOT)}:{line}", match.group("code")))
    return found


@pytest.mark.parametrize(("where", "code"), blocks(), ids=[where for where, _ in blocks()])
def test_the_block_runs(where: str, code: str, tmp_path: Path) -> None:
    script = tmp_path / "block.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(Path(__file__).parents[1] / "support" / "docblock.py"), str(script)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "examples"), os.environ.get("PYTHONPATH")])),
        },
    )
    assert done.returncode == 0, f"{where} failed:\n{done.stderr[-3000:]}"


def test_every_fragment_says_why() -> None:
    for document in DOCUMENTS:
        for line in document.read_text(encoding="utf-8").splitlines():
            if "<!-- fragment" in line:
                assert FRAGMENT.fullmatch(line.strip()), f"{document}: {line}"


def first_block(document: str) -> dict[str, object]:
    """The namespace the first code block of ``docs/DOCUMENT`` leaves behind."""
    text = (ROOT / "docs" / document).read_text(encoding="utf-8")
    match = BLOCK.search(text)
    assert match is not None
    namespace: dict[str, object] = {"__name__": f"docs_{document}"}
    exec(compile(match.group("code"), document, "exec"), namespace)
    return namespace


async def test_the_first_examples_work_when_called(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolwire.client import Client

    monkeypatch.chdir(ROOT)
    tools = first_block("tools.md")["server"]
    async with Client(tools) as client:
        found = await client.call_tool("search_codebase", {"pattern": "def search_codebase", "fileType": ".md"})
        assert "docs/tools.md" in found.content[0].text
    context = first_block("context.md")["server"]
    async with Client(context) as client:
        result = await client.call_tool("process_large_file", {"path": "README.md"})
        assert result.structured == {"bytes": (ROOT / "README.md").stat().st_size}
    resources = first_block("resources.md")["server"]
    async with Client(resources) as client:
        result = await client.call_tool("recommend", {})
        assert [type(block).__name__ for block in result.content] == ["ResourceLink"] and result.structured is None


def test_the_chinese_docs_keep_in_step_with_the_english_ones() -> None:
    english = (ROOT / "README.md").read_text(encoding="utf-8")
    chinese = (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
    for command in ("./scripts/demo.sh", "./scripts/test.sh"):  # the same two-command quick start
        assert command in english and command in chinese
    assert "README.zh-CN.md" in english and "docs/zh/tutorial.md" in english
    for document in (ROOT / "README.zh-CN.md", ROOT / "docs" / "zh" / "tutorial.md"):
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", document.read_text(encoding="utf-8")):
            if not target.startswith("http"):
                assert (document.parent / target).resolve().exists(), f"{document.name} links to a missing {target}"


def test_the_chinese_progress_example_calls_its_tool_and_leaves_no_file(tmp_path: Path) -> None:
    (where, code), *_ = [
        (where, code) for where, code in blocks() if "zh/tutorial" in where and "process_large_file" in code
    ]
    script = tmp_path / "block.py"
    script.write_text(code, encoding="utf-8")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TMPDIR": str(temporary)},
    )
    assert done.returncode == 0, f"{where}: {done.stderr}"
    assert done.stdout.splitlines()[-1] == "{'bytes': 200000}"
    assert "已处理 200000/200000 字节" in done.stdout
    assert list(temporary.iterdir()) == []


def test_the_docs_say_how_to_install_extras_before_toolwire_is_on_pypi() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "Not yet: scale-out" not in readme and "docs/scaling.md" in readme
    for document in ("README.md", "docs/host.md", "docs/index.md", "docs/zh/tutorial.md"):
        text = (ROOT / document).read_text(encoding="utf-8")
        assert "[chat]'" in text or "[redis]'" in text, document
        assert "pip install -e '" in text and "PyPI" in text, document
