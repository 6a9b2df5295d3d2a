"""``toolwire gateway gateway.toml``: many MCP servers served as one (see :mod:`toolwire.gateway`)."""

from __future__ import annotations

import contextlib

from .common import UsageError, command_parser
from .run import run_http_arguments, serve_http, serving_arguments, set_verbosity


def main(command: str, argv: list[str]) -> int:
    """``toolwire gateway CONFIG [--stdio | --http [HOST:]PORT] [options]``: serve the
    upstreams of CONFIG as one server. A configuration that cannot be used is a
    :class:`UsageError` naming the table and the key."""
    parser = command_parser(
        "gateway",
        "toolwire gateway CONFIG [--stdio | --http [HOST:]PORT [--allow-host HOST ...] [--stateless]\n"
        "                        [--uvicorn | --granian] [--forwarded-allow-ips IPS]\n"
        "                        [--max-connections-per-client N]] [-v]",
        "Serve the MCP servers a gateway.toml names (its upstreams) as one server, each under\n"
        "its namespace (github.create_issue): over stdio (the default, for desktop clients), or\n"
        "with --http over Streamable HTTP for clients of every protocol version.",
        "The smallest CONFIG is one table per upstream:\n"
        '  [upstreams.files]\n  command = ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv"]\n'
        '  [upstreams.github]\n  url = "https://example.com/mcp"\n'
        "docs/gateway.md describes every table.",
    )
    parser.add_argument("config", metavar="CONFIG", help="the gateway.toml file")
    parser.add_argument("--stdio", action="store_true", help="serve over stdio (the default)")
    serving_arguments(parser)
    options = parser.parse_args(argv)
    if options.stdio and options.http is not None:
        raise UsageError("--stdio and --http: choose one")
    http_options = run_http_arguments(options)
    set_verbosity(options.verbose)
    from ..gateway import ConfigError, Gateway

    try:
        gateway = Gateway.from_file(options.config)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    if options.verbose:
        from ..guards.requestlog import RequestLog

        gateway.server.use(RequestLog())
    if options.http is None:
        from ..transports.stdio import protect_stdout, run_stdio

        with contextlib.suppress(KeyboardInterrupt):
            run_stdio(gateway.server, stdout=protect_stdout())
        return 0
    host, port = options.http
    try:
        http_options["auth"] = gateway.caller_auth(f"http://{host}:{port}/mcp")
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    serve_http(gateway.server, f"the gateway {gateway.config.name!r}", options, http_options)
    return 0
