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
    """Where ``path`` awaits in a ``finally`` block or an ``async with`` exit, or re-raises
    with a bare ``raise`` after an await in an ``except`` block: after such an await the
    compiled code may raise or catch the wrong exception (an exception handled while it
    was suspended). And attributes whose C name is a GCC keyword."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.AsyncWith):
            found.append(f"{path.name}:{node.lineno}: async with")
        elif isinstance(node, ast.Try):
            if any(isinstance(inner, ast.Await) for part in node.finalbody for inner in ast.walk(part)):
                found.append(f"{path.name}:{node.lineno}: await in finally")
            for handler in node.handlers:
                inner_nodes = [inner for part in handler.body for inner in ast.walk(part)]
                awaited = min((inner.lineno for inner in inner_nodes if isinstance(inner, ast.Await)), default=None)
                reraised = [inner.lineno for inner in inner_nodes if isinstance(inner, ast.Raise) and inner.exc is None]
                if awaited is not None and any(line > awaited for line in reraised):
                    found.append(f"{path.name}:{handler.lineno}: bare raise after await in except")
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
    sample.write_text(
        "async def a(lock, stop):\n"
        "    async with lock:\n"
        "        pass\n"
        "    try:\n"
        "        pass\n"
        "    finally:\n"
        "        await stop()\n"
        "    try:\n"
        "        pass\n"
        "    except ValueError as exc:\n"
        "        if not exc.args:\n"
        "            raise\n"  # before the await: fine
        "        await stop()\n"
        "        raise exc\n"  # named: fine
        "    try:\n"
        "        pass\n"
        "    except ValueError:\n"
        "        await stop()\n"
        "        raise\n"
        "    lock._thread = 1\n"
    )
    assert hazards(sample) == [
        "sample.py:2: async with",
        "sample.py:4: await in finally",
        "sample.py:17: bare raise after await in except",
        "sample.py:20: attribute _thread",
    ]
