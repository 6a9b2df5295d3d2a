"""The ``toolwire`` command.

    toolwire run path/to/server.py[:object]      serve a file's Server over stdio
    toolwire run FILE --http [HOST:]PORT         ... or over Streamable HTTP
    toolwire run DIR [--reload]                  serve a folder of tool files
    toolwire tools TARGET                        list a server's tools
    toolwire call TARGET TOOL [KEY=VALUE ...]    call one of them
    toolwire resources TARGET                    list its resources and resource templates
    toolwire read TARGET URI                     read one
    toolwire prompts TARGET                      list its prompts
    toolwire prompt TARGET NAME [KEY=VALUE ...]  get one
    toolwire chat TARGET... | --config FILE      talk with a model that uses their tools
    toolwire ask TARGET... "question"            ask a model one question, for scripts
    toolwire search TARGET... "query"            which of their tools fit a request
    toolwire card URL                            a server's card, read without connecting
    toolwire openapi SPEC --base-url URL         serve an HTTP API's OpenAPI document
    toolwire gateway gateway.toml                serve many MCP servers as one

``run`` is what desktop MCP clients launch, so it imports only what serving over stdio
needs. Without ``:object`` it serves the module's ``server``, ``mcp`` or ``app``, or its only
:class:`~toolwire.Server` instance; an object that is a function is called to make one.

Every command has an :mod:`argparse` parser (``toolwire COMMAND -h``) whose mistakes are one
line, ``toolwire: ...`` ending with ``(see toolwire COMMAND -h)``, and exit status 2 (a
mistyped command or option gets a "did you mean"). Everything after the first ``--`` is a command
line that is not toolwire's: a server's to start, or the served file's own (``run``).

A command is an entry of :data:`COMMANDS` (its module imported only when it is the command)
and its lines in :data:`USAGE`. ``run``, ``proxy`` and ``dev`` live in this package; the others
in :mod:`toolwire.terminal`, which ``run`` never pays for (nor for ``rich`` or the client).
What the commands of both share is :mod:`.common`, which imports neither.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from .common import ImportFailed, ServingFailed, UsageError, did_you_mean


def main(argv: list[str] | None = None) -> None:
    """Run the command line; exits with the command's status: 2 and one line on stderr for a
    usage error (ending with the command's help: :meth:`UsageError.line`), 1 for a server
    file that fails to import or to serve, or a missing extra (one line naming it).
    ``toolwire help COMMAND`` is ``toolwire COMMAND -h``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) >= 2 and args[0] == "help":
        args = [args[1], "-h"]
    try:
        raise SystemExit(_main(args))
    except UsageError as exc:  # every command's: here alone, so that each names its help
        from ..terminal.output import printable  # not at start: `run` imports as little as it can

        command = args[0] if args and args[0] in COMMANDS else None
        sys.stderr.write(printable(f"toolwire: {exc.line(command)}", lines=False) + "\n")
        raise SystemExit(2) from None
    except (ImportFailed, ServingFailed) as exc:
        detail = getattr(exc, "detail", "")  # the traceback of a file that failed to import
        sys.stderr.write(f"toolwire: {exc}\n" + (f"{detail}\n" if detail else ""))
        raise SystemExit(1) from None
    except ImportError as exc:
        from ..extras import ExtraMissing  # not at start: `run` imports as little as it can

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
        from .. import __version__
        from ..build import build_name

        sys.stdout.write(f"toolwire {__version__} ({build_name()})\n")
        return 0
    if command not in COMMANDS:
        guess = did_you_mean(command, list(COMMANDS))
        said = guess or f": the commands are {', '.join(COMMANDS)}"
        raise UsageError(f"unknown command {command!r}{said}")
    return COMMANDS[command](command, argv)


def _run(command: str, argv: list[str]) -> int:
    from .run import main as run_main

    return run_main(command, argv)


def _terminal(command: str, argv: list[str]) -> int:
    from ..terminal import main as terminal_main

    return terminal_main(command, argv)


