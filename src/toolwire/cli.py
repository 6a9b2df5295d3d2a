"""The ``toolwire`` command.

    toolwire run path/to/server.py[:object]      serve a file's Server over stdio
    toolwire run FILE --http [HOST:]PORT         ... or over Streamable HTTP
    toolwire tools TARGET                        list a server's tools
    toolwire call TARGET TOOL [KEY=VALUE ...]    call one of them
    toolwire resources TARGET                    list its resources and resource templates
    toolwire read TARGET URI                     read one
    toolwire prompts TARGET                      list its prompts
    toolwire prompt TARGET NAME [KEY=VALUE ...]  get one
    toolwire chat TARGET... | --config FILE      talk with a model that uses their tools
    toolwire ask TARGET... "question"            ask a model one question, for scripts
    toolwire search TARGET... "query"            which of their tools fit a request

``run`` is what desktop MCP clients launch, so it imports only what serving over stdio
needs. Without ``:object`` it serves the module's ``server``, ``mcp`` or ``app``, or its only
:class:`~toolwire.Server` instance; an object that is a function is called to make one.

Every command has an :mod:`argparse` parser (``toolwire COMMAND -h``) whose mistakes are one
line, ``toolwire: ...``, and exit status 2. Everything after the first ``--`` is a command
line that is not toolwire's: a server's to start, or the served file's own (``run``).
The commands but ``run`` live in :mod:`toolwire.terminal`, imported only when one of them is
the command: ``run`` never pays for them (nor for ``rich`` or the client).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn

USAGE = """usage: toolwire run FILE[:OBJECT] [-v] [--tasks DB | --redis URL] [--http [HOST:]PORT [--allow-host HOST ...]
                                         [--stateless] [--uvicorn | --granian] [--forwarded-allow-ips IPS]
                                         [--max-connections-per-client N]
                                         [--issuer URL [--audience URI] [--scope SCOPE ...]]] [-- ARG ...]
       toolwire tools TARGET [--json] [options]
       toolwire call TARGET TOOL [KEY=VALUE ...] [--json ARGS] [--out DIR] [options]
       toolwire resources TARGET [--json] [options]
       toolwire read TARGET URI [--json] [--out DIR] [options]
       toolwire prompts TARGET [--json] [options]
       toolwire prompt TARGET NAME [KEY=VALUE ...] [--json] [--out DIR] [options]
       toolwire tasks TARGET [--json] [options]
       toolwire task TARGET ID [--wait | --cancel] [--json] [options]
       toolwire chat [TARGET ...] [--config FILE] [--model M] [--provider openai|anthropic] [--base-url URL] [options]
       toolwire ask [TARGET ...] QUESTION [--yes] [--allow PATTERN] [--json] [options]
       toolwire search [TARGET ...] QUERY [--limit N] [--json] [--config FILE]
       toolwire auth login URL | logout URL | status [URL]
       toolwire install claude-desktop|claude-code|cursor|vscode|windsurf FILE [--name N] [--env K=V ...] [--print]
       toolwire proxy [--name N] [--http [HOST:]PORT [--allow-host HOST ...]] [-v] {TARGET | -- COMMAND ...}
       toolwire dev [--port PORT] [--no-browser] [--protocol VERSION] {TARGET | -- COMMAND ...}

