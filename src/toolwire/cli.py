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

``run`` is what desktop MCP clients launch, so it imports only what serving over stdio
needs. Without ``:object`` it serves the module's ``server``, ``mcp`` or ``app``, or its only
:class:`~toolwire.Server` instance; an object that is a function is called to make one.

The other commands live in :mod:`toolwire.terminal`, imported only when one of them is the
command: ``run`` never pays for them (nor for ``rich``, ``argparse`` or the client).
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

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
       toolwire auth login URL | logout URL | status [URL]
       toolwire install claude-desktop|claude-code|cursor|vscode|windsurf FILE [--name N] [--env K=V ...] [--print]
       toolwire proxy TARGET [--name N] [--http [HOST:]PORT [--allow-host HOST ...]] [-v]
       toolwire dev TARGET [--port PORT] [--no-browser] [--protocol VERSION]

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

TARGET is FILE.py or FILE.py:OBJECT (served by `toolwire run` in a child process), an
http(s) URL, or, after --, any server's command line:
  toolwire tools -- npx -y @modelcontextprotocol/server-everything
  toolwire call echo message=hi -- npx -y @modelcontextprotocol/server-everything
  toolwire read demo://resource/static/document/architecture.md -- npx -y @modelcontextprotocol/server-everything

`toolwire COMMAND -h` describes the options of each command but run.
"""

#: The commands :mod:`toolwire.terminal` runs.
TERMINAL_COMMANDS = ("tools", "call", "resources", "read", "prompts", "prompt", "tasks", "task")
#: The commands that hand servers' tools to a model (:mod:`toolwire.terminal.chat`).
HOST_COMMANDS = ("chat", "ask")


class UsageError(Exception):
    """The command line asks for something that cannot be done; the message says why."""


class ServingFailed(Exception):
    """The server could not start serving; the message says why (exit status 1)."""


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
    """The :class:`~toolwire.Server` named by ``FILE[:OBJECT]``; :class:`UsageError` if none."""
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
    try:
        spec.loader.exec_module(module)
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
    """Run the command line; exits with 2 and a message on stderr for a usage error.

    The :data:`TERMINAL_COMMANDS` exit with their own status (see :func:`toolwire.terminal.main`).
    ``toolwire help COMMAND`` is ``toolwire COMMAND -h``. A missing extra is one line naming
    it (exit status 1).
    """
    try:
        _main(sys.argv[1:] if argv is None else argv)
    except ImportError as exc:
        from .extras import ExtraMissing  # not at start: `run` imports as little as it can

        if not isinstance(exc, ExtraMissing):
            raise
        sys.stderr.write(f"toolwire: {exc}\n")
        raise SystemExit(1) from None


def _main(args: list[str]) -> None:
    if len(args) >= 2 and args[0] == "help":
        args = [args[1], "-h"]
    if args and args[0] in HOST_COMMANDS:
        from .terminal.chat import main as chat_main

        raise SystemExit(chat_main(args[0], args[1:]))
    if args and args[0] in TERMINAL_COMMANDS:
        from .terminal import main as terminal_main

        raise SystemExit(terminal_main(args[0], args[1:]))
    if args and args[0] == "auth":
        from .terminal.auth import main as auth_main

        raise SystemExit(auth_main(args[1:]))
    if args and args[0] == "dev":
        try:
            raise SystemExit(_dev(args[1:]))
        except UsageError as exc:
            sys.stderr.write(f"toolwire: {exc}\n")
            raise SystemExit(2) from None
    if args and args[0] == "proxy":
        try:
            _proxy(args[1:])
        except UsageError as exc:
            sys.stderr.write(f"toolwire: {exc}\n")
            raise SystemExit(2) from None
        except ServingFailed as exc:
            sys.stderr.write(f"toolwire: {exc}\n")
            raise SystemExit(1) from None
        return
    if args and args[0] == "install":
        from .terminal.install import main as install_main

        raise SystemExit(install_main(args[1:]))
    try:
        if args[:1] == ["run"]:
            if len(args) < 2 or args[1] in ("-h", "--help"):
                if len(args) < 2:
                    raise UsageError("run needs a FILE: toolwire run FILE[:OBJECT] [options]")
                sys.stdout.write(run_help())
                return
            _run(args[1], args[2:])
            return
        if args and args[0] in ("-h", "--help", "help"):
            sys.stdout.write(USAGE)
            return
        if args and args[0] in ("-V", "--version"):
            from . import __version__

            sys.stdout.write(f"toolwire {__version__}\n")
            return
        if not args:
            raise UsageError("a command is needed (toolwire -h lists them)")
        known = ", ".join(("run", *TERMINAL_COMMANDS, *HOST_COMMANDS, "auth", "install", "proxy", "dev"))
        raise UsageError(f"unknown command {args[0]!r}: the commands are {known} (toolwire -h describes them)")
    except UsageError as exc:
        sys.stderr.write(f"toolwire: {exc}\n")
        raise SystemExit(2) from None
    except ImportFailed as exc:
        sys.stderr.write(f"toolwire: {exc}\n{exc.detail}\n" if exc.detail else f"toolwire: {exc}\n")
        raise SystemExit(1) from None
    except ServingFailed as exc:
        sys.stderr.write(f"toolwire: {exc}\n")
        raise SystemExit(1) from None


def run_help() -> str:
    """``toolwire run -h``: its usage line and what its options do."""
    first, rest = USAGE.split("\n       toolwire tools", 1)
    described = rest.split("commands:\n", 1)[1].split("\n  tools TARGET", 1)[0]
    return f"{first}\n\n{described}\n"


def _run(target: str, options: list[str]) -> None:
    own: list[str] = []  # the server file's own command line (its sys.argv[1:]): after --
    if "--" in options:
        split = options.index("--")
        options, own = options[:split], options[split + 1 :]
    sys.argv = [target.partition(":")[0], *own]
    http, verbose, http_options = _run_options(options)
    tasks = http_options.pop("tasks", None)
    redis = http_options.pop("redis", None)
    if verbose:  # otherwise warnings and errors reach stderr through logging's last resort
        import logging

        logging.basicConfig(
            stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
    if http is None:
        from .transports.stdio import protect_stdout, run_stdio

        protocol = protect_stdout()  # before the file is imported: a print() there goes to stderr
        server = _loaded(target, verbose, tasks, redis)
        if os.isatty(0):  # a person started it: say what it is, since it waits in silence
            sys.stderr.write(
                f"toolwire: serving {target} over stdio: it reads JSON-RPC messages, one per line "
                "(Ctrl-D or Ctrl-C stops it)\n"
            )
        with contextlib.suppress(KeyboardInterrupt):
            run_stdio(server, stdout=protocol)
        return
    server = _loaded(target, verbose, tasks, redis)
    host, port = http
    issuer = http_options.pop("issuer", None)
    if issuer is not None:
        from .auth import ProtectedResource

        audience = http_options.pop("audience", None) or f"http://{host}:{port}/mcp"
        try:
            http_options["auth"] = ProtectedResource.for_issuer(
                issuer, audience, required_scopes=http_options.pop("scopes")
            )
        except ValueError as exc:
            raise UsageError(f"--issuer/--audience: {exc}") from None
    http_options.pop("scopes", None)

    def ready() -> None:
        sys.stderr.write(f"toolwire: serving {target} at http://{host}:{port}/mcp (Ctrl-C stops it)\n")

    from .transports.http.serve import CannotListen

    try:
        with contextlib.suppress(KeyboardInterrupt):
            server.run_http(host, port, log_level="info" if verbose else "warning", on_ready=ready, **http_options)
    except CannotListen as exc:
        raise ServingFailed(str(exc)) from None


def _one_target(command: str, word: str, target: Any) -> str:
    """``word`` as ``command``'s one TARGET; ``UsageError`` for an unknown option or a second one."""
    if word.startswith("-"):
        raise UsageError(f"unknown option for {command}: {word!r}")
    if target is not None:
        raise UsageError(f"unexpected {word!r}: {command} takes one TARGET")
    return word


