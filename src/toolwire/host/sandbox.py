"""Code mode's sandbox: a Python program in a process of its own, with the tool bridge its only way out.

Each program runs in a new process under bubblewrap (``bwrap``, the sandbox Flatpak uses):

- new user, PID, network, IPC, UTS and cgroup namespaces: no network at all (not even the
  host's loopback), no other process to see; it runs as ``nobody`` with no capabilities
  and may not make user namespaces of its own;
- a file system of its own: the system's ``/usr`` and the Python installation read-only, a
  minimal ``/dev``, and ``/scratch``, an empty in-memory folder of ``scratch_bytes`` (its
  working directory and home); nothing else of the machine is there (no ``/etc``, no
  ``/home``, no ``/proc``, no ``/tmp``);
- a seccomp filter (:mod:`.seccomp`): no new processes (threads only), no sockets;
- limits the runner sets for good before the program starts: CPU time, address space
  (memory), open files; and a wall-clock limit the host keeps (its tool calls' time not
  counted), killing the process group;
- its standard input and output are the tool bridge (:mod:`.code_runner` speaks it); what it
  prints is kept up to ``output_chars``, the rest dropped.

Code mode never runs a program outside this sandbox: :func:`check_sandbox` raises
:class:`SandboxUnavailable` with one line saying what to install or why it cannot start.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from .seccomp import filter_program

#: Where the runner is inside the sandbox.
RUNNER = "/sandbox/runner.py"
SCRATCH = "/scratch"
_NOT_A_CALL = "the program wrote something that is not a tool call on the tool bridge"
INSTALL = "code mode needs bubblewrap (bwrap) to sandbox programs: install it (apt-get install bubblewrap)"

#: A tool call of the program: ``(function, arguments)`` to ``(True, value)`` or ``(False, error text)``.
ToolCaller = Callable[[str, dict[str, Any]], Awaitable[tuple[bool, Any]]]


class SandboxUnavailable(RuntimeError):
    """Code mode cannot sandbox programs here; the message says what to install or fix."""


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """What one program may use: ``wall_seconds`` from start to result (not counting the time
    its tool calls take: they have the host's ``call_timeout``, and a person may be asked),
    ``cpu_seconds`` of CPU time, ``memory_bytes`` of address space, ``scratch_bytes`` in ``/scratch``,
    ``output_chars`` of printed output kept, ``message_bytes`` in one line of the bridge (a
    call's arguments, a tool's value, the result)."""

    wall_seconds: float = 30.0
    cpu_seconds: int = 10
    memory_bytes: int = 512 * 2**20
    scratch_bytes: int = 64 * 2**20
    output_chars: int = 8_000
    message_bytes: int = 4 * 2**20


@dataclass(slots=True)
class ProgramOutcome:
    """How a program ended: ``value`` (its result) unless ``error`` says why it has none;
    ``output``: what it printed (cut at the limit, ``dropped`` characters more)."""

    value: Any = None
    error: str | None = None
    output: str = ""
    dropped: int = 0


def bubblewrap() -> str:
    """The path of ``bwrap``; :class:`SandboxUnavailable` saying what to install without it."""
    found = shutil.which("bwrap")
    if found is None:
        raise SandboxUnavailable(INSTALL)
    return found


def _interpreter() -> Path:
    return Path(sys.executable).resolve()


def _file_system() -> list[str]:
    """``bwrap`` options for a read-only ``/usr`` (and the links a merged ``/usr`` has at
    the root), the Python installation, and the runner."""
    options = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        path = Path(top)
        if path.is_symlink():
            options += ["--symlink", os.readlink(path), top]
        elif path.is_dir():
            options += ["--ro-bind", top, top]
    python = {Path(sys.base_prefix).resolve(), _interpreter().parent}
    for place in sorted(python):
        inside = place.is_relative_to("/usr") or any(place != other and place.is_relative_to(other) for other in python)
        if not inside:
            options += ["--ro-bind", str(place), str(place)]
    return [*options, "--ro-bind", str(Path(__file__).with_name("code_runner.py")), RUNNER]


def sandbox_command(bwrap: str, seccomp_fd: int, limits: SandboxLimits) -> list[str]:
    """The command line that starts the runner in the sandbox (its arguments follow)."""
    return [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--uid",
        "65534",
        "--gid",
        "65534",
        "--disable-userns",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--hostname",
        "sandbox",
        *_file_system(),
        "--dev",
        "/dev",
        "--size",
        str(limits.scratch_bytes),
        "--tmpfs",
        SCRATCH,
        "--chdir",
        SCRATCH,
        "--clearenv",
        "--setenv",
        "HOME",
        SCRATCH,
        "--setenv",
        "TMPDIR",
        SCRATCH,
        "--setenv",
        "PYTHONIOENCODING",
        "utf-8",
        "--remount-ro",
        "/",
        "--seccomp",
        str(seccomp_fd),
        str(_interpreter()),
        "-I",
        "-S",
        "-B",
    ]


def _seccomp_fd() -> int:
    program = filter_program()
    if program is None:
        raise SandboxUnavailable(f"code mode's sandbox has no seccomp filter for this machine ({os.uname().machine})")
    fd = os.memfd_create("toolwire-seccomp", 0)
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


async def _start(limits: SandboxLimits, *arguments: str) -> asyncio.subprocess.Process:
    """The sandbox's process, started. Cancelled meanwhile, it kills the process once it
    has started (asyncio's own start, cancelled, can wait forever in Python 3.11)."""
    bwrap = bubblewrap()
    fd = _seccomp_fd()
    starting = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *sandbox_command(bwrap, fd, limits),
            *arguments,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            pass_fds=(fd,),
            start_new_session=True,
            limit=limits.message_bytes,
        )
    )
    starting.add_done_callback(lambda _: os.close(fd))
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        with contextlib.suppress(OSError):  # one that could not start has nothing to stop
            process = await starting
            _kill(process)
            await process.wait()
        raise


