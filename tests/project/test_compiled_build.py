"""The modules the compiled build compiles (``toolwire.build.COMPILED``) avoid what mypyc
compiles wrongly, so that both builds behave the same (docs/performance.md, "The compiled
build"); the whole suite runs against the compiled build too (scripts/compiled-check.sh)."""

from __future__ import annotations

import ast
from pathlib import Path

from toolwire.build import COMPILED

SRC = Path(__file__).resolve().parents[2] / "src" / "toolwire"
#: Attribute names that mypyc's C code spells as a GCC keyword (it prefixes a ``_``).
C_KEYWORD_CLASHES = {f"_{word}" for word in ("thread", "inline", "asm", "const", "volatile", "restrict", "signed")}


def compiled_files() -> list[Path]:
    files = []
    for name in COMPILED:
        path = SRC.joinpath(*name.split("."))
        files += sorted(path.glob("*.py")) if path.is_dir() else [path.with_suffix(".py")]
    return files


def hazards(path: Path) -> list[str]:
    """The coroutines ``path`` defines (compiled, one loses the frames of the tracebacks of
    what it awaits, and one awaiting in a ``finally`` block may re-raise the wrong exception),
    and its attributes whose C name is a GCC keyword (the C does not compile)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.AsyncFunctionDef):
            found.append(f"{path.name}:{node.lineno}: async def {node.name}")
        elif isinstance(node, ast.Attribute) and node.attr in C_KEYWORD_CLASHES:
            found.append(f"{path.name}:{node.lineno}: attribute {node.attr}")
    return found


def test_what_the_compiled_build_compiles_exists() -> None:
    files = compiled_files()
    assert files and all(path.is_file() for path in files), [path for path in files if not path.is_file()]


def test_compiled_modules_avoid_what_mypyc_compiles_wrongly() -> None:
    assert [hazard for path in compiled_files() for hazard in hazards(path)] == []


def test_the_check_finds_each_hazard(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("def plain(lock):\n    lock.held = 1\n\n\nasync def wait(lock):\n    lock._thread = 1\n")
    assert hazards(sample) == ["sample.py:5: async def wait", "sample.py:6: attribute _thread"]
