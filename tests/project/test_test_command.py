"""The test command's own logic, run for real with stand-ins for what it runs: scripts/stages.sh
runs every stage whatever the others did and ends with a table; scripts/test.sh stops, saying
so, when the setup fails; scripts/wait-for-lock.py (setup.sh's, before apt-get) waits for a
lock held as apt holds its own, and gives up after its bound, saying so."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WAIT_FOR_LOCK = [sys.executable, str(ROOT / "scripts" / "wait-for-lock.py")]


def test_every_stage_runs_and_a_table_ends_it() -> None:
    stages = ["first", "echo one", "second", "echo two >&2; exit 3", "third", "echo three"]
    done = subprocess.run([ROOT / "scripts" / "stages.sh", *stages], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    output, table = done.stdout.split("\n\n", 1)
    shown = ["== first: echo one", "one", "== second: echo two >&2; exit 3", "== third: echo three", "three"]
    assert output.splitlines() == shown
    rows = table.splitlines()
    assert rows[0].split() == ["stage", "result", "time"]
    names = ["first", "second", "third", "(all)"]
    results = ["passed", "FAILED (exit status 3)", "passed", "FAILED"]
    for row, stage, result in zip(rows[1:], names, results, strict=True):
        assert row.startswith(f"{stage} ") and f" {result} " in row and row.endswith(" s"), row


def test_every_stage_passing_passes() -> None:
    done = subprocess.run([ROOT / "scripts" / "stages.sh", "only", "true"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.splitlines()[-1].split()[:2] == ["(all)", "passed"]


def test_an_interrupted_stage_is_the_last_and_the_table_says_so() -> None:
    stages = ["first", "kill -INT $PPID", "second", "echo two", "third", "echo three"]  # $PPID: stages.sh
    done = subprocess.run([ROOT / "scripts" / "stages.sh", *stages], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "two" not in done.stdout.split("\n\n")[0]
    rows = done.stdout.split("\n\n", 1)[1].splitlines()
    assert [row.split("  ")[0] for row in rows[1:]] == ["first", "second", "third", "(all)"]
    assert " passed " in rows[1] and all(" not run (interrupted)" in row for row in rows[2:4])


def test_a_failed_setup_stops_the_test_command_saying_what_did_not_run() -> None:
    done = subprocess.run(
        [ROOT / "scripts" / "test.sh"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHON": "false"},
    )
    assert done.returncode == 1
    assert "the setup failed (scripts/setup.sh, exit status 1): no check can run without it" in done.stderr
    assert "not run: ruff, mypy, pytest, conformance, wheel check, compiled check" in done.stderr


def test_a_held_lock_is_waited_for(tmp_path: Path) -> None:
    lock = tmp_path / "lock"
    lock.touch()
    with open(lock, "r+") as held:
        fcntl.lockf(held, fcntl.LOCK_EX)  # as apt-get holds /var/lib/apt/lists/lock
        with subprocess.Popen([*WAIT_FOR_LOCK, str(lock), "60"], stderr=subprocess.PIPE, text=True) as waiting:
            assert waiting.stderr is not None
            assert waiting.stderr.readline() == f"waiting for {lock}: another process holds it (up to 60 s)\n"
            assert waiting.poll() is None
            fcntl.lockf(held, fcntl.LOCK_UN)
            assert waiting.wait(30) == 0


def test_a_lock_held_too_long_is_given_up_on_saying_so(tmp_path: Path) -> None:
    lock = tmp_path / "lock"
    lock.touch()
    with open(lock, "r+") as held:
        fcntl.lockf(held, fcntl.LOCK_EX)
        done = subprocess.run([*WAIT_FOR_LOCK, str(lock), "1"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and f"{lock} is still held after 1 s (see: fuser -v {lock})" in done.stderr
    free = subprocess.run([*WAIT_FOR_LOCK, str(lock), "1"], capture_output=True, text=True, timeout=30)
    missing = subprocess.run([*WAIT_FOR_LOCK, str(tmp_path / "none"), "1"], capture_output=True, text=True, timeout=30)
    assert (free.returncode, free.stderr, missing.returncode) == (0, "", 0)
