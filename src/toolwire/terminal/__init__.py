"""The commands that talk to any MCP server from a terminal: its tools, resources and prompts.

    toolwire tools server.py                      a table of the tools
    toolwire tools --json -- npx -y some-server   their definitions, as JSON
    toolwire call server.py echo text=hi          call one, print its result
    toolwire resources server.py                  a table of the resources and templates
    toolwire read server.py file:///notes.txt     read one, print or save its contents
    toolwire prompts server.py                    a table of the prompts
    toolwire prompt server.py review code=x       get one, print its messages

All connect with :class:`toolwire.client.Client`, so they speak either protocol era to any
server. The grammar is in :mod:`.commandline`, what each command does in :mod:`.commands`,
how ``KEY=VALUE`` words become a tool's arguments in :mod:`.schemas`, what is printed in
:mod:`.table`, :mod:`.output` and :mod:`.progress`.

This package is imported only for these commands: ``toolwire run`` never loads it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

from ..cli.common import UsageError
from ..client import Client, ClientError
from ..tracebacks import own_lines
from .commandline import Invocation, parse
from .commands import ACTIONS
from .output import printable

#: How many lines of a crashed server's stderr an error message quotes.
STDERR_LINES = 20


def main(command: str, argv: list[str]) -> int:
    """Run ``toolwire COMMAND ARGV...`` (COMMAND one of :data:`.commandline.COMMANDS`);
    returns the exit status.

    0: done. 1: the tool reported an error, the resource or prompt does not exist, or the
    server could not be started or reached, answered with an error, crashed, broke the
    protocol or its own output schema, sent something unreadable, or took longer than the
    timeout. 130: interrupted (Ctrl-C). A mistake on the command line raises
    :class:`UsageError` (status 2).
    Every failure is one line ``toolwire: ...`` on stderr, never a traceback (a crashed
    server's own last words on stderr follow, indented).
    """
    try:
        return asyncio.run(_run(parse(command, argv)))
    except UsageError:
        raise  # toolwire.cli says it, naming the command's help
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
    if invocation.queue is not None:
        from .commands import show_queue

        await show_queue(invocation.queue, invocation.as_json)
        return 0
    async with _connected(invocation) as client:
        await ACTIONS[invocation.command](client, invocation)
    return 0


@contextlib.asynccontextmanager
async def _connected(invocation: Invocation, protocol: str | None = None) -> AsyncIterator[Client]:
    """A connected client (speaking ``protocol``, if given), closed after; :class:`ClientError`
    if the server cannot start."""
    target = invocation.target
    auth = None
    if isinstance(target, str) and target.startswith(("http://", "https://")):
        from .auth import terminal_oauth

        auth = terminal_oauth()  # asks only when the server does
    client = Client(
        target,
        env=invocation.env,
        protocol=protocol or invocation.protocol or ("2025-11-25" if invocation.command == "tasks" else None),
        timeout=invocation.timeout,
        auth=auth,
        log_level=invocation.log_level,
        on_log=_show_log if invocation.log_level else None,
    )
    await client.connect()
    try:
        yield client
    finally:
        await client.close()


def _show_log(params: dict[str, Any]) -> None:
    """A log message of the server, on stderr: ``[level] logger: data``."""
    import orjson

    data = params.get("data")
    text = data if isinstance(data, str) else orjson.dumps(data).decode()
    logger = f" {params['logger']}:" if params.get("logger") else ""
    sys.stderr.write(printable(f"[{params.get('level', 'info')}]{logger} {text}") + "\n")


def _fail(message: str) -> None:
    """Write ``toolwire: MESSAGE`` to stderr; lines after the first (a server's stderr) are
    indented, toolwire's frames left out of tracebacks, and only the last
    :data:`STDERR_LINES` of them kept."""
    first, *rest = message.strip().splitlines() or [""]
    rest = own_lines("\n".join(rest)).splitlines()
    lines = [f"toolwire: {first}", *(f"  {line}" for line in rest[-STDERR_LINES:])]
    sys.stderr.write(printable("\n".join(lines)) + "\n")
