"""``toolwire run FILE[:OBJECT]``: serve a file's Server over stdio, or over HTTP; and the
serving options ``proxy`` shares with it.

It is what desktop MCP clients launch, so it imports only what serving over stdio needs."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Any

from . import USAGE
from .common import Parser, ServingFailed, UsageError, command_parser, load_server, split_command


def _run_parser() -> Parser:
    parser = command_parser(
        "run",
        USAGE.split("\n       toolwire tools", 1)[0].removeprefix("usage: "),
        "Serve the Server defined in FILE over stdio (stdout carries only protocol messages; logs\n"
        "go to stderr), or with --http over Streamable HTTP. Without :OBJECT it serves the module's\n"
        "server, mcp or app, or its only Server; an OBJECT that is a function is called to make one.\n"
        "A folder (DIR) serves the tools, resources and prompts of every such file in it; with --reload\n"
        "they are loaded again when one changes.",
        "Words after -- are the file's own command line (its sys.argv[1:]).",
    )
    parser.add_argument("file", metavar="FILE[:OBJECT]", nargs="?", help=argparse.SUPPRESS)
    serving_arguments(parser)
    parser.add_argument(
        "--reload",
        action="store_true",
        help="for a folder of tool files: load them again when one changes, telling clients the lists changed",
    )
    parser.add_argument(
        "--tasks",
        metavar="DB",
        help="keep the tasks of tools declared with task= in this SQLite file (made if missing), or in "
        "Redis for a redis:// URL, so that they outlive the process",
    )
    parser.add_argument(
        "--redis", metavar="URL", help="share what replicas behind one address need (tasks, requestState keys)"
    )
    parser.add_argument(
        "--queue",
        metavar="URL",
        help="queue mode (with --redis): calls that run as tasks go on this task queue (a redis:// URL) for "
        "`toolwire worker` processes to run",
    )
    parser.add_argument(
        "--max-queued",
        metavar="N",
        type=_positive,
        default=10_000,
        help="with --queue: jobs the queue holds (waiting or running) before task calls are refused (default 10000)",
    )
    parser.add_argument(
        "--skills",
        metavar="DIR",
        action="append",
        default=[],
        help="serve the agent skills of DIR (a folder with a SKILL.md, or a folder of them); may be repeated",
    )
    parser.add_argument(
        "--issuer", metavar="URL", help="ask every request for an OAuth access token (a JWT) from this server"
    )
    parser.add_argument(
        "--audience",
        metavar="URI",
        help="the tokens' audience: this server's public URL (default: http://HOST:PORT/mcp)",
    )
    parser.add_argument(
        "--scope", metavar="SCOPE", dest="scopes", action="append", default=[], help="a scope every request needs"
    )
    parser.add_argument(
        "--oauth-upstream",
        metavar="DISCOVERY_URL_OR_PRESET",
        help="be the authorization server MCP clients sign in at, signing people in at this identity provider "
        "(its secret in $TOOLWIRE_OAUTH_CLIENT_SECRET)",
    )
    parser.add_argument("--oauth-client-id", metavar="ID", help="this server's client ID at the identity provider")
    parser.add_argument(
        "--public-url",
        metavar="URL",
        help="with --oauth-upstream: the MCP endpoint's URL as clients reach it (default: http://HOST:PORT/mcp)",
    )
    parser.add_argument(
        "--oauth-state",
        metavar="WHERE",
        help="with --oauth-upstream: keep sign-ins and tokens in this SQLite file or redis:// URL "
        "(default: the --redis URL, else a file in ~/.local/state/toolwire)",
    )
    parser.add_argument(
        "--allow-upstream-token",
        action="store_true",
        help="with --oauth-upstream: keep the identity provider's tokens (sealed with $TOOLWIRE_VAULT_KEYS) "
        "for tools to call it as the person (ctx.upstream_token())",
    )
    return parser


def main(command: str, argv: list[str]) -> int:
    """``toolwire run FILE[:OBJECT] [options] [-- ARG ...]``: serve until stdin ends or Ctrl-C."""
    argv, own = split_command(argv)
    options = _run_parser().parse_args(argv)
    target: str | None = options.file
    if target is None:
        raise UsageError("run needs a FILE: toolwire run FILE[:OBJECT] [options], or a folder: toolwire run DIR")
    if options.reload and not os.path.isdir(target):
        raise UsageError("--reload is for a folder of tool files (toolwire dev FILE restarts a file when it changes)")
    sys.argv = [target.partition(":")[0], *(own or [])]
    if options.tasks is not None and options.redis is not None:
        raise UsageError("--tasks and --redis do not go together: --redis keeps the tasks in Redis")
    if options.queue is not None and options.redis is None:
        raise UsageError("--queue needs --redis URL: the workers read the tasks from the replicas' store")
    http_options = run_http_arguments(options)
    if options.http is None:
        from ..transports.stdio import protect_stdout, run_stdio

        protocol = protect_stdout()  # before the file is imported: a print() there goes to stderr
        server = _loaded(target, options)
        if os.isatty(0):  # a person started it: say what it is, since it waits in silence
            sys.stderr.write(
                f"toolwire: serving {target} over stdio: it reads JSON-RPC messages, one per line "
                "(Ctrl-D or Ctrl-C stops it)\n"
            )
        with contextlib.suppress(KeyboardInterrupt):
            run_stdio(server, stdout=protocol)
        return 0
    server = _loaded(target, options)
    host, port = options.http
    if options.issuer is not None:
        from ..auth import ProtectedResource

        audience = options.audience or f"http://{host}:{port}/mcp"
        try:
            http_options["auth"] = ProtectedResource.for_issuer(
                options.issuer, audience, required_scopes=options.scopes
            )
        except ValueError as exc:
            raise UsageError(f"--issuer/--audience: {exc}") from None
    if options.oauth_upstream is not None:
        http_options["auth"] = _authorization_server(options, host, port)
    serve_http(server, target, options, http_options)
    return 0


#: Where the identity provider's client secret is read from (never from the command line).
SECRET_VARIABLE = "TOOLWIRE_OAUTH_CLIENT_SECRET"


def _authorization_server(options: argparse.Namespace, host: str, port: int) -> Any:
    """The :class:`~toolwire.auth.server.authorization.AuthorizationServer` of the
    ``--oauth-*`` options; :class:`UsageError` saying what is missing or wrong."""
    from ..auth.server.authorization import AuthorizationServer
    from ..auth.server.upstreams import resolve_upstream
    from ..auth.server.vault import VaultError

    secret = os.environ.get(SECRET_VARIABLE)
    if not secret:
        raise UsageError(
            f"--oauth-upstream: set {SECRET_VARIABLE} to the client secret the identity provider gave "
            "(it is never taken from the command line)"
        )
    try:
        upstream = resolve_upstream(options.oauth_upstream, options.oauth_client_id, secret)
        return AuthorizationServer(
            upstream,
            options.public_url or f"http://{host}:{port}/mcp",
            state=options.oauth_state or options.redis,
            required_scopes=options.scopes,
            allow_upstream_token=options.allow_upstream_token,
        )
    except ValueError as exc:
        raise UsageError(f"--oauth-upstream: {exc}") from None
    except VaultError as exc:
        raise UsageError(f"--allow-upstream-token: {exc}") from None


def _loaded(target: str, options: argparse.Namespace) -> Any:
    """The target's Server; with ``-v``, logging a line per request it runs code for; with
    ``--tasks``, keeping its tasks in that store; with ``--redis``, sharing its state with
    other replicas through that Redis; with ``--skills``, serving those skills
    (:class:`UsageError` saying what is wrong with one)."""
    set_verbosity(options.verbose)
    server = _folder_server(target, options.reload) if os.path.isdir(target) else load_server(target)
    if options.tasks is not None:
        server.use_task_store(options.tasks)
    if options.redis is not None:
        server.use_redis(options.redis)
    if options.queue is not None:
        try:
            server.use_queue(options.queue, max_depth=options.max_queued)
        except ValueError as exc:
            raise UsageError(f"--queue: {exc}") from None
    for folder in options.skills:
        try:
            server.add_skills(folder)
        except (ValueError, ImportError) as exc:
            raise UsageError(f"--skills {folder}: {exc}") from None
    from ..tasks.store import TaskStoreUnusable

    try:
        server.open_task_store()
    except TaskStoreUnusable as exc:
        raise ServingFailed(str(exc)) from None
    if options.verbose:
        from ..guards.requestlog import RequestLog

        server.use(RequestLog())
    return server


def _folder_server(path: str, reload: bool) -> Any:
    """A Server named after the folder ``path``, serving its tool files (what cannot be
    served is said on stderr, a line each, and the rest is served)."""
    from ..server.server import Server

    name = os.path.basename(os.path.abspath(path)) or "tools"
    server = Server(name)
    server.add_folder(path, reload=reload)
    return server


def serving_arguments(parser: Parser) -> None:
    """The options ``run`` and ``proxy`` share: how they serve."""
    parser.add_argument(
        "-v", dest="verbose", action="store_true", help="log at INFO level on stderr, and a line per request"
    )
    parser.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        type=_address,
        help="serve over Streamable HTTP at http://HOST:PORT/mcp (HOST: 127.0.0.1 by default) instead of stdio",
    )
    parser.add_argument(
        "--allow-host",
        metavar="HOST",
        dest="allowed_hosts",
        action="append",
        default=[],
        help="accept this Host name too (needed when HOST is not local; repeatable)",
    )
    parser.add_argument("--stateless", action="store_true", help="keep no sessions")
    runners = parser.add_mutually_exclusive_group()
    runners.add_argument(
        "--uvicorn", dest="runner", action="store_const", const="uvicorn", default="toolwire", help="serve with uvicorn"
    )
    runners.add_argument(
        "--granian", dest="runner", action="store_const", const="granian", help="serve with granian (its extra)"
    )
    parser.add_argument(
        "--forwarded-allow-ips",
        metavar="IPS",
        type=_trusted_proxies,
        help="the reverse proxies (comma-separated addresses or networks, * for any) whose "
        "X-Forwarded-For or Forwarded header names the client",
    )
    parser.add_argument(
        "--max-connections-per-client",
        metavar="N",
        type=_positive,
        help="how many connections one client address may hold (default 100)",
    )


def _trusted_proxies(value: str) -> str:
    """``--forwarded-allow-ips``'s value, checked as :class:`TrustedProxies` would read it."""
    from ..transports.http.forwarded import TrustedProxies

    try:
        TrustedProxies(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def _positive(value: str) -> int:
    """A whole number above 0."""
    if not (value.isascii() and value.isdigit()) or int(value) < 1:
        raise argparse.ArgumentTypeError(f"expected a number above 0, not {value!r}")
    return int(value)


def _address(value: str) -> tuple[str, int]:
    """``[HOST:]PORT`` as ``(host, port)``, the host 127.0.0.1 when none is given."""
    host, _, port = value.rpartition(":")
    if not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected [HOST:]PORT, not {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def run_http_arguments(options: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of ``run_http`` the options give; :class:`UsageError` for options
    that need another, :class:`~toolwire.extras.ExtraMissing` for one whose extra is missing
    (before the file is imported, so that it is the first thing said)."""
    from ..extras import require

    issuer = getattr(options, "issuer", None)
    served = {
        "forwarded_allow_ips": options.forwarded_allow_ips,
        "max_connections_per_client": options.max_connections_per_client,
    }
    served = {name: value for name, value in served.items() if value is not None}
    if options.http is None and (
        options.allowed_hosts or options.stateless or options.runner != "toolwire" or issuer or served
    ):
        raise UsageError(
            "--allow-host, --stateless, --uvicorn, --granian, --issuer, --forwarded-allow-ips and "
            "--max-connections-per-client go with --http"
        )
    upstream = getattr(options, "oauth_upstream", None)
    scoped = getattr(options, "scopes", None) and upstream is None
    if (getattr(options, "audience", None) or scoped) and issuer is None:
        raise UsageError("--audience and --scope go with --issuer (--scope with --oauth-upstream too)")
    if upstream is not None and issuer is not None:
        raise UsageError(
            "--issuer and --oauth-upstream do not go together: with --oauth-upstream, this server issues the tokens"
        )
    if upstream is not None and options.http is None:
        raise UsageError("--oauth-upstream goes with --http")
    if upstream is not None and not getattr(options, "oauth_client_id", None):
        raise UsageError("--oauth-upstream needs --oauth-client-id: this server's client ID at the identity provider")
    oauth_only = ("oauth_client_id", "public_url", "oauth_state", "allow_upstream_token")
    if upstream is None and any(getattr(options, name, None) for name in oauth_only):
        raise UsageError(
            "--oauth-client-id, --public-url, --oauth-state and --allow-upstream-token go with --oauth-upstream"
        )
    if upstream is not None:
        require("auth", "--oauth-upstream")
    if options.runner == "granian":
        require("granian", "--granian")
    if getattr(options, "redis", None) is not None:
        require("redis", "--redis")
    if getattr(options, "queue", None) is not None:
        require("workers", "--queue")
    if (getattr(options, "tasks", None) or "").startswith(("redis://", "rediss://", "unix://")):
        require("redis", "--tasks with a Redis URL")
    if issuer is not None:
        require("auth", "--issuer")
    return {"allowed_hosts": options.allowed_hosts, "stateless": options.stateless, "runner": options.runner, **served}


def set_verbosity(verbose: bool) -> None:
    """With ``-v``, log at INFO level on stderr (otherwise warnings and errors reach stderr
    through logging's last resort)."""
    if verbose:
        import logging

        logging.basicConfig(
            stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )


def serve_http(server: Any, shown: str, options: argparse.Namespace, http_options: dict[str, Any]) -> None:
    """Serve over HTTP at ``options.http`` until Ctrl-C; :class:`ServingFailed` if it cannot listen."""
    from ..transports.http.serve import CannotListen

    host, port = options.http

    def ready() -> None:
        sys.stderr.write(f"toolwire: serving {shown} at http://{host}:{port}/mcp (Ctrl-C stops it)\n")

    try:
        with contextlib.suppress(KeyboardInterrupt):
            log_level = "info" if options.verbose else "warning"
            server.run_http(host, port, log_level=log_level, on_ready=ready, **http_options)
    except CannotListen as exc:
        raise ServingFailed(str(exc)) from None
