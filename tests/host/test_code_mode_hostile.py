"""Code mode against hostile programs: each runs in the real sandbox (bubblewrap, the seccomp
filter, the limits), is contained with an error the model can act on, and the conversation goes
on: the model's next program, five chained calls of a real server, runs as usual."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tests.host.test_code_mode import CHAIN, ORDERS, provider, run, tool_texts
from tests.support.model_server import ModelServer, Reply, ToolCall
from toolwire.host import ApprovalPolicy, Host, SandboxLimits

#: Enough for Python to start on a busy machine, never reached by a program that stops itself.
WALL = 120.0


@pytest.fixture
def model() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


async def contained(model: ModelServer, program: str, limits: SandboxLimits | None = None) -> str:
    """What the model reads of ``program``'s run, after checking that its next program works."""
    model.script(
        Reply(tool_calls=[ToolCall("run_code", {"program": program})]),
        Reply(tool_calls=[ToolCall("run_code", {"program": CHAIN})]),
        Reply(text="Done."),
    )
    limits = limits or SandboxLimits(wall_seconds=WALL)
    policy = ApprovalPolicy(trusted={"orders"})
    async with Host([f"orders={ORDERS}"], provider=provider("openai", model), policy=policy, code_mode=limits) as host:
        await run(host.conversation(), "go")
    hostile, chained = tool_texts(model.requests[-1])
    assert chained.endswith("Result:\n49.75")
    return hostile


async def test_a_fork_bomb_fails_at_its_first_fork(model: ModelServer) -> None:
    said = await contained(model, "import os\nwhile True:\n    os.fork()")
    assert said.endswith("line 3: os.fork()\nPermissionError: [Errno 1] Operation not permitted")


async def test_leaving_the_process_group_is_refused(model: ModelServer) -> None:
    said = await contained(model, "import os\nos.setsid()")
    assert said.endswith("line 2: os.setsid()\nPermissionError: [Errno 1] Operation not permitted")


async def test_starting_a_process_is_refused(model: ModelServer) -> None:
    said = await contained(model, "import subprocess\nsubprocess.run(['/usr/bin/true'])")
    assert said.endswith("PermissionError: [Errno 1] Operation not permitted")


async def test_an_endless_loop_is_stopped_at_its_cpu_limit(model: ModelServer) -> None:
    said = await contained(model, "while True:\n    pass", SandboxLimits(wall_seconds=WALL, cpu_seconds=1))
    assert said.endswith("The program failed: the program used up its CPU time (1 s) and was stopped")


async def test_an_endless_loop_that_ignores_the_cpu_signal_is_killed(model: ModelServer) -> None:
    program = "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass"
    said = await contained(model, program, SandboxLimits(wall_seconds=WALL, cpu_seconds=1))
    assert said.endswith(
        "The program failed: the program was killed (at its CPU time limit, 1 s, if it ignored the first signal)"
    )


async def test_the_program_s_own_exit_is_an_error(model: ModelServer) -> None:
    said = await contained(model, "import os\nos._exit(7)")
    assert said.endswith("The program failed: the program's process ended without a result (exit status 7)")


async def test_a_program_that_waits_forever_is_stopped_at_its_time_limit(model: ModelServer) -> None:
    program = "import asyncio\nawait asyncio.Event().wait()"
    said = await contained(model, program, SandboxLimits(wall_seconds=3))
    assert said.endswith("The program failed: the program ran over its time limit (3 s) and was stopped")


async def test_the_machine_s_files_are_not_there(model: ModelServer) -> None:
    said = await contained(model, "open('/etc/passwd').read()")
    assert said.endswith("FileNotFoundError: [Errno 2] No such file or directory: '/etc/passwd'")
    said = await contained(model, "import os\nreturn os.listdir('/')")
    listed = orjson.loads(said.removeprefix("Result:\n"))
    assert {"usr", "scratch"} <= set(listed) and not {"etc", "proc", "tmp", "var", "sys", "run", "work"} & set(listed)