commands:
  run FILE[:OBJECT]    serve the Server defined in FILE over stdio (stdout carries only
                       protocol messages; logs go to stderr). -v logs at INFO level, and a
                       line per request (method, tool, outcome, duration).
                       --http serves it over Streamable HTTP at http://HOST:PORT/mcp instead
                       (HOST defaults to 127.0.0.1); --allow-host accepts another Host name
                       (needed when HOST is not local), --stateless keeps no sessions.
                       toolwire's own HTTP/1.1 server serves it; --uvicorn serves with
                       uvicorn instead, --granian with granian (the 'granian' extra).
                       --forwarded-allow-ips names the reverse proxies (comma-separated
                       addresses or networks, * for any) whose X-Forwarded-For tells the
                       client's address; --max-connections-per-client caps one address's
                       connections (default 100).
                       --issuer asks every request for an OAuth access token (a JWT) from that
                       authorization server, issued for --audience (this server's public URL,
                       by default http://HOST:PORT/mcp); --scope: a scope every request needs.
                       --tasks keeps the tasks of tools declared with task= in the SQLite file DB
                       (created if missing), so that they outlive the process, or in Redis when
                       DB is a redis:// URL. --redis URL shares what replicas behind one address
                       need (tasks, the requestState keys) through that Redis.
                       Words after -- are the file's own command line (its sys.argv[1:]).
  tools TARGET         list the tools of a server: a table, or their definitions as JSON.
  call TARGET TOOL     call a tool and print its result; images and audio are saved to files.
                       --task runs it as a task, showing its status until it ends.
  resources TARGET     list the resources and resource templates of a server.
  read TARGET URI      read a resource: text is printed, binary contents saved to files.
  prompts TARGET       list the prompts of a server.
  prompt TARGET NAME   get a prompt and print its messages; images and audio are saved to files.
  tasks TARGET         list the tasks the server shows you (2025-11-25).
  task TARGET ID       show a task; --wait for its result, --cancel to cancel it.
  chat [TARGET ...]    talk with a language model that uses the servers' tools, asking you
                       before calls that are not read-only tools of trusted servers.
  ask [TARGET ...] Q   ask a model one question with the servers' tools; for scripts.
  search [TARGET ...] Q  rank the tools of the servers for a request, best first (the
                       'search' extra); --json prints name, server and score of each.
  auth login URL       authorize with an OAuth-protected server now (the browser opens);
                       `auth status` shows what is stored, `auth logout URL` forgets it.
                       The commands above authorize the same way when a server asks.
  install CLIENT FILE  add a server file to an MCP client's configuration (merged, the old
                       file kept as .bak); --print shows the entry instead.
  dev TARGET           develop a server: a web inspector (127.0.0.1, a token in its address) to
                       call its tools, read its resources, answer its questions and watch its
                       traffic; a server file is restarted when it (or a file beside it) changes.
  proxy TARGET         serve any MCP server (TARGET as below) as a toolwire server: over
                       stdio, or with --http over Streamable HTTP; it bridges transports and
                       protocol eras (a 2025-11-25-only server offered to 2026-07-28 clients).
                       Its options go before --: toolwire proxy --http 8000 -- npx -y some-server

TARGET is FILE.py or FILE.py:OBJECT (served by `toolwire run` in a child process), an
http(s) URL, or, after --, any server's command line:
  toolwire tools -- npx -y @modelcontextprotocol/server-everything
  toolwire call echo message=hi -- npx -y @modelcontextprotocol/server-everything
  toolwire read demo://resource/static/document/architecture.md -- npx -y @modelcontextprotocol/server-everything