def _dev(argv: list[str]) -> int:
    """``toolwire dev TARGET [options]`` (or ``-- COMMAND ...``); the exit status."""
    from .protocol.versions import SUPPORTED_VERSIONS

    command: list[str] | None = None
    if "--" in argv:
        split = argv.index("--")
        argv, command = argv[:split], argv[split + 1 :]
        if not command:
            raise UsageError("a command line is needed after --")
    port, protocol, browser = 0, None, True
    target: Any = command
    words = iter(argv)
    for word in words:
        if word in ("--port", "--protocol"):
            value = next(words, None)
            if value is None:
                raise UsageError(f"{word} needs a value")
            if word == "--port":
                if not value.isdigit() or not 0 <= int(value) < 65536:
                    raise UsageError(f"--port takes a port number, not {value!r}")
                port = int(value)
            elif value not in SUPPORTED_VERSIONS:
                raise UsageError(f"--protocol: unknown version {value!r} (one of {', '.join(SUPPORTED_VERSIONS)})")
            else:
                protocol = value
        elif word == "--no-browser":
            browser = False
        else:
            target = _one_target("dev", word, target)
    if target is None:
        raise UsageError("dev needs a TARGET: FILE.py[:OBJECT], a URL, or a command line after --")
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
            serve(target, file, port=port, protocol=protocol, browser=browser, on_ready=ready)
    except ClientError as exc:
        sys.stderr.write(f"toolwire: {exc}\n")
        return 1
    except OSError as exc:
        sys.stderr.write(f"toolwire: cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}\n")
        return 1
    return 0


