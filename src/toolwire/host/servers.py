"""Which MCP servers a host connects to: :class:`ServerSpec`, from a target or a config file.

A target is anything :class:`~toolwire.client.Client` takes (a ``.py`` file, a command line,
an ``http(s)://`` URL, a toolwire ``Server``), named after what it runs. A config file is the
``mcpServers`` JSON that desktop MCP clients use::

    {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "some-server"], "env": {"KEY": "v"}, "cwd": "/srv"},
        "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ..."}},
        "seed": {"command": "toolwire", "args": ["run", "seed_server.py"], "trusted": true}
    }}

``"trusted": true`` marks a server whose tool annotations are believed (see
:mod:`.approval`); ``"disabled": true`` leaves it out; ``"servers"`` is read as well as
``"mcpServers"`` (the key some editors use). Mistakes raise :class:`ConfigError` naming the
server and the field.
"""

from __future__ import annotations

import os
import re
import shlex
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

LAUNCHERS = {"python", "python3", "node", "npx", "uvx", "uv", "deno", "bun", "pipx", "toolwire", "docker"}
SERVER_NAME = re.compile(r"[A-Za-z0-9_-]+")


class ConfigError(ValueError):
    """A server list or config file that cannot be used; the message says where and why."""


@dataclass(slots=True)
class ServerSpec:
    """One server to connect to: its ``name`` (used in tool names on collisions, in approval
    patterns and in messages), what to connect to, and whether it is ``trusted``."""

    name: str
    target: Any
    env: dict[str, str] | None = None
    cwd: str | None = None
    headers: dict[str, str] | None = None
    trusted: bool = False
    options: dict[str, Any] = field(default_factory=dict)


def spec_for(target: Any, name: str | None = None, trusted: bool = False) -> ServerSpec:
    """A :class:`ServerSpec` for a ``Client`` target; ``NAME=TARGET`` strings name it."""
    if isinstance(target, ServerSpec):
        return target
    if isinstance(target, str) and name is None:
        prefix, sep, rest = target.partition("=")
        if sep and SERVER_NAME.fullmatch(prefix) and rest:
            name, target = prefix, rest
    return ServerSpec(name or derived_name(target), target, trusted=trusted)


def check_name(name: str) -> None:
    """:class:`ConfigError` unless ``name`` is a server name: letters, digits, ``_`` and ``-``
    (no ``/``, which rules use to separate the server from the tool)."""
    if not SERVER_NAME.fullmatch(name):
        raise ConfigError(f"the server name {name!r} may use only letters, digits, '_' and '-'")


def derived_name(target: Any) -> str:
    """A short name for what ``target`` runs: a file's stem, a URL's host, a command's package,
    a server object's name (only its letters, digits, ``_`` and ``-``)."""
    if not isinstance(target, str | list):
        return _clean(str(getattr(target, "name", "") or "server"))
    if isinstance(target, str) and target.startswith(("http://", "https://")):
        return _clean(urllib.parse.urlsplit(target).hostname or "remote")
    words = shlex.split(target) if isinstance(target, str) else [str(word) for word in target]
    if len(words) == 1 and words[0].partition(":")[0].endswith(".py"):
        return _clean(Path(words[0].partition(":")[0]).stem)
    meaningful = [w for w in words[1:] if not w.startswith("-") and w not in ("run", "exec", "x")]
    if words and Path(words[0]).name not in LAUNCHERS and not Path(words[0]).name.startswith("python"):
        return _clean(Path(words[0]).stem)
    chosen = meaningful[0] if meaningful else (words[0] if words else "server")
    return _clean(Path(chosen.split("@")[-1] if chosen.startswith("@") else chosen.split("@")[0]).stem)


def _clean(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", name).strip("_") or "server"


def unique_names(specs: list[ServerSpec]) -> list[ServerSpec]:
    """``specs`` with names made distinct (``name``, ``name-2``, ...), in order."""
    seen: set[str] = set()
    for spec in specs:
        base, number = spec.name, 1
        while spec.name in seen:
            number += 1
            spec.name = f"{base}-{number}"
        seen.add(spec.name)
    return specs


def load_config(source: str | os.PathLike[str] | dict[str, Any]) -> list[ServerSpec]:
    """The servers of an ``mcpServers`` config (a path to its JSON file, or the parsed dict).
    :class:`ConfigError` for a file that cannot be read or an entry that cannot be used."""
    if isinstance(source, dict):
        data: Any = source
        where = "the config"
    else:
        where = str(source)
        try:
            data = orjson.loads(Path(source).read_bytes())
        except OSError as exc:
            raise ConfigError(f"cannot read {where}: {exc.strerror or exc}") from None
        except orjson.JSONDecodeError as exc:
            raise ConfigError(f"{where} is not JSON: {exc}") from None
    servers = data.get("mcpServers", data.get("servers")) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(f'{where} has no "mcpServers" object')
    specs = []
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: server {name!r} must be an object")
        if entry.get("disabled") is True:
            continue
        specs.append(_entry(where, str(name), entry))
    return specs


def _entry(where: str, name: str, entry: dict[str, Any]) -> ServerSpec:
    def checked(key: str, wanted: str, ok: Any) -> Any:
        value = entry.get(key)
        if value is not None and not ok(value):
            raise ConfigError(f"{where}: server {name!r}: {key!r} must be {wanted}")
        return value

    def strings(key: str) -> Any:
        return checked(key, "a string", lambda v: isinstance(v, str))

    def mapping(key: str) -> Any:
        def ok(value: Any) -> bool:
            return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())

        return checked(key, "an object of strings", ok)

    try:
        check_name(name)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    trusted = entry.get("trusted", False) is True
    if "url" in entry:
        url = strings("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigError(f"{where}: server {name!r}: 'url' must be an http(s) URL")
        return ServerSpec(name, url, headers=mapping("headers"), trusted=trusted)
    command = strings("command")
    if not command:
        raise ConfigError(f"{where}: server {name!r} needs a 'command' or a 'url'")
    args = checked("args", "a list of strings", lambda v: isinstance(v, list) and all(isinstance(a, str) for a in v))
    return ServerSpec(name, [command, *(args or [])], env=mapping("env"), cwd=strings("cwd"), trusted=trusted)