`toolwire COMMAND -h` describes the options of each command.
"""


class UsageError(Exception):
    """The command line asks for something that cannot be done; the message says why."""


class ServingFailed(Exception):
    """The server could not start serving; the message says why (exit status 1)."""


class Parser(argparse.ArgumentParser):
    """An argparse parser whose mistakes raise :class:`UsageError`, one line that names
    ``-h``, instead of printing the usage and exiting."""

    def error(self, message: str) -> NoReturn:
        unrecognized = "unrecognized arguments: "
        if message.startswith(unrecognized):
            word = message[len(unrecognized) :].split(" ")[0]
            command = self.prog.removeprefix("toolwire ")
            message = f"unknown option for {command}: {word!r}" if word.startswith("-") else f"unexpected {word!r}"
        raise UsageError(f"{message} (see {self.prog} -h)")


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's, told the terminal's width: its own way imports :mod:`shutil` (3 ms of start-up)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        if width is None:
            try:
                columns = int(os.environ.get("COLUMNS", "")) or os.get_terminal_size(1).columns
            except (AttributeError, ValueError, OSError):
                columns = 80
            width = columns - 2
        super().__init__(prog, indent_increment, max_help_position, width)


def command_parser(command: str, usage: str, description: str, epilog: str | None = None) -> Parser:
    """The parser of ``toolwire COMMAND``, its help text written as it is given."""
    return Parser(
        prog=f"toolwire {command}",
        usage=usage,
        description=description,
        epilog=epilog,
        formatter_class=_Formatter,
        allow_abbrev=False,
    )


def split_command(argv: list[str]) -> tuple[list[str], list[str] | None]:
    """The words before the first ``--``, and those after it (``None`` without ``--``);
    :class:`UsageError` for a ``--`` with nothing after it."""
    if "--" not in argv:
        return argv, None
    split = argv.index("--")
    if split == len(argv) - 1:
        raise UsageError("a command line is needed after --")
    return argv[:split], argv[split + 1 :]


class ImportFailed(Exception):
    """A server file failed while it was imported: one line saying how, then the file's
    own frames of the traceback (toolwire's and importlib's left out)."""

    def __init__(self, path: str, error: BaseException) -> None:
        import traceback

        if isinstance(error, SyntaxError):
            where = f"SyntaxError: {error.msg} (line {error.lineno})"
            detail = "".join(traceback.format_exception_only(error)).rstrip()
        else:
            from .tracebacks import own_frames

            where = f"{type(error).__name__}: {error}"
            detail = own_frames(error)
        super().__init__(f"could not import {path}: {where}")
        self.detail = detail


def load_server(target: str) -> Any:
    """The :class:`~toolwire.Server` named by ``FILE[:OBJECT]``; :class:`UsageError` if none,
    :class:`ImportFailed` if the file fails, :class:`~toolwire.extras.ExtraMissing` as the
    file raised it (it needs an extra)."""
    import importlib.util
    import os

    from .server.server import Server

    path, _, name = target.partition(":")
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    directory = os.path.dirname(os.path.abspath(path))
    if directory not in sys.path:
        sys.path.insert(0, directory)
    module_name = "__toolwire_target__"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot load {path} as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    from .extras import ExtraMissing

    try:
        spec.loader.exec_module(module)
    except ExtraMissing:
        raise  # the file says which extra it needs: that line is the whole story
    except (Exception, SystemExit) as exc:
        raise ImportFailed(path, exc) from None
    if name:
        if not hasattr(module, name):
            raise UsageError(f"{path} has no object named {name!r}")
        found = getattr(module, name)
    else:
        conventional = (getattr(module, n, None) for n in ("server", "mcp", "app"))
        candidates = [value for value in conventional if isinstance(value, Server)]
        if not candidates:
            candidates = [value for value in vars(module).values() if isinstance(value, Server)]
        if len(candidates) != 1:
            what = "no Server" if not candidates else "several Servers"
            raise UsageError(f"{path} defines {what}: name the one to serve as {path}:OBJECT")
        found = candidates[0]
    if callable(found) and not isinstance(found, Server):
        found = found()
    if not isinstance(found, Server):
        raise UsageError(f"{target} is a {type(found).__name__}, not a toolwire Server")
    return found


def main(argv: list[str] | None = None) -> None:
    """Run the command line; exits with the command's status: 2 and one line on stderr for a
    usage error, 1 for a server file that fails to import or to serve, or a missing extra
    (one line naming it). ``toolwire help COMMAND`` is ``toolwire COMMAND -h``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) >= 2 and args[0] == "help":
        args = [args[1], "-h"]
    try:
        raise SystemExit(_main(args))
    except (UsageError, ImportFailed, ServingFailed) as exc:
        detail = getattr(exc, "detail", "")  # the traceback of a file that failed to import
        sys.stderr.write(f"toolwire: {exc}\n" + (f"{detail}\n" if detail else ""))
        raise SystemExit(2 if isinstance(exc, UsageError) else 1) from None
    except ImportError as exc:
        from .extras import ExtraMissing  # not at start: `run` imports as little as it can

        if not isinstance(exc, ExtraMissing):
            raise
        sys.stderr.write(f"toolwire: {exc}\n")
        raise SystemExit(1) from None


