"""The program runner of code mode, run by ``python -I -S`` inside the sandbox (:mod:`.sandbox`).

It imports nothing from toolwire (only the standard library is there). Its standard input
and output are the tool bridge, one JSON object a line; what the program prints goes to
standard error, which the host reads (capped). The host's first line is
``{"program": SOURCE, "tools": [FUNCTION, ...], "limits": {"cpu": SECONDS, "memory": BYTES}}``; then the runner lowers
its own limits (CPU time, address space, open files; they cannot be raised again in the
sandbox) and runs the program as the body of an ``async def`` whose ``return`` (or last
expression) is the result. Each tool is an async function taking keyword arguments: it
writes ``{"call": N, "tool": FUNCTION, "arguments": {...}}`` and waits for
``{"reply": N, "value": ...}`` or ``{"reply": N, "error": TEXT}`` (raised as
:class:`ToolError`). The last line is ``{"result": VALUE}`` or ``{"error": TEXT}`` (the
exception with the program's own lines of its traceback).
"""

from __future__ import annotations

import ast
import asyncio
import importlib.abc
import json
import os
import resource
import sys
import traceback
from collections.abc import Awaitable, Callable, Sequence
from types import ModuleType
from typing import Any

PROGRAM = "<program>"
#: Modules the program may not import: native code could call anything the seccomp filter allows.
REFUSED_MODULES = frozenset({"ctypes", "_ctypes"})


class ToolError(Exception):
    """A tool call that failed or was refused; its text is what the model would have read."""


class _Refuser(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None) -> None:
        if name.partition(".")[0] in REFUSED_MODULES:
            raise ImportError(f"{name} is not available in code mode's sandbox (no native code)")


class Bridge:
    """The host's end of the tool calls: requests out, replies in, matched by number."""

    def __init__(self, reader: asyncio.StreamReader, out: int) -> None:
        self.reader = reader
        self.out = out
        self.waiting: dict[int, asyncio.Future[Any]] = {}
        self.count = 0

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, default=repr, allow_nan=False) + "\n").encode()
        while data:
            data = data[os.write(self.out, data) :]

    async def call(self, function: str, arguments: dict[str, Any]) -> Any:
        self.count += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting[self.count] = future
        self.send({"call": self.count, "tool": function, "arguments": arguments})
        return await future

    async def read_replies(self) -> None:
        while line := await self.reader.readline():
            reply = json.loads(line)
            future = self.waiting.pop(reply["reply"])
            if "error" in reply:
                future.set_exception(ToolError(reply["error"]))
            else:
                future.set_result(reply.get("value"))


def tool_function(bridge: Bridge, function: str) -> Callable[..., Awaitable[Any]]:
    async def call(**arguments: Any) -> Any:
        return await bridge.call(function, arguments)

    call.__name__ = call.__qualname__ = function
    return call


def compiled(source: str) -> Any:
    """The program as the code of ``async def __program__()``; its last expression is returned."""
    body = ast.parse(source, PROGRAM).body
    if body and isinstance(body[-1], ast.Expr):
        body[-1] = ast.copy_location(ast.Return(body[-1].value), body[-1])
    function = ast.parse("async def __program__():\n    pass").body[0]
    assert isinstance(function, ast.AsyncFunctionDef)
    function.body = body or [ast.Pass()]
    module = ast.Module(body=[function], type_ignores=[])
    ast.fix_missing_locations(module)
    return compile(module, PROGRAM, "exec")


def explained(exc: BaseException, source: str, limits: dict[str, int]) -> str:
    """The exception as the model reads it: the program's lines of the traceback, then the error."""
    lines = source.splitlines()
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == PROGRAM]
    said = [f"line {frame.lineno}: {lines[frame.lineno - 1].strip()}" for frame in frames if frame.lineno]
    if isinstance(exc, MemoryError):
        error = f"MemoryError: the program went over its memory limit ({limits['memory'] // 2**20} MiB)"
    elif isinstance(exc, SyntaxError):
        error = f"SyntaxError: {exc.msg} (line {exc.lineno})"
    else:
        error = "".join(traceback.format_exception_only(exc)).strip()
    return "\n".join(["Traceback (the program's lines):", *said, error] if said else [error])


def limit(limits: dict[str, int]) -> None:
    """Lower this process's limits for good (the sandbox has no capability to raise them)."""
    resource.setrlimit(resource.RLIMIT_CPU, (limits["cpu"], limits["cpu"] + 1))
    resource.setrlimit(resource.RLIMIT_AS, (limits["memory"], limits["memory"]))
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


async def run(bridge: Bridge, task: dict[str, Any]) -> dict[str, Any]:
    source: str = task["program"]
    try:
        code = compiled(source)
    except SyntaxError as exc:
        return {"error": explained(exc, source, task["limits"])}
    namespace: dict[str, Any] = {"__name__": "__program__", "ToolError": ToolError}
    for function in task["tools"]:
        namespace[function] = tool_function(bridge, function)
    replies = asyncio.ensure_future(bridge.read_replies())
    try:
        exec(code, namespace)
        return {"result": await namespace["__program__"]()}
    except Exception as exc:  # the program's own failure is its result
        return {"error": explained(exc, source, task["limits"])}
    finally:
        replies.cancel()


async def main() -> None:
    bridge_in, bridge_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)  # the program's prints join its error output
    sys.stdout = open(1, "w", encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    reader = asyncio.StreamReader(limit=2**30)
    loop = asyncio.get_running_loop()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), open(bridge_in, "rb"))  # noqa: SIM115
    task = json.loads(await reader.readline())
    limit(task["limits"])
    sys.meta_path.insert(0, _Refuser())
    bridge = Bridge(reader, bridge_out)
    outcome = await run(bridge, task)
    sys.stdout.flush()
    try:
        bridge.send(outcome)
    except MemoryError:
        bridge.send({"error": explained(MemoryError(), "", task["limits"])})
    except ValueError as exc:  # NaN or infinity
        bridge.send({"error": f"the result cannot be sent as JSON: {exc}"})


if __name__ == "__main__":
    asyncio.run(main())
