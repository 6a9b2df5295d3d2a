"""Running ``python -m toolwire ...`` as a real process, for the tests of the command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TOOLWIRE = [sys.executable, "-m", "toolwire"]


def environment(**extra: str) -> dict[str, str]:
    """A wide terminal for rich tables, and stderr not taken for a terminal unless asked."""
    return {**os.environ, "COLUMNS": "200", "TTY_COMPATIBLE": "0", **extra}


def absent(*modules: str) -> dict[str, str]:
    """The environment of a process that cannot import ``modules`` (see ``tests/absent``)."""
    path = os.pathsep.join(filter(None, [str(Path(__file__).parents[1] / "absent"), os.environ.get("PYTHONPATH")]))
    return {"PYTHONPATH": path, "TOOLWIRE_TEST_ABSENT": ",".join(modules)}


def start(*args: str, cwd: Path | None = None, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*TOOLWIRE, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=environment(**env)
    )


def finish(process: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    try:
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def toolwire(*args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m toolwire ARGS...``; its exit status, stdout and stderr."""
    return finish(start(*args, cwd=cwd, **env))


def toolwire_all(*commands: list[str], cwd: Path | None = None) -> list[subprocess.CompletedProcess[str]]:
    """Run several command lines at once (each is independent): their results, in order."""
    return [finish(process) for process in [start(*command, cwd=cwd) for command in commands]]


def failed(done: subprocess.CompletedProcess[str], status: int) -> str:
    """The one ``toolwire: ...`` line of a failure (after checking the status and stdout)."""
    assert (done.returncode, done.stdout) == (status, ""), done.stderr
    assert done.stderr.startswith("toolwire: ") and "Traceback" not in done.stderr, done.stderr
    return done.stderr.splitlines()[0]