def _main(args: list[str]) -> int:
    """The exit status of ``toolwire ARGS...``."""
    if not args:
        raise UsageError("a command is needed (toolwire -h lists them)")
    command, argv = args[0], args[1:]
    if command in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0
    if command in ("-V", "--version"):
        from . import __version__

        sys.stdout.write(f"toolwire {__version__}\n")
        return 0
    if command not in COMMANDS:
        known = ", ".join(COMMANDS)
        raise UsageError(f"unknown command {command!r}: the commands are {known} (toolwire -h describes them)")
    return COMMANDS[command](command, argv)


def _terminal(command: str, argv: list[str]) -> int:
    from .terminal import main as terminal_main

    return terminal_main(command, argv)


def _host(command: str, argv: list[str]) -> int:
    from .terminal.chat import main as chat_main

    return chat_main(command, argv)


def _auth(command: str, argv: list[str]) -> int:
    from .terminal.auth import main as auth_main

    return auth_main(argv)


def _search(command: str, argv: list[str]) -> int:
    from .terminal.search import main as search_main

    return search_main(argv)


def _install(command: str, argv: list[str]) -> int:
    from .terminal.install import main as install_main

    return install_main(argv)


def _serving_arguments(parser: Parser) -> None:
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
    from .transports.http.forwarded import TrustedProxies

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


def _run_parser() -> Parser:
    parser = command_parser(
        "run",
        USAGE.split("\n       toolwire tools", 1)[0].removeprefix("usage: "),
        "Serve the Server defined in FILE over stdio (stdout carries only protocol messages; logs\n"
        "go to stderr), or with --http over Streamable HTTP. Without :OBJECT it serves the module's\n"
        "server, mcp or app, or its only Server; an OBJECT that is a function is called to make one.",
        "Words after -- are the file's own command line (its sys.argv[1:]).",
    )
    parser.add_argument("file", metavar="FILE[:OBJECT]", nargs="?", help=argparse.SUPPRESS)
    _serving_arguments(parser)
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
    return parser


def _run(command: str, argv: list[str]) -> int:
    """``toolwire run FILE[:OBJECT] [options] [-- ARG ...]``: serve until stdin ends or Ctrl-C."""
    argv, own = split_command(argv)
    options = _run_parser().parse_args(argv)
    target: str | None = options.file
    if target is None:
        raise UsageError("run needs a FILE: toolwire run FILE[:OBJECT] [options]")
    sys.argv = [target.partition(":")[0], *(own or [])]
    if options.tasks is not None and options.redis is not None:
        raise UsageError("--tasks and --redis do not go together: --redis keeps the tasks in Redis")
    http_options = _http_options(options)
    if options.http is None:
        from .transports.stdio import protect_stdout, run_stdio

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
        from .auth import ProtectedResource

        audience = options.audience or f"http://{host}:{port}/mcp"
        try:
            http_options["auth"] = ProtectedResource.for_issuer(
                options.issuer, audience, required_scopes=options.scopes
            )
        except ValueError as exc:
            raise UsageError(f"--issuer/--audience: {exc}") from None
    _serve_http(server, target, options, http_options)
    return 0