def _proxy(argv: list[str]) -> None:
    """``toolwire proxy TARGET [options]`` or ``toolwire proxy [options] -- COMMAND ...``:
    serve the target as a toolwire server (see :mod:`toolwire.proxy`)."""
    command: list[str] | None = None
    if "--" in argv:
        split = argv.index("--")
        argv, command = argv[:split], argv[split + 1 :]
        if not command:
            raise UsageError("a command line is needed after --")
    name: str | None = None
    target: Any = command
    options: list[str] = []
    words = iter(argv)
    for word in words:
        if word in ("--name", "--http", "--allow-host"):
            value = next(words, None)
            if value is None:
                raise UsageError(f"{word} needs a value")
            if word == "--name":
                name = value
            else:
                options += [word, value]
        elif word in ("-v", "--stateless", "--uvicorn", "--granian"):
            options.append(word)
        else:
            target = _one_target("proxy", word, target)
    if target is None:
        raise UsageError("proxy needs a TARGET: a URL, FILE.py[:OBJECT], or a command line after --")
    local = isinstance(target, str) and not target.startswith(("http://", "https://"))
    if local and not os.path.isfile(target.partition(":")[0]):
        raise UsageError(f"no such file: {target.partition(':')[0]}")
    http, verbose, http_options = _run_options(options)
    if verbose:
        import logging

        logging.basicConfig(
            stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
    from .proxy import proxy

    server = proxy(target, name=name)
    if http is None:
        from .transports.stdio import protect_stdout, run_stdio

        with contextlib.suppress(KeyboardInterrupt):
            run_stdio(server, stdout=protect_stdout())
        return
    host, port = http
    shown = " ".join(target) if isinstance(target, list) else target

    def ready() -> None:
        sys.stderr.write(f"toolwire: serving {shown} at http://{host}:{port}/mcp (Ctrl-C stops it)\n")

    from .transports.http.serve import CannotListen

    http_options.pop("scopes", None)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            server.run_http(host, port, log_level="info" if verbose else "warning", on_ready=ready, **http_options)
    except CannotListen as exc:
        raise ServingFailed(str(exc)) from None


def _loaded(target: str, verbose: bool, tasks: str | None, redis: str | None = None) -> Any:
    """The target's Server; with ``-v``, logging a line per request it runs code for; with
    ``tasks``, keeping its tasks in that SQLite file; with ``redis``, sharing its state with
    other replicas through that Redis."""
    server = load_server(target)
    if tasks is not None and redis is not None:
        raise UsageError("--tasks and --redis do not go together: --redis keeps the tasks in Redis")
    if tasks is not None:
        server.use_task_store(tasks)
    if redis is not None:
        server.use_redis(redis)
    from .tasks.store import TaskStoreUnusable

    try:
        server.open_task_store()
    except TaskStoreUnusable as exc:
        raise ServingFailed(str(exc)) from None
    if verbose:
        from .guards.requestlog import RequestLog

        server.use(RequestLog())
    return server


def _run_options(options: list[str]) -> tuple[tuple[str, int] | None, bool, dict[str, Any]]:
    """``run``'s options: the HTTP address (or ``None`` for stdio), verbose, and the options
    for ``run_http`` (``issuer``, ``audience`` and ``scopes`` to make its ``auth`` of).
    :class:`UsageError` for anything else."""
    http: tuple[str, int] | None = None
    verbose = False
    chosen: dict[str, Any] = {"allowed_hosts": [], "stateless": False, "runner": "toolwire", "scopes": []}
    words = iter(options)
    for word in words:
        if word == "-v":
            verbose = True
        elif word == "--stateless":
            chosen["stateless"] = True
        elif word in ("--granian", "--uvicorn"):
            chosen["runner"] = word[2:]
        elif word in (
            "--http",
            "--allow-host",
            "--issuer",
            "--audience",
            "--scope",
            "--tasks",
            "--redis",
            "--forwarded-allow-ips",
            "--max-connections-per-client",
        ):
            value = next(words, None)
            if value is None:
                raise UsageError(f"{word} needs a value")
            if word == "--allow-host":
                chosen["allowed_hosts"].append(value)
            elif word == "--scope":
                chosen["scopes"].append(value)
            elif word in ("--issuer", "--audience", "--tasks", "--redis"):
                chosen[word[2:]] = value
            elif word == "--forwarded-allow-ips":
                from .transports.http.forwarded import TrustedProxies

                try:
                    TrustedProxies(value)
                except ValueError as exc:
                    raise UsageError(f"--forwarded-allow-ips: {exc}") from None
                chosen["forwarded_allow_ips"] = value
            elif word == "--max-connections-per-client":
                if not (value.isascii() and value.isdigit()) or int(value) < 1:
                    raise UsageError(f"--max-connections-per-client takes a number above 0, not {value!r}")
                chosen["max_connections_per_client"] = int(value)
            else:
                host, _, port = value.rpartition(":")
                if not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:
                    raise UsageError(f"--http takes [HOST:]PORT, not {value!r}")
                http = (host.strip("[]") or "127.0.0.1", int(port))
        else:
            raise UsageError(f"unknown option for run: {word!r}")
    served = ("issuer", "forwarded_allow_ips", "max_connections_per_client")
    if http is None and (
        chosen["allowed_hosts"]
        or chosen["stateless"]
        or chosen["runner"] != "toolwire"
        or any(option in chosen for option in served)
    ):
        raise UsageError(
            "--allow-host, --stateless, --uvicorn, --granian, --issuer, --forwarded-allow-ips and "
            "--max-connections-per-client go with --http"
        )
    if ("audience" in chosen or chosen["scopes"]) and "issuer" not in chosen:
        raise UsageError("--audience and --scope go with --issuer")
    _require_extras(chosen)
    return http, verbose, chosen


def _require_extras(chosen: dict[str, Any]) -> None:
    """:class:`ExtraMissing` for an option whose extra is not installed (before the file is
    imported, so that the error is the first thing said)."""
    from .extras import require

    if chosen["runner"] == "granian":
        require("granian", "--granian")
    if "redis" in chosen:
        require("redis", "--redis")
    if chosen.get("tasks", "").startswith(("redis://", "rediss://", "unix://")):
        require("redis", "--tasks with a Redis URL")
    if "issuer" in chosen:
        require("auth", "--issuer")
