"""``toolwire tools`` and ``toolwire call``: any MCP server's tools, from a terminal.

    toolwire tools server.py                      a table of the tools
    toolwire tools --json -- npx -y some-server   their definitions, as JSON
    toolwire call server.py echo text=hi          call one, print its result

Both connect with :class:`toolwire.client.Client`, so they speak either protocol era to any
server. The grammar is in :mod:`.commandline`, how ``KEY=VALUE`` words become arguments in
:mod:`.schemas`, what is printed in :mod:`.table`, :mod:`.output` and :mod:`.progress`.

This package is imported only for these two commands: ``toolwire run`` never loads it.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import os
import sys
from collections.abc import AsyncIterator

import orjson

from ..cli import UsageError
from ..client import Client, ClientError, ToolInfo
from .commandline import Invocation, parse
from .output import print_result, printable, write
from .progress import ProgressDisplay
from .schemas import arguments

#: How many lines of a crashed server's stderr an error message quotes.
STDERR_LINES = 20


def main(command: str, argv: list[str]) -> int:
    """Run ``toolwire COMMAND ARGV...`` (``tools`` or ``call``); returns the exit status.

    0: done. 1: the tool reported an error, or the server could not be started or reached,
    answered with an error, crashed, broke the protocol or its own output schema, sent
    something unreadable, or took longer than the timeout. 2: the command line is wrong. 130: interrupted (Ctrl-C).
    Every failure is one line ``toolwire: ...`` on stderr, never a traceback (a crashed
    server's own last words on stderr follow, indented).
    """
    try:
        return asyncio.run(_run(parse(command, argv)))
    except UsageError as exc:
        _fail(str(exc))
        return 2
    except ClientError as exc:
        _fail(str(exc))
        return 1
    except BrokenPipeError:  # stdout was closed early (`toolwire tools x.py | head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:
        _fail(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc.strerror or exc))
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # what a server sent broke something unforeseen: still one line
        _fail(f"unexpected error: {type(exc).__name__}: {exc}")
        return 1


async def _run(invocation: Invocation) -> int:
    async with _connected(invocation) as client:
        tools = await client.list_tools()
        if invocation.command == "tools":
            if invocation.as_json:
                write(orjson.dumps([tool.raw for tool in tools], option=orjson.OPT_INDENT_2).decode())
            else:
                from .table import print_tools

                print_tools(tools, client.server_info, client.version)
            return 0
        tool = _find(invocation.tool, tools)
        if invocation.arguments is None:
            invocation.arguments = arguments(invocation.pairs, tool.input_schema)
        progress = ProgressDisplay(tool.name)
        try:
            result = await client.call_tool(tool.name, invocation.arguments, progress=progress.update)
        finally:
            progress.close()
        if result.is_error:
            raise ClientError(f"tool {tool.name!r} failed: {result.text or '(no message)'}")
        print_result(result, tool.name, invocation.out)
        return 0


@contextlib.asynccontextmanager
async def _connected(invocation: Invocation) -> AsyncIterator[Client]:
    """A connected client, closed after; :class:`ClientError` if the server cannot start."""
    client = Client(invocation.target, env=invocation.env, protocol=invocation.protocol, timeout=invocation.timeout)
    await client.connect()
    try:
        yield client
    finally:
        await client.close()


def _find(name: str, tools: list[ToolInfo]) -> ToolInfo:
    """The tool named ``name``; :class:`ClientError` saying which there are if none."""
    for tool in tools:
        if tool.name == name:
            return tool
    names = [tool.name for tool in tools]
    close = difflib.get_close_matches(name, names, n=1)
    if close:
        raise ClientError(f"the server has no tool named {name!r}: did you mean {close[0]!r}?")
    if not names:
        raise ClientError(f"the server has no tool named {name!r}: it has no tools at all")
    listed = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    raise ClientError(f"the server has no tool named {name!r}; it has {listed}")


def _fail(message: str) -> None:
    """Write ``toolwire: MESSAGE`` to stderr; lines after the first (a server's stderr) are
    indented, and only the last :data:`STDERR_LINES` of them kept."""
    first, *rest = message.strip().splitlines() or [""]
    lines = [f"toolwire: {first}", *(f"  {line}" for line in rest[-STDERR_LINES:])]
    sys.stderr.write(printable("\n".join(lines)) + "\n")
