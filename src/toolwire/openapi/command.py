"""The command line of an OpenAPI server: ``toolwire openapi``'s options (:func:`parser`)
and the server they describe (:func:`build_server`). Here, beside the feature, so that both
the command (:mod:`toolwire.cli.openapi`) and ``toolwire install`` read it the same way."""

from __future__ import annotations

import argparse
from typing import Any

from ..cli.common import Parser, ServingFailed, command_parser
from ..cli.run import _positive, serving_arguments

USAGE = (
    "toolwire openapi SPEC [--base-url URL] [--header 'NAME: VALUE' ...] [--bearer-env VAR]\n"
    "                      [--include-tag TAG ...] [--exclude-tag TAG ...] [--resources] [--search] [--name N]\n"
    "                      [--timeout SECONDS] [--max-response-bytes N] [-v] [--http [HOST:]PORT ...]"
)


def parser() -> Parser:
    """The parser of ``toolwire openapi``."""
    parser = command_parser(
        "openapi",
        USAGE,
        "Serve the HTTP API an OpenAPI 3.0/3.1 document describes (SPEC: a JSON or YAML file, or a URL):\n"
        "each operation a tool whose calls go to the API. Over stdio, or with --http over Streamable HTTP.",
        "The caller's own credentials are never sent to the API: give the API's with --header or\n"
        "--bearer-env. Other commands take it as a command line after --:\n"
        "  toolwire dev -- toolwire openapi shop.json --base-url http://127.0.0.1:8000",
    )
    parser.add_argument("spec", metavar="SPEC", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--base-url", metavar="URL", help="where the API is (default: the document's first server)")
    parser.add_argument(
        "--header",
        metavar="'NAME: VALUE'",
        dest="headers",
        action="append",
        type=_header,
        default=[],
        help="send this header with every request to the API (repeatable)",
    )
    parser.add_argument(
        "--bearer-env", metavar="VAR", help="send the token in this environment variable as Authorization: Bearer"
    )
    parser.add_argument(
        "--include-tag", metavar="TAG", dest="include_tags", action="append", help="serve only operations tagged TAG"
    )
    parser.add_argument(
        "--exclude-tag", metavar="TAG", dest="exclude_tags", action="append", help="leave out operations tagged TAG"
    )
    parser.add_argument(
        "--resources",
        action="store_true",
        help="serve GET operations as resources (templates for those with path parameters) rather than tools",
    )
    parser.add_argument(
        "--search",
        action="store_true",
        help="list only search_tools and call_tool, which find and run the API's tools (for large APIs; "
        "the 'search' extra)",
    )
    parser.add_argument("--name", help="the server's name (default: the document's title)")
    parser.add_argument("--timeout", metavar="SECONDS", type=_seconds, help="a call's time in all (default: 30)")
    parser.add_argument(
        "--max-response-bytes", metavar="N", type=_positive, help="the largest answer read (default: 4 MiB)"
    )
    serving_arguments(parser)
    return parser


def build_server(options: argparse.Namespace) -> Any:
    """The server the options describe; :class:`ServingFailed` for a document that cannot be
    used, or no base URL (the message says why); :class:`~toolwire.extras.ExtraMissing` for
    ``--search`` without the ``search`` extra (before the document is read)."""
    from ..extras import require
    from ..openapi import OpenAPIError, RouteMap, from_openapi

    if options.search:
        require("search", "--search")

    limits: dict[str, Any] = {}
    if options.timeout is not None:
        limits["timeout"] = options.timeout
    if options.max_response_bytes is not None:
        limits["max_response_bytes"] = options.max_response_bytes
    route_maps = (
        (RouteMap(methods=("GET",), kind="template"), RouteMap(methods=("GET",), kind="resource"))
        if options.resources
        else ()
    )
    try:
        server = from_openapi(
            options.spec,
            options.base_url,
            route_maps=route_maps,
            headers=dict(options.headers),
            bearer_env=options.bearer_env,
            name=options.name,
            include_tags=options.include_tags,
            exclude_tags=options.exclude_tags,
            tool_search=options.search,
            **limits,
        )
    except OpenAPIError as exc:
        raise ServingFailed(str(exc)) from None
    if options.verbose:
        from ..guards.requestlog import RequestLog

        server.use(RequestLog())
    return server


def _header(value: str) -> tuple[str, str]:
    """``NAME: VALUE`` as a pair."""
    name, colon, text = value.partition(":")
    if not colon or not name.strip() or any(c in value for c in "\r\n"):
        raise argparse.ArgumentTypeError(f"expected 'NAME: VALUE', not {value!r}")
    return name.strip(), text.strip()


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, not {value!r}")
    return seconds
