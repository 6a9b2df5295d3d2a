"""The grammar of the commands that talk to a server: ``tools``, ``call``, ``resources``,
``read``, ``prompts``, ``prompt``, ``tasks`` and ``task``.

    toolwire tools TARGET [--json] [options]
    toolwire call TARGET TOOL [KEY=VALUE ...] [--input JSON] [--json] [--out DIR] [options]
    toolwire resources TARGET [--json] [options]
    toolwire read TARGET URI [--json] [--out DIR] [options]
    toolwire prompts TARGET [--json] [options]
    toolwire prompt TARGET NAME [KEY=VALUE ...] [--json] [--out DIR] [options]
    toolwire tasks TARGET [--json] [options]
    toolwire task TARGET ID [--wait | --cancel] [--json] [--out DIR] [options]

TARGET is ``FILE.py`` or ``FILE.py:OBJECT`` (served by ``toolwire run`` in a child process)
or an ``http(s)://`` URL. Any other server is given as its command line after the first
``--`` instead of TARGET (``toolwire call TOOL [KEY=VALUE ...] -- COMMAND [ARG ...]``):
everything after it belongs to the server's command, everything before it (the tool, URI or
prompt, its arguments, the options) to toolwire. Options may come before, between or after
the positional words. Every mistake raises :class:`~toolwire.cli.common.UsageError` with one line
that says what is wrong.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..cli.common import Parser, UsageError, command_parser, split_command
from ..protocol.versions import LEGACY_VERSIONS, MODERN_VERSIONS
from .schemas import json_type

TARGETS = "FILE.py, FILE.py:OBJECT, an http(s) URL, or a command line after --"


@dataclass(frozen=True, slots=True)
class Command:
    """What a command takes besides TARGET and the options every command has.

    ``subject`` is the word after TARGET (``TOOL``, ``URI``, ``NAME``; empty for none),
    ``needed`` names it in the error when it is missing and ``listed`` says where to find
    one; ``pairs``: ``KEY=VALUE`` words follow it; ``json``: the help of ``--json`` (print
    what the server sent, as JSON); ``out``: the help of ``--out DIR`` (empty: no such
    option). ``call`` alone also takes ``--input JSON``, the whole arguments object.
    """

    description: str
    subject: str = ""
    needed: str = ""
    listed: str = ""
    pairs: bool = False
    json: str = ""
    out: str = ""

    def usage(self, name: str) -> str:
        """The two forms of ``toolwire NAME ...``: with a TARGET, and with a command after ``--``."""
        given = "[KEY=VALUE ...] [--input JSON]" if name == "call" else "[KEY=VALUE ...]" if self.pairs else ""
        words = [self.subject, given, "[--json]", "[--out DIR]" if self.out else ""]
        rest = " ".join(word for word in words if word)
        return f"toolwire {name} TARGET {rest} [options]\n       toolwire {name} {rest} [options] -- COMMAND [ARG ...]"


MEDIA_OUT = "where images and audio are saved (default: here)"

COMMANDS = {
    "tools": Command(
        "List the tools of an MCP server: name, title, annotation hints, parameters, description.",
        json="print the tool definitions as a JSON array",
    ),
    "call": Command(
        "Call a tool of an MCP server and print its result: text as text, structured content as\n"
        "JSON; images and audio are saved to files (named TOOL-N.EXT) and named on stdout.\n\n"
        "KEY=VALUE: a parameter whose schema type is string takes VALUE as it is; any other\n"
        "takes VALUE as JSON (count=3 flag=true items='[1, 2]'); a parameter the schema says\n"
        "nothing about takes VALUE as JSON if it is JSON, as a string otherwise.\n\n"
        "--input '{...}' gives the whole arguments object as JSON instead (--json ARGS, its old\n"
        "name, still works, with a warning).\n\n"
        "--task runs the call as a task (a tool that must be one is always run so): its id is\n"
        "printed on stderr, with its status and progress until it ends. Interrupted, the task\n"
        "goes on on the server: `toolwire task TARGET ID --wait` takes it up again.",
        subject="TOOL",
        needed="the name of the tool to call",
        listed="toolwire tools TARGET lists them",
        pairs=True,
        json="print the result as the server sent it, as JSON (exit status 1 when it is an error)",
        out=MEDIA_OUT,
    ),
    "resources": Command(
        "List the resources of an MCP server (URI, name and title, MIME type, size, description),\n"
        "then its resource templates (URI template, name and title, MIME type, description).",
        json='print {"resources": [...], "resourceTemplates": [...]} as the server sent them',
    ),
    "read": Command(
        "Read a resource of an MCP server (or a URI one of its templates matches). Text is\n"
        "printed; binary contents are saved to files and named on stdout. A file is named after\n"
        "the URI's last part (library://logo: logo.png), with the extension of its MIME type\n"
        "added when it has none, or resource-N.EXT when the URI gives no usable name. Contents\n"
        "of several entries are each preceded by a line naming their URI.",
        subject="URI",
        needed="the URI of the resource to read",
        listed="toolwire resources TARGET lists them",
        json="print the contents as the server sent them, as a JSON array",
        out="where binary contents are saved (default: here)",
    ),
    "prompts": Command(
        "List the prompts of an MCP server: name, title, arguments (required ones marked *), description.",
        json="print the prompt definitions as a JSON array",
    ),
    "tasks": Command(
        "List the tasks the server shows this client (2025-11-25 tasks/list): id, status,\n"
        "message, created. A server without authorization shows each connection only its own\n"
        "tasks, so a new `toolwire tasks` lists those of an authorized caller only.\n"
        "`toolwire tasks --queue URL` shows the task queue of replicas in queue mode instead:\n"
        "how many tasks wait, and which worker runs which (see docs/workers.md).",
        json="print the tasks as the server sent them, as a JSON array",
    ),
    "task": Command(
        "Show a task of an MCP server by its id: status, message, times; its result once it\n"
        "has one. --wait waits for the end (answering its questions here) and prints the\n"
        "result; --cancel cancels it.",
        subject="ID",
        needed="the id of the task",
        listed="toolwire call TARGET TOOL --task says it; toolwire tasks TARGET lists some",
        json="print the task (and its result) as the server sent them",
        out=MEDIA_OUT,
    ),
    "prompt": Command(
        "Get a prompt of an MCP server and print its messages, each under a ROLE: line: text as\n"
        "text; images and audio are saved to files (named NAME-N.EXT) and named on stdout.\n\n"
        "KEY=VALUE: the prompt's arguments. Their values are strings, passed as they are.",
        subject="NAME",
        needed="the name of the prompt to get",
        listed="toolwire prompts TARGET lists them",
        pairs=True,
        json="print the result as the server sent it",
        out=MEDIA_OUT,
    ),
}

EPILOG = f"""TARGET: {TARGETS}.
  FILE.py[:OBJECT]   served by `toolwire run` in a child process
  http(s)://...      a Streamable HTTP endpoint
  -- COMMAND ...     any server started as a process: everything after -- is its command line

