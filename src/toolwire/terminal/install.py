"""``toolwire install CLIENT FILE``: add a server file to an MCP client's own configuration.

    toolwire install claude-desktop server.py [--name N] [--env KEY=VALUE ...] [--print]

Each client keeps its servers in a JSON file of its own, at a place that depends on the
operating system. The entry written runs the file with this very Python (an absolute path:
a desktop app started from a dock or menu has no shell ``PATH``) as ``python -m toolwire run
/abs/path/server.py``. The file is read first and merged: other servers and settings are
kept as they were, an entry of the same name is replaced, and the file as it was is copied
to ``FILE.bak`` before it is written. A file that is not JSON is left alone (exit status 1).
``--print`` shows the entry and where it would go instead. The server file is imported first,
as ``toolwire run`` would (with the ``--env`` settings): one that fails to import, or has no
Server to serve, is not installed.

    toolwire install cursor --name shop -- toolwire openapi shop.json --base-url https://api.example.com

installs an API served by ``toolwire openapi`` instead: the entry runs ``python -m toolwire
openapi /abs/path/shop.json ...`` with the options given; the document is read and mapped
first, as for a file.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..cli.common import (
    ImportFailed,
    Parser,
    ServingFailed,
    UsageError,
    command_parser,
    did_you_mean,
    load_server,
    split_command,
)
from .commandline import env_pair

CLIENTS = "claude-desktop, claude-code, cursor, vscode, windsurf"


@dataclass(frozen=True)
class Target:
    """Where a client keeps its servers: the file, the key of the servers in it, and
    whether entries name their transport (``"type": "stdio"``)."""

    path: Path
    key: str
    typed: bool = False


def target(client: str, system: str | None = None, home: Path | None = None, cwd: Path | None = None) -> Target:
    """The configuration ``client`` reads on ``system`` (``sys.platform`` by default), for the
    user whose home is ``home`` and, for a workspace's file, the directory ``cwd``.
    :class:`UsageError` for an unknown client."""
    system = system or sys.platform
    home = home or Path.home()
    cwd = cwd or Path.cwd()
    if client == "claude-desktop":
        if system == "darwin":
            folder = home / "Library" / "Application Support" / "Claude"
        elif system == "win32":
            folder = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") / "Claude"
        else:
            folder = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "Claude"
        return Target(folder / "claude_desktop_config.json", "mcpServers")
    if client == "claude-code":
        return Target(home / ".claude.json", "mcpServers", typed=True)  # the user scope
    if client == "cursor":
        return Target(home / ".cursor" / "mcp.json", "mcpServers")
    if client == "vscode":
        return Target(cwd / ".vscode" / "mcp.json", "servers", typed=True)  # this workspace's
    if client == "windsurf":
        return Target(home / ".codeium" / "windsurf" / "mcp_config.json", "mcpServers")
    guess = did_you_mean(client, CLIENTS.split(", "))
    raise UsageError(f"unknown client {client!r}" + (guess or f": use one of {CLIENTS}"))


def entry(file: str, env: dict[str, str], typed: bool) -> dict[str, Any]:
    """The server's entry: this Python running ``toolwire run`` on the file's absolute path."""
    path, colon, name = file.partition(":")
    served = str(Path(path).resolve()) + (colon + name if colon else "")
    return command_entry(["run", served], env, typed)


def command_entry(words: list[str], env: dict[str, str], typed: bool) -> dict[str, Any]:
    """The entry running ``toolwire WORDS...`` with this Python."""
    item: dict[str, Any] = {"type": "stdio"} if typed else {}
    item["command"] = sys.executable
    item["args"] = ["-m", "toolwire", *words]
    if env:
        item["env"] = env
    return item


def install(target: Target, name: str, item: dict[str, Any]) -> str:
    """Merge ``name: item`` into the target's file (backed up first); what was done, in words.
    :class:`OSError` when it cannot be read or written; ``ValueError`` for a file that is not
    a JSON object."""
    config: Any = {}
    if target.path.exists():
        try:
            config = orjson.loads(target.path.read_bytes() or b"{}")
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"{target.path} is not JSON ({exc}): fix or move it, then try again") from None
        if not isinstance(config, dict) or not isinstance(config.get(target.key, {}), dict):
            raise ValueError(f"{target.path} does not hold a JSON object with {target.key!r} servers: left as it is")
        shutil.copy2(target.path, target.path.with_name(target.path.name + ".bak"))
    servers = config.setdefault(target.key, {})
    done = "replaced" if name in servers else "added"
    servers[name] = item
    target.path.parent.mkdir(parents=True, exist_ok=True)
    written = target.path.with_name(target.path.name + ".toolwire-new")
    written.write_bytes(orjson.dumps(config, option=orjson.OPT_INDENT_2) + b"\n")
    written.replace(target.path)  # whole or not at all
    return f"{done} {name!r} in {target.path}"


def main(argv: list[str]) -> int:
    """Run ``toolwire install ARGV...``; the exit status (2: a usage error, such as a FILE
    without the OBJECT named; 1: a failure, such as a FILE that does not import)."""
    try:
        argv, command = split_command(argv)
        options = _parser().parse_args(argv)
        client, file, env = options.client, options.file, dict(options.env)
        if command is not None:
            if file is not None:
                raise UsageError(f"unexpected {file!r}: install takes a FILE, or a toolwire openapi command after --")
            chosen = target(client)
            os.environ.update(env)  # as the client will start it
            words, stem = _openapi_words(command)
            name = options.name or stem
            item = command_entry(words, env, chosen.typed)
        else:
            if file is None:
                raise UsageError("install needs a FILE[:OBJECT], or a toolwire openapi command line after --")
            path = file.partition(":")[0]
            if not path.endswith(".py") or not os.path.isfile(path):
                raise UsageError(f"no such server file: {path}")
            name = options.name or Path(path).stem
            chosen = target(client)
            os.environ.update(env)  # as the client will start it
            load_server(file)
            item = entry(file, env, chosen.typed)
        if options.print:
            snippet = orjson.dumps({chosen.key: {name: item}}, option=orjson.OPT_INDENT_2).decode()
            sys.stdout.write(f"# {chosen.path}\n{snippet}\n")
            return 0
        sys.stdout.write(f"toolwire: {install(chosen, name, item)}; restart {client} to load it\n")
        return 0
    except (OSError, ValueError, ImportFailed, ServingFailed) as exc:
        sys.stderr.write(f"toolwire: {exc}\n")
        return 1


def _openapi_words(command: list[str]) -> tuple[list[str], str]:
    """The words after ``toolwire`` of a ``toolwire openapi SPEC ...`` command line, SPEC made
    absolute when it is a file, and the entry's default name (SPEC's stem). The document is
    read and mapped first: :class:`~toolwire.cli.common.ServingFailed` if it cannot be;
    :class:`UsageError` for another command line or ``--http`` (a client starts it over stdio)."""
    from ..openapi import command as openapi

    words = command[1:] if command[0] in ("toolwire", "toolwire.exe") else command
    if not words or words[0] != "openapi":
        raise UsageError("after -- install takes a toolwire openapi command line: -- toolwire openapi SPEC ...")
    options = openapi.parser().parse_args(words[1:])
    if options.spec is None:
        raise UsageError("openapi needs a SPEC: an OpenAPI document's file or URL")
    if options.http is not None:
        raise UsageError("a client starts the server over stdio: leave out --http")
    openapi.build_server(options)
    spec = options.spec
    if not spec.startswith(("http://", "https://")):
        words = [str(Path(spec).resolve()) if word == spec else word for word in words]
    return words, Path(spec.rstrip("/")).stem or "openapi"


def _parser() -> Parser:
    parser = command_parser(
        "install",
        "toolwire install CLIENT FILE[:OBJECT] [--name NAME] [--env KEY=VALUE ...] [--print]\n"
        "       toolwire install CLIENT [options] -- toolwire openapi SPEC [openapi options]",
        "Add a server file to an MCP client's configuration, run by this Python as\n"
        "`python -m toolwire run /abs/path/FILE`: merged with what is there, the old file kept as\n"
        "FILE.bak. The server file is imported first (with the --env settings): one that fails to\n"
        "import, or has no Server to serve, is not installed. After --, a `toolwire openapi`\n"
        "command line is installed the same way (its document read and mapped first).",
        f"CLIENT: {CLIENTS}. Restart the client to load the server.",
    )
    parser.add_argument("client", metavar="CLIENT", help=argparse.SUPPRESS)
    parser.add_argument("file", metavar="FILE[:OBJECT]", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--name", help="the entry's name (default: the file's stem)")
    parser.add_argument(
        "--env",
        metavar="KEY=VALUE",
        action="append",
        type=env_pair,
        default=[],
        help="set an environment variable of the server (repeatable)",
    )
    parser.add_argument("--print", action="store_true", help="show the entry and where it would go; write nothing")
    return parser
