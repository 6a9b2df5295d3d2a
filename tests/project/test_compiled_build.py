"""The modules the compiled build compiles (``toolwire.build.COMPILED``) avoid what mypyc
compiles wrongly, so that both builds behave the same (docs/performance.md, "The compiled
build"); the whole suite runs against the compiled build too (scripts/compiled-check.sh)."""

from __future__ import annotations

import ast
from pathlib import Path

from toolwire.build import COMPILED

SRC = Path(__file__).resolve().parents[2] / "src" / "toolwire"
#: The nodes that await.
AWAITING = (ast.Await, ast.AsyncWith, ast.AsyncFor)
#: Attribute names that mypyc's C code spells as a GCC keyword (it prefixes a ``_``).
C_KEYWORD_CLASHES = {f"_{word}" for word in ("thread", "inline", "asm", "const", "volatile", "restrict", "signed")}


def compiled_files() -> list[Path]:
    files = []
    for name in COMPILED:
        path = SRC.joinpath(*name.split("."))
        files += sorted(path.glob("*.py")) if path.is_dir() else [path.with_suffix(".py")]
    return files


def hazards(path: Path) -> list[str]:
    """What ``path`` does that mypyc 2.4 compiles wrongly: an ``await`` in a ``finally`` block
    or an ``async with`` (whose exit awaits in one), and a bare ``raise`` after an ``await`` in
    an ``except`` block (each may re-raise, or match, an exception handled during the await
    instead of its own); one name for the exceptions of ``except`` clauses of different types
    in a function (it is typed as the first, and the others fail its check); a call in a
    slice's bounds (other than ``len``: on an object mypyc does not know, such as a
    ``memoryview``, it is called twice); and attributes whose C name is a GCC keyword (the C
    does not compile)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Try | ast.TryStar):
            if any(_awaits(statement) for statement in node.finalbody):
                found.append(f"{path.name}:{node.finalbody[0].lineno}: await in finally")
            for handler in node.handlers:
                waits = [inner.lineno for inner in ast.walk(handler) if isinstance(inner, AWAITING)]
                if waits and any(
                    isinstance(inner, ast.Raise) and inner.exc is None and inner.lineno > min(waits)
                    for inner in ast.walk(handler)
                ):
                    found.append(f"{path.name}:{handler.lineno}: bare raise after an await in except")
        elif isinstance(node, ast.Slice) and any(
            isinstance(inner, ast.Call) and not (isinstance(inner.func, ast.Name) and inner.func.id == "len")
            for bound in (node.lower, node.upper, node.step)
            if bound
            for inner in ast.walk(bound)
        ):
            found.append(f"{path.name}:{node.lineno}: a call in a slice's bounds")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            caught: dict[str, set[str]] = {}
            for handler in ast.walk(node):
                if isinstance(handler, ast.ExceptHandler) and handler.name and handler.type:
                    caught.setdefault(handler.name, set()).add(ast.unparse(handler.type))
            found += [
                f"{path.name}:{node.lineno}: {name!r} names exceptions of different types in {node.name}"
                for name, types in caught.items()
                if len(types) > 1
            ]
        elif isinstance(node, ast.AsyncWith):
            found.append(f"{path.name}:{node.lineno}: async with")
        elif isinstance(node, ast.Attribute) and node.attr in C_KEYWORD_CLASHES:
            found.append(f"{path.name}:{node.lineno}: attribute {node.attr}")
    return sorted(found, key=lambda hazard: int(hazard.split(":")[1]))


def _awaits(node: ast.AST) -> bool:
    return any(isinstance(inner, AWAITING) for inner in ast.walk(node))


def test_what_the_compiled_build_compiles_exists() -> None:
    files = compiled_files()
    assert files and all(path.is_file() for path in files), [path for path in files if not path.is_file()]


def test_compiled_modules_avoid_what_mypyc_compiles_wrongly() -> None:
    assert [hazard for path in compiled_files() for hazard in hazards(path)] == []


def test_the_check_finds_each_hazard(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "async def release(lock):\n"
        "    try:\n"
        "        lock._thread = 1\n"
        "    finally:\n"
        "        await lock.release()\n"
        "    try:\n"
        "        pass\n"
        "    except ValueError:\n"
        "        await lock.release()\n"
        "        raise\n"
        "    except KeyError as exc:  # re-raised by name: compiled correctly\n"
        "        await lock.release()\n"
        "        raise exc\n"
        "    async with lock:\n"
        "        pass\n"
        "    return memoryview(lock.data)[lock.take() :], lock.data[: len(lock.data)]\n"
        "\n"
        "\n"
        "def read(lock):\n"
        "    try:\n"
        "        return lock.read()\n"
        "    except ValueError as exc:\n"
        "        return exc\n"
        "    except Exception as exc:  # typed as the ValueError above, compiled\n"
        "        return exc\n"
    )
    assert hazards(sample) == [
        "sample.py:3: attribute _thread",
        "sample.py:5: await in finally",
        "sample.py:8: bare raise after an await in except",
        "sample.py:14: async with",
        "sample.py:16: a call in a slice's bounds",
        "sample.py:19: 'exc' names exceptions of different types in read",
    ]