exit status: 0 done; 1 the tool failed, the resource or prompt does not exist, or the server
could not be reached, answered with an error, crashed or timed out; 2 a mistake on the
command line; 130 interrupted."""


@dataclass(slots=True)
class Invocation:
    """What the command line asks for.

    ``target`` is a command to start (a list) or a URL; ``subject`` the tool, resource URI or
    prompt the command is about; ``pairs`` are the ``KEY=VALUE`` words (values still text:
    a tool's schema decides what they become), ``arguments`` the object given with
    ``call --input``; ``as_json``: print what the server sent, as JSON.
    """

    command: str
    target: str | list[str]
    env: dict[str, str] | None
    protocol: str | None
    timeout: float
    as_json: bool = False
    subject: str = ""
    pairs: list[tuple[str, str]] = field(default_factory=list)
    arguments: dict[str, Any] | None = None
    out: str = "."
    log_level: str | None = None
    task: bool = False
    wait: bool = False
    cancel: bool = False
    #: ``tasks --queue URL``: the task queue to show (no TARGET then).
    queue: str | None = None
    #: TARGET as the command line gave it (for messages that say how to come back).
    shown_target: str = ""


#: The log levels of MCP (RFC 5424's), least severe first.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def parse(command: str, argv: list[str]) -> Invocation:
    """The :class:`Invocation` of ``toolwire COMMAND ARGV...`` (COMMAND one of
    :data:`COMMANDS`); :class:`UsageError` if it is wrong. ``-h`` prints the command's help
    and exits with status 0."""
    spec = COMMANDS[command]
    argv, server_command = split_command(argv)
    if command == "call":
        argv = _old_json_input(argv)
    options = _parser(command, spec).parse_intermixed_args(argv)
    words: list[str] = options.words
    queue = getattr(options, "queue", None)
    if queue is not None:
        if words or server_command is not None:
            raise UsageError("tasks --queue URL shows the queue alone: give no TARGET with it")
        invocation = Invocation(command, queue, None, None, options.timeout, as_json=options.json, queue=queue)
        invocation.shown_target = queue
        return invocation
    if server_command is None:
        if not words:
            raise UsageError(f"a TARGET is needed: give {TARGETS}")
        target, words = _target(words[0]), words[1:]
    else:
        if words and _is_target(words[0]):
            raise UsageError(_target_before_command(command, words, server_command))
        target = server_command
    env = dict(options.env) if options.env else None
    if env is not None and isinstance(target, str):
        raise UsageError("--env applies to servers started as processes, not to URLs")
    invocation = Invocation(command, target, env, options.protocol, options.timeout)
    invocation.shown_target = " ".join(["--", *server_command]) if server_command else str(options.words[0])
    invocation.log_level = options.log
    invocation.task = getattr(options, "task", False)
    invocation.wait = getattr(options, "wait", False)
    invocation.cancel = getattr(options, "cancel", False)
    if invocation.wait and invocation.cancel:
        raise UsageError("--wait and --cancel do not go together")
    invocation.as_json = options.json
    if spec.out:
        invocation.out = options.out
    if spec.subject:
        if not words:
            raise UsageError(f"{spec.needed} is needed after TARGET: {spec.listed}")
        invocation.subject, words = words[0], words[1:]
    if not spec.pairs:
        if words:
            raise UsageError(f"unexpected {words[0]!r}: toolwire {command} takes one {spec.subject or 'TARGET'}")
        return invocation
    invocation.pairs = _pairs(words)
    if getattr(options, "input", None) is not None:
        if invocation.pairs:
            raise UsageError("give the arguments as KEY=VALUE words or as --input, not both")
        invocation.arguments = _json_object(options.input)
    return invocation


def _old_json_input(argv: list[str]) -> list[str]:
    """``call``'s words with the old form of ``--input``, ``--json ARGS`` (a JSON object or
    array after it, or ``--json=ARGS``), made ``--input ARGS``; a warning on stderr says so.
    ``--json`` followed by anything else is the flag that prints the result as JSON."""
    words = list(argv)
    for index, word in enumerate(words):
        following = words[index + 1] if index + 1 < len(words) else ""
        if word.startswith("--json=") or (word == "--json" and following.lstrip().startswith(("{", "["))):
            words[index] = word.replace("--json", "--input", 1)
            sys.stderr.write(
                "toolwire: warning: call --json ARGS is now --input ARGS (--json alone prints the result as JSON);"
                " the old form will go in a later version\n"
            )
    return words


def _parser(command: str, spec: Command) -> Parser:
    parser = command_parser(command, spec.usage(command), spec.description, EPILOG)
    parser.add_argument("words", nargs="*", help=argparse.SUPPRESS)
    names = ["--json", "--raw"] if command == "call" else ["--json"]  # --raw: call's old name of --json
    parser.add_argument(*names, dest="json", action="store_true", help=spec.json)
    if command == "call":
        parser.add_argument("--input", metavar="JSON", help="the whole arguments object, as JSON")
        parser.add_argument("--task", action="store_true", help="run the call as a task, showing its status")
    if command == "tasks":
        parser.add_argument(
            "--queue",
            metavar="URL",
            help="show the task queue of replicas in queue mode instead (a redis:// URL, no TARGET): "
            "how many tasks wait, and which worker runs which",
        )
    if command == "task":
        parser.add_argument("--wait", action="store_true", help="wait for the end and print the result")
        parser.add_argument("--cancel", action="store_true", help="cancel the task")
    if spec.out:
        parser.add_argument("--out", metavar="DIR", default=".", help=spec.out)
    parser.add_argument(
        "--protocol",
        metavar="VERSION",
        choices=[*LEGACY_VERSIONS, *MODERN_VERSIONS],
        help=f"speak this protocol version only: {', '.join([*LEGACY_VERSIONS, *MODERN_VERSIONS])}",
    )
    parser.add_argument(
        "--timeout",
        metavar="SECONDS",
        type=seconds,
        default=60.0,
        help="how long to wait for each answer (default: 60)",
    )
    parser.add_argument(
        "--log",
        metavar="LEVEL",
        choices=LOG_LEVELS,
        help=f"show the server's log messages at LEVEL and above, on stderr ({', '.join(LOG_LEVELS)})",
    )
    parser.add_argument(
        "--env",
        metavar="KEY=VALUE",
        action="append",
        type=env_pair,
        help="set an environment variable of the server process (repeatable)",
    )
    return parser


def _target(word: str) -> str | list[str]:
    """The command serving a ``FILE.py[:OBJECT]`` target, or a URL as it is."""
    if word.startswith(("http://", "https://")):
        return word
    path = word.partition(":")[0]
    if path.endswith(".py"):
        if not os.path.isfile(path):
            raise UsageError(f"no such file: {path}")
        return [sys.executable, "-m", "toolwire", "run", word]
    raise UsageError(f"{word!r} is not a TARGET: give {TARGETS}")


def _is_target(word: str) -> bool:
    return word.startswith(("http://", "https://")) or word.partition(":")[0].endswith(".py")


def _target_before_command(command: str, words: list[str], server_command: list[str]) -> str:
    """What to say when a TARGET comes before ``--``: the words after ``--`` are a whole
    command line, not options for the TARGET."""
    fixed = ["toolwire", command, *words[1:], "--", "toolwire", "run", words[0], "--", *server_command]
    return (
        f"{words[0]!r} is a TARGET, but what follows -- is read as the server's whole command line;"
        f" to give {words[0]} options, put both there: {shlex.join(fixed)}"
    )


def _pairs(words: list[str]) -> list[tuple[str, str]]:
    pairs: dict[str, str] = {}
    for word in words:
        key, equals, value = word.partition("=")
        if not equals or not key:
            raise UsageError(f"expected KEY=VALUE, not {word!r}: put the name of its parameter before it (NAME={word})")
        if key in pairs:
            raise UsageError(f"{key} is given twice")
        pairs[key] = value
    return list(pairs.items())


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"--input is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise UsageError(f"--input must be a JSON object, and {text!r} is a JSON {json_type(value)}")
    return value


def seconds(text: str) -> float:
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, not {text!r}")
    return seconds


def env_pair(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {text!r}")
    return key, value
