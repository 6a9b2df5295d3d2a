"""``toolwire openapi SPEC``: serve the HTTP API an OpenAPI document describes, over stdio (or
with ``--http`` over Streamable HTTP), as ``toolwire run`` serves a file's server (its options:
:mod:`toolwire.openapi.command`).

Being a command line, it works wherever a server's command line does: ``toolwire dev --
toolwire openapi SPEC ...``, ``toolwire proxy``, ``toolwire search``, ``toolwire chat``, and
``toolwire install CLIENT -- toolwire openapi SPEC ...`` writes it into a client's
configuration."""

from __future__ import annotations

import contextlib
import os
import sys

from ..openapi.command import build_server, parser
from .common import UsageError
from .run import run_http_arguments, serve_http, set_verbosity


def main(command: str, argv: list[str]) -> int:
    """``toolwire openapi SPEC [options]``: serve until stdin ends or Ctrl-C."""
    options = parser().parse_args(argv)
    if options.spec is None:
        raise UsageError("openapi needs a SPEC: an OpenAPI document's file or URL")
    http_options = run_http_arguments(options)
    set_verbosity(options.verbose)
    if options.http is None:
        from ..transports.stdio import protect_stdout, run_stdio

        protocol = protect_stdout()
        server = build_server(options)
        if os.isatty(0):
            sys.stderr.write(f"toolwire: serving {options.spec} over stdio (Ctrl-D or Ctrl-C stops it)\n")
        with contextlib.suppress(KeyboardInterrupt):
            run_stdio(server, stdout=protocol)
        return 0
    serve_http(build_server(options), options.spec, options, http_options)
    return 0