def _dev(command: str, argv: list[str]) -> int:
    """``toolwire dev TARGET [options]`` (or ``-- COMMAND ...``); the exit status."""
    from .protocol.versions import SUPPORTED_VERSIONS

    argv, server_command = split_command(argv)
    parser = command_parser(
        "dev",
        "toolwire dev TARGET [--port PORT] [--no-browser] [--protocol VERSION]\n"
        "       toolwire dev [options] -- COMMAND [ARG ...]",
        "Develop a server: a web inspector (on 127.0.0.1, a token in its address) to call its tools,\n"
        "read its resources, answer its questions and watch its traffic. A server file is restarted\n"
        "when it (or a file beside it) changes.",
        "TARGET: FILE.py[:OBJECT], an http(s) URL, or any server's command line after --.",
    )
    parser.add_argument("target", metavar="TARGET", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=_port, default=0, help="the inspector's port (default: any free one)")
    parser.add_argument("--protocol", metavar="VERSION", choices=SUPPORTED_VERSIONS, help="speak this version only")
    parser.add_argument("--no-browser", dest="browser", action="store_false", help="do not open a browser")
    options = parser.parse_args(argv)
    target: str | list[str] = _one_target("dev", options.target, server_command)
    file = None
    if isinstance(target, str) and not target.startswith(("http://", "https://")):
        file = target.partition(":")[0]
        if not file.endswith(".py") or not os.path.isfile(file):
            raise UsageError(f"no such server file: {file}")
    from .client import ClientError
    from .dev.inspector import serve

    def ready(url: str) -> None:
        watched = f"; it restarts {file} when it changes" if file else ""  # never right after the URL
        sys.stderr.write(f"toolwire: the inspector is at {url} (Ctrl-C stops it{watched})\n")
        sys.stderr.flush()

    try:
        with contextlib.suppress(KeyboardInterrupt):
            serve(target, file, port=options.port, protocol=options.protocol, browser=options.browser, on_ready=ready)
    except ClientError as exc:
        sys.stderr.write(f"toolwire: {exc}\n")
        return 1
    except OSError as exc:
        sys.stderr.write(f"toolwire: cannot listen on 127.0.0.1:{options.port}: {exc.strerror or exc}\n")
        return 1
    return 0


def _port(value: str) -> int:
    if not (value.isascii() and value.isdigit()) or not 0 <= int(value) < 65536:
        raise argparse.ArgumentTypeError(f"expected a port number, not {value!r}")
    return int(value)


def _one_target(command: str, word: str | None, server_command: list[str] | None) -> str | list[str]:
    """The TARGET word or the command line after ``--``; :class:`UsageError` for none or both."""
    if word is None:
        if server_command is None:
            raise UsageError(f"{command} needs a TARGET: FILE.py[:OBJECT], a URL, or a command line after --")
        return server_command
    if server_command is not None:
        raise UsageError(f"unexpected {word!r}: {command} takes one TARGET, or a command line after --")
    return word


#: The proxy's serving options: one in the command line after ``--`` is warned about.
PROXY_OPTIONS = (
    "--http",
    "--allow-host",
    "--stateless",
    "--uvicorn",
    "--granian",
    "--forwarded-allow-ips",
    "--max-connections-per-client",
)


