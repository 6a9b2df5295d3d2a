"""The Chinese docs keep level with the English ones.

Every page ``docs/NAME.md`` has a Chinese twin ``docs/zh/NAME.md`` (``BEHIND`` names the pages
whose twin is still missing or partial; a page leaves that list once its twin is level, and the
test says so). For each pair:

- the code is the same: the same fenced blocks in the same order (language, and whether the
  block is a ``<!-- fragment: why -->``), and each ``python`` block the same program once
  comments and string constants are set aside (those may be in Chinese);
- the outline is the same: as many headings at each level, so a section added in English
  fails here until its Chinese twin is written;
- each page links to its twin, and every relative link of a Chinese page resolves.

``docs/zh/`` may hold pages of its own (the tutorial), which have no English twin.

README.zh-CN.md links every page of the docs that README.md links (the Chinese twin, or the
English page while there is none) and names every extra README.md names.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
ENGLISH = sorted(DOCS.glob("*.md"))
CHINESE = sorted((DOCS / "zh").glob("*.md"))

# Pages whose Chinese twin is missing or holds only some sections: make one level, then drop it here.
BEHIND: set[str] = set()

FENCE = re.compile(r"^(?P<before>[^\n]*)\n```(?P<language>[^\n`]*)\n(?P<code>.*?)\n```$", re.M | re.S)
FRAGMENT = re.compile(r"<!-- fragment: .+ -->")
HEADING = re.compile(r"^(#{1,6}) ", re.M)
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def fences(text: str) -> list[tuple[str, bool, str]]:
    """Each fenced block as (language, whether it is a fragment, its code)."""
    return [
        (match["language"].strip(), bool(FRAGMENT.fullmatch(match["before"].strip())), match["code"])
        for match in FENCE.finditer("\n" + text)
    ]


def program(code: str) -> str:
    """The shape of a Python block: its syntax tree with every string constant blanked."""
    try:
        tree = compile(code, "block", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except SyntaxError:  # a fragment need not parse: then compare it as written
        return code
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = ""
    return ast.dump(tree)


def outline(text: str) -> dict[int, int]:
    """How many headings of each level, outside code blocks."""
    prose = FENCE.sub("", "\n" + text)
    counts: dict[int, int] = {}
    for hashes in HEADING.findall(prose):
        counts[len(hashes)] = counts.get(len(hashes), 0) + 1
    return counts


def twin(page: Path) -> Path:
    return DOCS / "zh" / page.name


def shape(text: str) -> list[tuple[str, bool, str]]:
    """What the twins must share: each block's language, whether it is a fragment, and its program if Python."""
    return [
        (language, fragment, program(code) if language == "python" else "") for language, fragment, code in fences(text)
    ]


def level(page: Path) -> bool:
    if not twin(page).exists():
        return False
    english, chinese = page.read_text(encoding="utf-8"), twin(page).read_text(encoding="utf-8")
    return shape(english) == shape(chinese) and outline(english) == outline(chinese)


@pytest.mark.parametrize("page", [page for page in ENGLISH if page.name not in BEHIND], ids=lambda page: page.name)
def test_the_chinese_twin_has_the_same_code_and_outline(page: Path) -> None:
    assert twin(page).exists(), f"docs/{page.name} has no Chinese twin docs/zh/{page.name}"
    english, chinese = page.read_text(encoding="utf-8"), twin(page).read_text(encoding="utf-8")
    english_blocks, chinese_blocks = fences(english), fences(chinese)
    assert [block[:2] for block in chinese_blocks] == [block[:2] for block in english_blocks], (
        f"docs/zh/{page.name}: the code blocks (language, fragment) differ from docs/{page.name}'s"
    )
    for number, (theirs, ours) in enumerate(zip(shape(english), shape(chinese), strict=True), start=1):
        assert ours == theirs, f"docs/zh/{page.name}: code block {number} is not the program docs/{page.name} shows"
    assert outline(chinese) == outline(english), (
        f"docs/zh/{page.name} has headings {outline(chinese)} (level: count), docs/{page.name} has {outline(english)}"
    )


def test_a_page_listed_as_behind_is_an_english_page_and_behind() -> None:
    assert BEHIND - {page.name for page in ENGLISH} == set()
    for page in BEHIND:
        assert not level(DOCS / page), f"docs/zh/{page} is level with docs/{page}: take it off BEHIND"


@pytest.mark.parametrize("page", [page for page in ENGLISH if twin(page).exists()], ids=lambda page: page.name)
def test_the_twins_link_to_each_other(page: Path) -> None:
    assert f"(zh/{page.name})" in page.read_text(encoding="utf-8"), (
        f"docs/{page.name} does not link docs/zh/{page.name}"
    )
    assert f"(../{page.name})" in twin(page).read_text(encoding="utf-8"), f"docs/zh/{page.name} does not link back"


@pytest.mark.parametrize("page", CHINESE, ids=lambda page: page.name)
def test_the_links_of_a_chinese_page_resolve(page: Path) -> None:
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if not target.startswith(("http:", "https:", "mailto:")):
            assert (page.parent / target).resolve().exists(), f"docs/zh/{page.name} links to a missing {target}"


def test_the_chinese_readme_links_the_pages_and_names_the_extras_the_english_one_does() -> None:
    """README.zh-CN.md links the Chinese twin of every page README.md links, has at least as
    many sections, and names every extra it names."""
    english = (ROOT / "README.md").read_text(encoding="utf-8")
    chinese = (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
    pages = set(re.findall(r"\]\(docs/([a-z-]+\.md)", english))
    assert pages - set(re.findall(r"\]\(docs/zh/([a-z-]+\.md)", chinese)) == set(), "link the Chinese twins"
    english_headings = re.findall(r"^#{1,3} ", english, re.M)
    assert len(re.findall(r"^#{1,3} ", chinese, re.M)) >= len(english_headings), "a section of README.md is missing"
    assert set(re.findall(r"`\[(\w+)\]`", english)) - set(re.findall(r"`\[(\w+)\]`", chinese)) == set()