def _host(command: str, argv: list[str]) -> int:
    from ..terminal.chat import main as chat_main

    return chat_main(command, argv)


def _search(command: str, argv: list[str]) -> int:
    from ..terminal.search import main as search_main

    return search_main(argv)


def _auth(command: str, argv: list[str]) -> int:
    from ..terminal.auth import main as auth_main

    return auth_main(argv)


def _card(command: str, argv: list[str]) -> int:
    from ..terminal.card import main as card_main

    return card_main(argv)


def _install(command: str, argv: list[str]) -> int:
    from ..terminal.install import main as install_main

    return install_main(argv)


def _proxy(command: str, argv: list[str]) -> int:
    from .proxy import main as proxy_main

    return proxy_main(command, argv)


def _gateway(command: str, argv: list[str]) -> int:
    from .gateway import main as gateway_main

    return gateway_main(command, argv)


def _openapi(command: str, argv: list[str]) -> int:
    from .openapi import main as openapi_main

    return openapi_main(command, argv)


def _worker(command: str, argv: list[str]) -> int:
    from .worker import main as worker_main

    return worker_main(command, argv)


def _dev(command: str, argv: list[str]) -> int:
    from .dev import main as dev_main

    return dev_main(command, argv)


_TERMINAL_COMMANDS = ("tools", "call", "resources", "read", "prompts", "prompt", "tasks", "task")
#: Each command, and the function that runs it (with its name and its words) to an exit status.
COMMANDS: dict[str, Callable[[str, list[str]], int]] = {
    "run": _run,
    **dict.fromkeys(_TERMINAL_COMMANDS, _terminal),
    **dict.fromkeys(("chat", "ask"), _host),
    "auth": _auth,
    "search": _search,
    "card": _card,
    "install": _install,
    "proxy": _proxy,
    "dev": _dev,
    "openapi": _openapi,
    "gateway": _gateway,
    "worker": _worker,
}