def _kill(process: asyncio.subprocess.Process) -> None:
    """Kill the sandbox: ``bwrap`` and everything in its process group."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


async def check_sandbox(limits: SandboxLimits | None = None) -> None:
    """Start the sandbox once with an empty program; :class:`SandboxUnavailable` with one
    line (what to install, or what ``bwrap`` said) when it cannot."""
    process = await _start(limits or SandboxLimits(), "-c", "pass")
    _, err = await process.communicate()
    if process.returncode != 0:
        said = err.decode(errors="replace").strip().splitlines()
        raise SandboxUnavailable(f"code mode cannot start its sandbox: {said[-1] if said else process.returncode}")


class _Run:
    """One program's run: the bridge's messages, its tool calls and its output."""

    def __init__(self, process: asyncio.subprocess.Process, call: ToolCaller, limits: SandboxLimits) -> None:
        self.process = process
        self.call = call
        self.limits = limits
        self.output = bytearray()
        self.dropped = 0
        self.calls: set[asyncio.Task[None]] = set()
        self.clock: asyncio.Timeout | None = None
        self.left = limits.wall_seconds

    def pause_clock(self) -> None:
        """The first call in flight stops the wall clock (calls have time limits of their own)."""
        if not self.calls and self.clock is not None and (deadline := self.clock.when()) is not None:
            self.left = deadline - asyncio.get_running_loop().time()
            self.clock.reschedule(None)

    def resume_clock(self, task: asyncio.Task[None]) -> None:
        self.calls.discard(task)
        if not self.calls and self.clock is not None and self.clock.when() is None:
            self.clock.reschedule(asyncio.get_running_loop().time() + self.left)

    async def read_output(self) -> None:
        assert self.process.stderr is not None
        cap = self.limits.output_chars * 4  # bytes enough for that many characters
        while chunk := await self.process.stderr.read(65536):
            kept = chunk[: max(cap - len(self.output), 0)]
            self.output += kept
            self.dropped += len(chunk) - len(kept)

    async def bridge(self, functions: Collection[str]) -> ProgramOutcome:
        assert self.process.stdout is not None
        while True:
            try:
                line = await self.process.stdout.readline()
            except ValueError:
                mib = self.limits.message_bytes / 2**20
                return ProgramOutcome(error=f"the program sent over {mib:g} MiB at once (in a call or its result)")
            if not line:
                return ProgramOutcome(error=await self.ended())
            try:
                message = orjson.loads(line)
            except orjson.JSONDecodeError:
                message = None
            if not isinstance(message, dict):
                return ProgramOutcome(error=_NOT_A_CALL)
            if "result" in message:
                return ProgramOutcome(value=message["result"])
            if isinstance(message.get("error"), str):
                return ProgramOutcome(error=message["error"])
            number, function, arguments = message.get("call"), message.get("tool"), message.get("arguments")
            if not isinstance(number, int) or not isinstance(function, str) or function not in functions:
                return ProgramOutcome(error=_NOT_A_CALL)
            if not isinstance(arguments, dict):
                return ProgramOutcome(error=_NOT_A_CALL)
            self.pause_clock()
            task = asyncio.create_task(self.answer(number, function, arguments))
            self.calls.add(task)
            task.add_done_callback(self.resume_clock)

    async def answer(self, number: int, function: str, arguments: dict[str, Any]) -> None:
        ok, value = await self.call(function, arguments)
        reply = {"reply": number, "value": value} if ok else {"reply": number, "error": str(value)}
        assert self.process.stdin is not None
        with contextlib.suppress(ConnectionError):  # the program ended meanwhile
            self.process.stdin.write(orjson.dumps(reply, default=str) + b"\n")
            await self.process.stdin.drain()

    async def ended(self) -> str:
        """Why the process ended without a result."""
        status = await self.process.wait()
        cpu = self.limits.cpu_seconds
        if status == 128 + signal.SIGXCPU:  # bwrap's status for its child's signal
            return f"the program used up its CPU time ({cpu} s) and was stopped"
        if status == 128 + signal.SIGKILL:
            return f"the program was killed (at its CPU time limit, {cpu} s, if it ignored the first signal)"
        return f"the program's process ended without a result (exit status {status})"

    def stop(self) -> None:
        self.clock = None
        _kill(self.process)
        for task in self.calls:
            task.cancel()


async def run_program(
    program: str, functions: Collection[str], call: ToolCaller, limits: SandboxLimits | None = None
) -> ProgramOutcome:
    """Run ``program`` in the sandbox with the tool functions ``functions`` (each call goes
    to ``call``). Never raises for what the program does (its failure, a limit it hit, a
    broken bridge: ``error`` says which); :class:`SandboxUnavailable` without ``bwrap``."""
    limits = limits or SandboxLimits()
    process = await _start(limits, RUNNER)
    run = _Run(process, call, limits)
    output = asyncio.create_task(run.read_output())
    task = {
        "program": program,
        "tools": sorted(functions),
        "limits": {"cpu": limits.cpu_seconds, "memory": limits.memory_bytes},
    }
    try:
        assert process.stdin is not None
        try:
            async with asyncio.timeout(limits.wall_seconds) as run.clock:
                process.stdin.write(orjson.dumps(task) + b"\n")
                await process.stdin.drain()
                outcome = await run.bridge(functions)
        except TimeoutError:
            stopped = f"the program ran over its time limit ({limits.wall_seconds:g} s) and was stopped"
            outcome = ProgramOutcome(error=stopped)
    finally:
        run.stop()
        await process.wait()
        await asyncio.wait([output], timeout=1.0)  # its pipe closes with the last process
        output.cancel()
    text = run.output.decode(errors="replace")
    outcome.output, outcome.dropped = text[: limits.output_chars], run.dropped + max(len(text) - limits.output_chars, 0)
    return outcome
