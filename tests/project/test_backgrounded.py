"""Started in the background (``nohup``, ``cmd &`` in a script), a process finds SIGINT
ignored, and so does every process it starts: the test suite still interrupts the processes it
starts as a user's Ctrl-C would (tests/conftest.py), and toolwire's HTTP server leaves an
ignored SIGINT ignored, as Python does (SIGTERM still stops it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx

from tests.support.httpserve import LIBRARY, free_port, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
#: A command's prefix that runs the rest of it with SIGINT ignored, as ``nohup cmd &`` does.
SIGINT_IGNORED = [
    sys.executable,
    "-c",
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); os.execv(sys.argv[1], sys.argv[1:])",
]


def signals(pid: int, field: str) -> int:
    """A field of ``/proc/PID/status`` that is a signal mask (``SigIgn``, ``SigCgt``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name == field:
            return int(value, 16)
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def test_the_suite_started_with_sigint_ignored_still_interrupts_what_it_starts() -> None:
    test = "tests/cli/test_cli.py::test_ctrl_c_exits_130_quietly"  # sends SIGINT to a `toolwire call`
    command = [*SIGINT_IGNORED, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_an_http_server_started_with_sigint_ignored_leaves_it_ignored() -> None:
    port = free_port()
    command = [*SIGINT_IGNORED, sys.executable, "-m", "toolwire", "run", LIBRARY, "--http", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, process)
        # an answer: the server is serving, and set up what stops it before it could answer
        assert httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=10).status_code > 0
        sigint, sigterm = 1 << (2 - 1), 1 << (15 - 1)
        assert signals(process.pid, "SigIgn") & sigint and not signals(process.pid, "SigCgt") & sigint
        assert signals(process.pid, "SigCgt") & sigterm
        process.terminate()
        assert process.wait(30) == 0
    finally:
        process.kill()
        process.wait(10)
