"""``toolwire proxy TARGET``: any MCP server served as a toolwire server (see :mod:`toolwire.proxy`)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from .common import UsageError, command_parser, one_target, split_command
from .run import run_http_arguments, serve_http, serving_arguments, set_verbosity

#: The proxy's serving options: one in the command line after ``--`` is warned about.
PROXY_OPTIONS = (
    "--extension-method",
    "--http",
    "--allow-host",
    "--stateless",
    "--uvicorn",
    "--granian",
    "--forwarded-allow-ips",
    "--max-connections-per-client",
)


def main(command: str, argv: list[str]) -> int:
    """``toolwire proxy TARGET [options]`` or ``toolwire proxy [options] -- COMMAND ...``:
    serve the target as a toolwire server (see :mod:`toolwire.proxy`). Options after ``--``
    are the command's: one that looks like the proxy's own is warned about on stderr."""
    argv, server_command = split_command(argv)
    parser = command_parser(
        "proxy",
        "toolwire proxy TARGET [--name N] [--extension-method ID=METHOD ...]\n"
        "                      [--http [HOST:]PORT [--allow-host HOST ...] [--stateless]\n"
        "                      [--uvicorn | --granian] [--forwarded-allow-ips IPS]\n"
        "                      [--max-connections-per-client N]] [-v]\n"
        "       toolwire proxy [options] -- COMMAND [ARG ...]",
        "Serve any MCP server as a toolwire server: over stdio, or with --http over Streamable HTTP.\n"
        "It bridges transports and protocol eras (a 2025-11-25-only server offered to 2026-07-28\n"
        "clients, and the other way round).",
        "TARGET: a URL, FILE.py[:OBJECT], or any server's command line after --. Everything after --\n"
        "is that command line, so the proxy's options go before it:\n"
        "  toolwire proxy --http 8000 -- npx -y @modelcontextprotocol/server-everything",
    )
    parser.add_argument("target", metavar="TARGET", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--name", help="the proxy's name (default: the target's)")
    parser.add_argument(
        "--extension-method",
        action="append",
        default=[],
        metavar="ID=METHOD",
        help="forward the requests METHOD of the target's extension ID (skills' are forwarded without it)",
    )
    serving_arguments(parser)
    options = parser.parse_args(argv)
    methods = extension_methods(options.extension_method)
    target = one_target("proxy", options.target, server_command)
    local = isinstance(target, str) and not target.startswith(("http://", "https://"))
    if local and not os.path.isfile(str(target).partition(":")[0]):
        raise UsageError(f"no such file: {str(target).partition(':')[0]}")
    misplaced = [word for word in server_command or [] if word.partition("=")[0] in PROXY_OPTIONS]
    if misplaced:
        sys.stderr.write(
            f"toolwire: warning: {misplaced[0]} comes after --, so it is the server's option, not the proxy's;"
            f" the proxy's options go before --: toolwire proxy {misplaced[0]} ... -- COMMAND\n"
        )
    http_options = run_http_arguments(options)
    set_verbosity(options.verbose)
    from ..proxy import proxy

    server = proxy(target, name=options.name, extension_methods=methods)
    if options.http is None:
        from ..transports.stdio import protect_stdout, run_stdio

        with contextlib.suppress(KeyboardInterrupt):
            run_stdio(server, stdout=protect_stdout())
        return 0
    serve_http(server, " ".join(target) if isinstance(target, list) else target, options, http_options)
    return 0


def extension_methods(pairs: list[str]) -> dict[str, list[str]]:
    """``--extension-method ID=METHOD`` options as ``proxy``'s ``extension_methods``;
    :class:`UsageError` for one without ``=`` or with a side empty."""
    methods: dict[str, list[str]] = {}
    for pair in pairs:
        identifier, _, name = pair.partition("=")
        if not identifier or not name:
            raise UsageError(f"--extension-method takes ID=METHOD (com.example/votes=votes/count), not {pair!r}")
        methods.setdefault(identifier, []).append(name)
    return methods