async def test_writing_outside_the_scratch_folder_fails(model: ModelServer, tmp_path: Path) -> None:
    outside = tmp_path / "escaped.txt"
    said = await contained(model, f"open({str(outside)!r}, 'w').write('x')")
    assert said.endswith(f"FileNotFoundError: [Errno 2] No such file or directory: {str(outside)!r}")
    assert not outside.exists()
    said = await contained(model, "open('/usr/escaped.txt', 'w')")
    assert said.endswith("OSError: [Errno 30] Read-only file system: '/usr/escaped.txt'")
    said = await contained(model, "open('notes.txt', 'w').write('kept'); return open('/scratch/notes.txt').read()")
    assert said.endswith("Result:\nkept")


async def test_the_scratch_folder_is_capped(model: ModelServer) -> None:
    program = "open('big', 'wb').write(bytes(2**20))"
    said = await contained(model, program, SandboxLimits(wall_seconds=WALL, scratch_bytes=2**19))
    assert said.endswith("OSError: [Errno 28] No space left on device")


async def test_opening_a_socket_is_refused(model: ModelServer) -> None:
    port = int(model.openai_url.split(":")[-1].split("/")[0])  # a real server, listening on the host
    said = await contained(model, f"import socket\nsocket.create_connection(('127.0.0.1', {port}))")
    assert said.endswith("PermissionError: [Errno 1] Operation not permitted")


async def test_importing_ctypes_is_refused(model: ModelServer) -> None:
    said = await contained(model, "import ctypes\nctypes.CDLL(None)")
    assert said.endswith(
        "line 1: import ctypes\nImportError: ctypes is not available in code mode's sandbox (no native code)"
    )


async def test_huge_output_is_cut(model: ModelServer) -> None:
    said = await contained(model, "for _ in range(100_000):\n    print('x' * 100)\nreturn 'printed'")
    assert said.startswith("Printed:\nxxx") and said.endswith(
        "more characters were printed and not kept]\n\nResult:\nprinted"
    )
    assert len(said) < 9_000


async def test_memory_exhaustion_is_a_memory_error(model: ModelServer) -> None:
    said = await contained(model, "hoard = bytearray(2**33)")
    assert said.endswith(
        "line 1: hoard = bytearray(2**33)\nMemoryError: the program went over its memory limit (512 MiB)"
    )


async def test_a_result_over_the_bridge_s_limit_is_refused(model: ModelServer) -> None:
    said = await contained(model, "return 'x' * 5 * 2**20")
    assert said.endswith("The program failed: the program sent over 4 MiB at once (in a call or its result)")


async def test_a_result_that_is_not_json_is_an_error(model: ModelServer) -> None:
    said = await contained(model, "return [float('nan')]")
    assert said.endswith(
        "The program failed: the result cannot be sent as JSON: Out of range float values are not JSON compliant"
    )
    said = await contained(model, "return {1, 2}")
    assert said == "Result:\n{1, 2}"  # what JSON cannot hold is sent as its repr


async def test_garbage_on_the_bridge_ends_the_program(model: ModelServer) -> None:
    program = "import os\nfor fd in range(3, 10):\n    try:\n        os.write(fd, b'not json\\n')\n    except OSError:\n        pass\nawait asyncio.sleep(60)"
    said = await contained(model, "import asyncio\n" + program)
    assert said.endswith("The program failed: the program wrote something that is not a tool call on the tool bridge")


async def test_a_call_of_a_tool_that_is_not_offered_never_reaches_a_server(model: ModelServer) -> None:
    program = "import os, json\nfor fd in range(3, 10):\n    try:\n        os.write(fd, json.dumps({'call': 1, 'tool': 'nuke', 'arguments': {}}).encode() + b'\\n')\n    except OSError:\n        pass\nawait asyncio.sleep(60)"
    said = await contained(model, "import asyncio\n" + program)
    assert said.endswith("the program wrote something that is not a tool call on the tool bridge")