#: ``toolwire -h``. Its first lines are ``run``'s usage (``toolwire run -h``).
USAGE = """usage: toolwire run FILE[:OBJECT] [-v] [--tasks DB | --redis URL [--queue URL] [--max-queued N]]
                                         [--skills DIR ...]
                                         [--http [HOST:]PORT [--allow-host HOST ...]
                                         [--stateless] [--uvicorn | --granian] [--forwarded-allow-ips IPS]
                                         [--max-connections-per-client N]
                                         [--issuer URL [--audience URI] [--scope SCOPE ...]]
                                         [--oauth-upstream URL_OR_PRESET --oauth-client-id ID
                                          [--public-url URL] [--oauth-state WHERE]
                                          [--allow-upstream-token]]] [-- ARG ...]
       toolwire run DIR [--reload] [options]
       toolwire tools TARGET [--json] [options]
       toolwire call TARGET TOOL [KEY=VALUE ...] [--input JSON] [--json] [--out DIR] [options]
       toolwire resources TARGET [--json] [options]
       toolwire read TARGET URI [--json] [--out DIR] [options]
       toolwire prompts TARGET [--json] [options]
       toolwire prompt TARGET NAME [KEY=VALUE ...] [--json] [--out DIR] [options]
       toolwire tasks TARGET [--json] [options]
       toolwire task TARGET ID [--wait | --cancel] [--json] [options]
       toolwire chat [TARGET ...] [--config FILE] [--model M] [--provider openai|anthropic] [--base-url URL] [options]
       toolwire ask [TARGET ...] QUESTION [--yes] [--allow PATTERN] [--json] [options]
       toolwire search [TARGET ...] QUERY [--limit N] [--json] [--config FILE]
       toolwire card URL [--json]
       toolwire auth login URL | logout URL | status [URL]
       toolwire install claude-desktop|claude-code|cursor|vscode|windsurf FILE [--name N] [--env K=V ...] [--print]
       toolwire proxy [--name N] [--http [HOST:]PORT [--allow-host HOST ...]] [-v] {TARGET | -- COMMAND ...}
       toolwire dev [--port PORT] [--no-browser] [--protocol VERSION] {TARGET | -- COMMAND ...}
       toolwire openapi SPEC [--base-url URL] [--header 'NAME: VALUE' ...] [--bearer-env VAR] [--include-tag TAG ...]
                             [--exclude-tag TAG ...] [--resources] [--http [HOST:]PORT] [options]
       toolwire gateway CONFIG [--stdio | --http [HOST:]PORT [--allow-host HOST ...]] [-v]
       toolwire worker FILE[:OBJECT] --redis URL --queue URL [--concurrency N] [--grace SECONDS] [--lease SECONDS] [-v]

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
                       --oauth-upstream makes this server the authorization server MCP clients
                       sign in at, signing people in at that identity provider (an OpenID
                       issuer URL or a preset) as --oauth-client-id, with the secret in
                       $TOOLWIRE_OAUTH_CLIENT_SECRET; --public-url is the endpoint's URL as
                       clients reach it, --oauth-state where sign-ins and tokens are kept;
                       --allow-upstream-token keeps the provider's tokens (sealed with the keys
                       in $TOOLWIRE_VAULT_KEYS) for tools to call it as the person.
                       --tasks keeps the tasks of tools declared with task= in the SQLite file DB
                       (created if missing), so that they outlive the process, or in Redis when
                       DB is a redis:// URL. --redis URL shares what replicas behind one address
                       need (tasks, the requestState keys) through that Redis; with --queue
                       URL, calls that run as tasks go on that task queue for workers to run
                       (--max-queued: jobs it holds before calls are refused, default 10000).
                       --skills serves the agent skills of DIR (a folder with a SKILL.md, or a
                       folder of them) through the skills extension (the 'skills' extra).
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
  card URL             show a server's card (SEP-2127): who it is and how to connect, read
                       without connecting; URL is the card's or the server's MCP endpoint.
  auth login URL       authorize with an OAuth-protected server now (the browser opens);
                       `auth status` shows what is stored, `auth logout URL` forgets it.
                       The commands above authorize the same way when a server asks.
  install CLIENT FILE  add a server file to an MCP client's configuration (merged, the old
                       file kept as .bak); --print shows the entry instead. After --, a
                       `toolwire openapi SPEC ...` command line is installed instead of a file.
  dev TARGET           develop a server: a web inspector (127.0.0.1, a token in its address) to
                       call its tools, read its resources, answer its questions and watch its
                       traffic; a server file is restarted when it (or a file beside it) changes.
  proxy TARGET         serve any MCP server (TARGET as below) as a toolwire server: over
                       stdio, or with --http over Streamable HTTP; it bridges transports and
                       protocol eras (a 2025-11-25-only server offered to 2026-07-28 clients).
                       Its options go before --: toolwire proxy --http 8000 -- npx -y some-server
  openapi SPEC         serve the HTTP API an OpenAPI document (file or URL) describes: each
                       operation a tool calling the API at --base-url; --header and --bearer-env
                       give the API's credentials (the caller's are never forwarded). Other
                       commands take it after --: toolwire dev -- toolwire openapi SPEC ...
  gateway CONFIG       serve the MCP servers a gateway.toml names (stdio commands, URLs) as
                       one server, each under its namespace (github.create_issue), with their
                       own credentials, restarted when they fail (see docs/gateway.md); over
                       stdio, or with --http over Streamable HTTP.
  worker FILE          run the tasks that replicas in queue mode (run --redis URL --queue URL)
                       queued, with FILE's tools, until SIGTERM (see docs/workers.md).

TARGET is FILE.py or FILE.py:OBJECT (served by `toolwire run` in a child process), an
http(s) URL, or, after --, any server's command line:
  toolwire tools -- npx -y @modelcontextprotocol/server-everything
  toolwire call echo message=hi -- npx -y @modelcontextprotocol/server-everything
  toolwire read demo://resource/static/document/architecture.md -- npx -y @modelcontextprotocol/server-everything

`toolwire COMMAND -h` describes the options of each command.
"""