def _proxy(command: str, argv: list[str]) -> int:
    """``toolwire proxy TARGET [options]`` or ``toolwire proxy [options] -- COMMAND ...``:
    serve the target as a toolwire server (see :mod:`toolwire.proxy`). Options after ``--``
    are the command's: one that looks like the proxy's own is warned about on stderr."""
    argv, server_command = split_command(argv)
    parser = command_parser(
        "proxy",
        "toolwire proxy TARGET [--name N] [--http [HOST:]PORT [--allow-host HOST ...] [--stateless]\n"
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
    _serving_arguments(parser)
    options = parser.parse_args(argv)
    target = _one_target("proxy", options.target, server_command)
    local = isinstance(target, str) and not target.startswith(("http://", "https://"))
    if local and not os.path.isfile(str(target).partition(":")[0]):
        raise UsageError(f"no such file: {str(target).partition(':')[0]}")
    misplaced = [word for word in server_command or [] if word.partition("=")[0] in PROXY_OPTIONS]
    if misplaced:
        sys.stderr.write(
            f"toolwire: warning: {misplaced[0]} comes after --, so it is the server's option, not the proxy's;"
            f" the proxy's options go before --: toolwire proxy {misplaced[0]} ... -- COMMAND\n"
        )
    http_options = _http_options(options)
    _verbose(options.verbose)
    from .proxy import proxy

    server = proxy(target, name=options.name)
    if options.http is None:
        from .transports.stdio import protect_stdout, run_stdio

        with contextlib.suppress(KeyboardInterrupt):
            run_stdio(server, stdout=protect_stdout())
        return 0
    _serve_http(server, " ".join(target) if isinstance(target, list) else target, options, http_options)
    return 0


def _serve_http(server: Any, shown: str, options: argparse.Namespace, http_options: dict[str, Any]) -> None:
    """Serve over HTTP at ``options.http`` until Ctrl-C; :class:`ServingFailed` if it cannot listen."""
    from .transports.http.serve import CannotListen

    host, port = options.http

    def ready() -> None:
        sys.stderr.write(f"toolwire: serving {shown} at http://{host}:{port}/mcp (Ctrl-C stops it)\n")

    try:
        with contextlib.suppress(KeyboardInterrupt):
            log_level = "info" if options.verbose else "warning"
            server.run_http(host, port, log_level=log_level, on_ready=ready, **http_options)
    except CannotListen as exc:
        raise ServingFailed(str(exc)) from None


def _loaded(target: str, options: argparse.Namespace) -> Any:
    """The target's Server; with ``-v``, logging a line per request it runs code for; with
    ``--tasks``, keeping its tasks in that store; with ``--redis``, sharing its state with
    other replicas through that Redis."""
    _verbose(options.verbose)
    server = load_server(target)
    if options.tasks is not None:
        server.use_task_store(options.tasks)
    if options.redis is not None:
        server.use_redis(options.redis)
    from .tasks.store import TaskStoreUnusable

    try:
        server.open_task_store()
    except TaskStoreUnusable as exc:
        raise ServingFailed(str(exc)) from None
    if options.verbose:
        from .guards.requestlog import RequestLog

        server.use(RequestLog())
    return server


def _verbose(verbose: bool) -> None:
    """With ``-v``, log at INFO level on stderr (otherwise warnings and errors reach stderr
    through logging's last resort)."""
    if verbose:
        import logging

        logging.basicConfig(
            stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )


def _http_options(options: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of ``run_http`` the options give; :class:`UsageError` for options
    that need another, :class:`~toolwire.extras.ExtraMissing` for one whose extra is missing
    (before the file is imported, so that it is the first thing said)."""
    from .extras import require

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
    if (getattr(options, "audience", None) or getattr(options, "scopes", None)) and issuer is None:
        raise UsageError("--audience and --scope go with --issuer")
    if options.runner == "granian":
        require("granian", "--granian")
    if getattr(options, "redis", None) is not None:
        require("redis", "--redis")
    if (getattr(options, "tasks", None) or "").startswith(("redis://", "rediss://", "unix://")):
        require("redis", "--tasks with a Redis URL")
    if issuer is not None:
        require("auth", "--issuer")
    return {"allowed_hosts": options.allowed_hosts, "stateless": options.stateless, "runner": options.runner, **served}


_TERMINAL_COMMANDS = ("tools", "call", "resources", "read", "prompts", "prompt", "tasks", "task")
#: Each command, and the function that runs it (with its name and its words) to an exit status.
COMMANDS: dict[str, Callable[[str, list[str]], int]] = {
    "run": _run,
    **dict.fromkeys(_TERMINAL_COMMANDS, _terminal),
    **dict.fromkeys(("chat", "ask"), _host),
    "auth": _auth,
    "search": _search,
    "install": _install,
    "proxy": _proxy,
    "dev": _dev,
}
