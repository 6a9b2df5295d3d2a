"""``toolwire search``: which tools of some servers fit a request, best first.

    toolwire search TARGET... QUERY [--limit N] [--json] [--config FILE] [-- COMMAND ...]

The servers are named as ``toolwire chat`` names them (:mod:`.hostline`: ``FILE.py``, a URL,
``NAME=TARGET``, an ``mcpServers`` file, one command line after ``--``); the last word is
the request. Every server's tools are ranked together (:mod:`toolwire.discovery`, the
``search`` extra) and printed as a table, or with ``--json`` as a JSON array of objects with
``name``, ``server``, ``score``, ``title`` and ``description``, best first.

Exit status: 0 done (also when nothing matches: an empty table or ``[]``); 1 no server could
be started, or the ``search`` extra is missing; 2 a mistake on the command line; 130
interrupted. A server that cannot be started is named on stderr and the others are searched.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from ..cli.common import Parser, UsageError, command_parser, split_command
from ..discovery import MAX_QUERY_CHARS, ToolMatch
from ..extras import ExtraMissing, require
from ..host import Host
from .commandline import seconds
from .hostline import is_target, server_specs
from .output import printable, write_json

USAGE = (
    "toolwire search TARGET... QUERY [--limit N] [--json] [--config FILE] [--timeout SECONDS]\n"
    "       toolwire search [TARGET...] QUERY [options] -- COMMAND [ARG ...]"
)
DESCRIPTION = (
    "Rank the tools of MCP servers for a request (BM25 over their names, descriptions and\n"
    "parameters) and print the best, best first."
)
EPILOG = """TARGET: FILE.py[:OBJECT] (served by `toolwire run`), an http(s) URL, or NAME=TARGET to
name the server; --config reads an "mcpServers" JSON file; one server's command line may
follow --. QUERY is the last word: quote it ("send an email").

exit status: 0 done (also when nothing matches); 1 no server could be started, or the
'search' extra is missing; 2 a mistake on the command line; 130 interrupted."""


def main(argv: list[str]) -> int:
    """Run ``toolwire search ARGV...``; returns the exit status (see the module's description)."""
    try:
        own, server_command = split_command(argv)
        options = parser().parse_intermixed_args(own)  # -h first: the help needs no extra
        require("search", "toolwire search")
        return asyncio.run(_search(options, server_command))
    except ExtraMissing as exc:
        sys.stderr.write(f"toolwire: {exc}\n")
        return 1
    except KeyboardInterrupt:
        return 130


def parser() -> Parser:
    parser = command_parser("search", USAGE, DESCRIPTION, EPILOG)
    parser.add_argument("words", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--limit", metavar="N", type=_count, default=10, help="how many tools to show (default: 10)")
    parser.add_argument("--json", action="store_true", help="print the tools found as a JSON array")
    parser.add_argument("--config", metavar="FILE", help='servers from an "mcpServers" JSON file')
    parser.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=seconds,
        default=30.0,
        help="how long a server may take to answer (default: 30)",
    )
    return parser


async def _search(options: argparse.Namespace, server_command: list[str] | None) -> int:
    words: list[str] = options.words
    alone = len(words) == 1 and server_command is None and options.config is None
    if not words or (alone and is_target(words[0])):
        raise UsageError('the query is needed, after the servers: toolwire search TARGET... "query"')
    query, specs = words[-1], server_specs(words[:-1], server_command, options.config)
    if len(query) > MAX_QUERY_CHARS:
        raise UsageError(f"the query has {len(query)} characters, over {MAX_QUERY_CHARS}: say it in a few words")
    host = Host(specs, defer_tools=None, client_options={"timeout": options.timeout})
    await host.start()
    try:
        for name, server in host.servers.items():
            if server.error is not None:
                sys.stderr.write(printable(f"toolwire: the server {name!r} is not available: {server.error}") + "\n")
        if not any(server.alive for server in host.servers.values()):
            return 1
        matches = await host.search_tools(query, options.limit)
    finally:
        await host.close()
    if options.json:
        write_json([match.to_dict() for match in matches])
    else:
        _print(matches, query)
    return 0


def _print(matches: list[ToolMatch], query: str) -> None:
    """A table of the tools found: rank, name, server, score, the description's first sentence."""
    from rich.console import Console
    from rich.table import Table

    from .table import summary

    console = Console(highlight=False)
    if not matches:
        console.print(printable(f"no tool matches {query!r}"), markup=False)
        return
    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("#", "tool", "server", "score", "description"):
        table.add_column(column, justify="right" if column in ("#", "score") else "left")
    for rank, match in enumerate(matches, 1):
        table.add_row(
            str(rank),
            printable(match.name, lines=False),
            printable(match.server, lines=False),
            f"{match.score:.2f}",
            printable(summary(match.tool.description), lines=False),
        )
    console.print(table)


def _count(value: str) -> int:
    if not (value.isascii() and value.isdigit()) or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a number above 0, not {value!r}")
    return int(value)
