"""Helpers of the benchmarks that count instructions under ``valgrind --tool=callgrind``.

Instruction counts are the same run after run, whatever else the machine does, where timing
on a shared host swings by tens of per cent. The benchmarks built on this
(``instructions.py``, ``scaling_instructions.py``) run the code under test in a child process
under callgrind twice, with N and 2N calls, and take the difference over N: the count per
call, without the start-up.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Children run with a fixed hash seed: the same dictionaries and sets, run after run.
ENVIRONMENT = {"PYTHONHASHSEED": "0"}


def prepare() -> None:
    """Exit with a message if valgrind is missing; compile the bytecode of ``src`` and
    ``benchmarks`` (bytecode written during a counted run would be counted in it)."""
    if shutil.which("valgrind") is None:
        raise SystemExit("this benchmark needs valgrind (apt-get install valgrind)")
    subprocess.run([sys.executable, "-m", "compileall", "-q", "src", "benchmarks"], cwd=ROOT, check=True)


def command(out: Path, arguments: Sequence[str]) -> list[str]:
    """The command that runs ``python arguments...`` under callgrind, writing ``out``."""
    return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, *arguments]


def environment() -> dict[str, str]:
    return {**os.environ, **ENVIRONMENT}


def total(out: Path) -> int:
    """The instructions counted in the callgrind file ``out``."""
    found = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.MULTILINE)
    if found is None:
        raise SystemExit(f"no total in {out}")
    return int(found.group(1))


def count(out: Path, arguments: Sequence[str]) -> int:
    """Run ``python arguments...`` under callgrind to the end; the instructions it executed
    (its callgrind file: ``out``)."""
    done = subprocess.run(command(out, arguments), env=environment(), capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"the child failed:\n{done.stderr[-3000:]}")
    return total(out)


def per_function(path: Path) -> dict[str, int]:
    """Each function's own instructions in a callgrind file."""
    # --auto=no: the per-function summary only, not the source annotated line by line (whose
    # "=> callee" lines would count as functions)
    listing = subprocess.run(
        ["callgrind_annotate", "--auto=no", "--threshold=100", str(path)], capture_output=True, text=True
    )
    found: dict[str, int] = {}
    for line in listing.stdout.splitlines():
        match = re.match(r"\s*([\d,]+) \([^)]*\)\s+(\S.*)", line)
        if match and match.group(2) != "PROGRAM TOTALS":
            found[match.group(2)] = int(match.group(1).replace(",", ""))
    return found


def per_function_difference(small: Path, large: Path) -> dict[str, int]:
    """Each function's own instructions in the ``large`` run less those in the ``small`` one
    (the start-up left out)."""
    before, after = per_function(small), per_function(large)
    return {name: after.get(name, 0) - before.get(name, 0) for name in {*before, *after}}
