"""``gateway.toml`` read into frozen dataclasses.

    config = load_config("gateway.toml")       # or parse_config(text, folder)
    config.upstreams[0].namespace              # "github"

The smallest file is one ``[upstreams.NAME]`` table with ``command = [...]`` or ``url = "..."``;
every other table is optional (see docs/gateway.md for the whole layout). Everything is checked
at load: an unknown key, a wrong type or a value out of range is a :class:`ConfigError` whose
message is one line naming the file, the table, the key and what was expected, with a "did you
mean" for a mistyped key. Paths (an upstream's ``cwd``) are relative to the file's folder, and
a command upstream runs in that folder unless its ``cwd`` says otherwise.
The ``[policy]``, ``[audit]`` and ``[admin]`` tables are kept as they were read (dicts), for
the modules that own them to read.
"""

from __future__ import annotations

import difflib
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ToolwireError

DEFAULT_NAME = "toolwire-gateway"
DEFAULT_SEPARATOR = "."
DEFAULT_TIMEOUT = 60.0
STARTS = ("lazy", "eager")
TRANSPORTS = ("auto", "http", "sse")
#: A namespace: what a mount prefix may be (letters, digits, ``_``, ``-``, ``.``).
NAMESPACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
#: A separator: one to three characters a tool name may hold (``.``, ``_``, ``-``, ``__``...).
SEPARATOR = re.compile(r"[A-Za-z0-9_.-]{1,3}")

_TOP = ("gateway", "upstreams", "auth", "policy", "audit", "admin")
_GATEWAY = ("name", "separator", "start", "search", "redis", "reload")
_UPSTREAM = (
    "command",
    "env",
    "cwd",
    "url",
    "transport",
    "namespace",
    "headers",
    "bearer_env",
    "oauth",
    "timeout",
    "start",
    "enabled",
)
_OAUTH = ("token_url", "client_id", "client_secret_env", "scopes")
_AUTH = (
    "issuer",
    "jwks_url",
    "introspection_url",
    "client_id",
    "client_secret_env",
    "audience",
    "public_url",
    "groups_claim",
)


class ConfigError(ToolwireError):
    """``gateway.toml`` cannot be used; the message is one line saying where and why."""


@dataclass(frozen=True)
class OAuthCredentials:
    """OAuth client credentials the gateway gets an upstream's tokens with (never a caller's).
    ``token_url``: the authorization server's token endpoint (``None``: found by discovery
    from the upstream's resource metadata). The secret is read from ``client_secret_env``."""

    client_id: str
    client_secret_env: str | None = None
    token_url: str | None = None
    scopes: tuple[str, ...] = ()


@dataclass(frozen=True)
class UpstreamConfig:
    """One ``[upstreams.NAME]`` table: a command (stdio) or a URL (Streamable HTTP, or the old
    HTTP+SSE), its credentials, and how the gateway runs it."""

    name: str
    namespace: str
    command: tuple[str, ...] | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    url: str | None = None
    transport: str = "auto"
    headers: Mapping[str, str] = field(default_factory=dict)
    bearer_env: str | None = None
    oauth: OAuthCredentials | None = None
    timeout: float = DEFAULT_TIMEOUT
    start: str = "lazy"
    enabled: bool = True


@dataclass(frozen=True)
class AuthConfig:
    """``[auth]``: how callers over HTTP are authenticated (an issuer's JWTs, or introspection)."""

    audience: str | None = None
    public_url: str | None = None
    issuer: str | None = None
    jwks_url: str | None = None
    introspection_url: str | None = None
    client_id: str | None = None
    client_secret_env: str | None = None
    groups_claim: str = "groups"


@dataclass(frozen=True)
class GatewayConfig:
    """The whole file. ``path``: where it was read from (``None`` for text parsed directly)."""

    upstreams: tuple[UpstreamConfig, ...]
    name: str = DEFAULT_NAME
    separator: str = DEFAULT_SEPARATOR
    start: str = "lazy"
    search: bool = False
    redis: str | None = None
    reload: bool = True
    auth: AuthConfig | None = None
    policy_table: Mapping[str, Any] = field(default_factory=dict)
    audit_table: Mapping[str, Any] = field(default_factory=dict)
    admin_table: Mapping[str, Any] = field(default_factory=dict)
    path: Path | None = None

    def upstream(self, name: str) -> UpstreamConfig:
        """The upstream of the table ``name``; ``KeyError`` if there is none."""
        for upstream in self.upstreams:
            if upstream.name == name:
                return upstream
        raise KeyError(name)


def load_config(path: str | Path) -> GatewayConfig:
    """The configuration in the file ``path``; :class:`ConfigError` if it cannot be read, is
    not TOML, or is not a gateway's configuration."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read: {exc}") from None
    return parse_config(text, path.resolve().parent, path)


def parse_config(text: str, folder: str | Path = ".", path: Path | None = None) -> GatewayConfig:
    """The configuration in ``text``, its relative paths taken from ``folder``;
    :class:`ConfigError` as :func:`load_config`."""
    where = path.name if path is not None else "gateway.toml"
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML: {exc}") from None
    reader = _Reader(where, Path(folder))
    return reader.config(document, path)


class _Reader:
    """Reads the tables of one file, naming it in its errors."""

    def __init__(self, where: str, folder: Path) -> None:
        self.where = where
        self.folder = folder

    def fail(self, table: str, message: str) -> ConfigError:
        return ConfigError(f"{self.where}: [{table}] {message}" if table else f"{self.where}: {message}")

    def keys(self, table: str, values: Mapping[str, Any], known: tuple[str, ...]) -> None:
        for key in values:
            if key not in known:
                close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(known)})"
                raise self.fail(table, f"{key!r} is not a known key{hint}")

    def table(self, table: str, value: Any, key: str = "") -> dict[str, Any]:
        if not isinstance(value, dict):
            what = f"{key!r} must be" if key else "must be"
            raise self.fail(table, f"{what} a table, not {_kind(value)}")
        return value

    def string(self, table: str, values: Mapping[str, Any], key: str, default: Any = None) -> Any:
        value = values.get(key, default)
        if value is not None and not (isinstance(value, str) and value):
            raise self.fail(table, f"{key!r} must be a non-empty string, not {_kind(value)}")
        return value

    def choice(self, table: str, values: Mapping[str, Any], key: str, choices: tuple[str, ...], default: str) -> str:
        value = self.string(table, values, key, default)
        if value not in choices:
            options = " or ".join(repr(choice) for choice in choices)
            raise self.fail(table, f"{key!r} must be {options}, not {value!r}")
        return str(value)

    def boolean(self, table: str, values: Mapping[str, Any], key: str, default: bool) -> bool:
        value = values.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(table, f"{key!r} must be true or false, not {_kind(value)}")
        return value

    def strings(self, table: str, values: Mapping[str, Any], key: str) -> tuple[str, ...]:
        value = values.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            raise self.fail(table, f"{key!r} must be a list of non-empty strings, not {_kind(value)}")
        return tuple(value)

    def mapping(self, table: str, values: Mapping[str, Any], key: str) -> dict[str, str]:
        value = values.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(item, str) for item in value.values()):
            raise self.fail(table, f'{key!r} must be a table of strings ({key} = {{ NAME = "value" }})')
        return dict(value)

    def config(self, document: dict[str, Any], path: Path | None) -> GatewayConfig:
        self.keys("", document, _TOP)
        gateway = self.table("gateway", document.get("gateway", {}))
        self.keys("gateway", gateway, _GATEWAY)
        separator = self.string("gateway", gateway, "separator", DEFAULT_SEPARATOR)
        if not SEPARATOR.fullmatch(separator):
            raise self.fail(
                "gateway", f"'separator' must be 1 to 3 of letters, digits, '_', '-', '.', not {separator!r}"
            )
        start = self.choice("gateway", gateway, "start", STARTS, "lazy")
        upstreams = self.upstreams(
            self.table("upstreams", document.get("upstreams"), "upstreams") if "upstreams" in document else None,
            separator,
            start,
        )
        auth = self.auth(self.table("auth", document["auth"])) if "auth" in document else None
        return GatewayConfig(
            upstreams=upstreams,
            name=self.string("gateway", gateway, "name", DEFAULT_NAME),
            separator=separator,
            start=start,
            search=self.boolean("gateway", gateway, "search", False),
            redis=self.string("gateway", gateway, "redis"),
            reload=self.boolean("gateway", gateway, "reload", True),
            auth=auth,
            policy_table=self.table("policy", document.get("policy", {})),
            audit_table=self.table("audit", document.get("audit", {})),
            admin_table=self.table("admin", document.get("admin", {})),
            path=path.resolve() if path is not None else None,
        )

    def upstreams(self, tables: dict[str, Any] | None, separator: str, start: str) -> tuple[UpstreamConfig, ...]:
        if not tables:
            raise self.fail("", "no upstreams: add one table per server, [upstreams.NAME] with command = [...] or url")
        upstreams = [self.upstream(name, value, separator, start) for name, value in tables.items()]
        seen: dict[str, str] = {}
        for upstream in upstreams:
            other = seen.setdefault(upstream.namespace, upstream.name)
            if other != upstream.name:
                raise self.fail(
                    f"upstreams.{upstream.name}",
                    f'namespace {upstream.namespace!r} is [upstreams.{other}]\'s already: give one a namespace = "..."',
                )
        return tuple(upstreams)

    def upstream(self, name: str, value: Any, separator: str, start: str) -> UpstreamConfig:
        table = f"upstreams.{name}"
        values = self.table(table, value)
        self.keys(table, values, _UPSTREAM)
        command, url = values.get("command"), self.string(table, values, "url")
        if (command is None) == (url is None):
            raise self.fail(table, 'needs either command = ["program", ...] (stdio) or url = "https://...", not both')
        namespace = self.string(table, values, "namespace", name)
        if not NAMESPACE.fullmatch(namespace) or separator in namespace:
            raise self.fail(
                table,
                f"namespace {namespace!r} must be letters, digits, '_', '-' or '.', starting with a letter or digit,"
                f' without the separator {separator!r} (set namespace = "...")',
            )
        timeout = values.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise self.fail(table, f"'timeout' must be a number of seconds above 0, not {_kind(timeout)}")
        if command is not None:
            if not isinstance(command, list) or not command or not all(isinstance(w, str) and w for w in command):
                raise self.fail(table, f"'command' must be a non-empty list of strings, not {_kind(command)}")
            for key in ("headers", "bearer_env", "oauth", "transport"):
                if key in values:
                    raise self.fail(table, f"{key!r} is for url upstreams; a command's credentials go in env")
        else:
            if not str(url).startswith(("http://", "https://")):
                raise self.fail(table, f"'url' must start with http:// or https://, not {url!r}")
            for key in ("env", "cwd"):
                if key in values:
                    raise self.fail(table, f"{key!r} is for command upstreams (a url has no process to run)")
        cwd = self.string(table, values, "cwd")
        oauth = self.oauth(f"{table}.oauth", self.table(table, values["oauth"], "oauth")) if "oauth" in values else None
        return UpstreamConfig(
            name=name,
            namespace=namespace,
            command=tuple(command) if command is not None else None,
            env=self.mapping(table, values, "env"),
            cwd=(self.folder / cwd if cwd is not None else self.folder) if command is not None else None,
            url=url,
            transport=self.choice(table, values, "transport", TRANSPORTS, "auto"),
            headers=self.mapping(table, values, "headers"),
            bearer_env=self.string(table, values, "bearer_env"),
            oauth=oauth,
            timeout=float(timeout),
            start=self.choice(table, values, "start", STARTS, start),
            enabled=self.boolean(table, values, "enabled", True),
        )

    def oauth(self, table: str, values: dict[str, Any]) -> OAuthCredentials:
        self.keys(table, values, _OAUTH)
        client_id = self.string(table, values, "client_id")
        if client_id is None:
            raise self.fail(
                table, "'client_id' is needed (the gateway's client registered with the authorization server)"
            )
        token_url = self.string(table, values, "token_url")
        if token_url is not None and not token_url.startswith(("http://", "https://")):
            raise self.fail(table, f"'token_url' must start with http:// or https://, not {token_url!r}")
        return OAuthCredentials(
            client_id=client_id,
            client_secret_env=self.string(table, values, "client_secret_env"),
            token_url=token_url,
            scopes=self.strings(table, values, "scopes"),
        )

    def auth(self, values: dict[str, Any]) -> AuthConfig:
        self.keys("auth", values, _AUTH)
        config = AuthConfig(
            audience=self.string("auth", values, "audience"),
            public_url=self.string("auth", values, "public_url"),
            issuer=self.string("auth", values, "issuer"),
            jwks_url=self.string("auth", values, "jwks_url"),
            introspection_url=self.string("auth", values, "introspection_url"),
            client_id=self.string("auth", values, "client_id"),
            client_secret_env=self.string("auth", values, "client_secret_env"),
            groups_claim=self.string("auth", values, "groups_claim", "groups"),
        )
        if not (config.issuer or config.introspection_url):
            raise self.fail("auth", 'needs issuer = "https://..." (or introspection_url) to check callers')
        return config


def _kind(value: Any) -> str:
    """How a TOML value is called in messages: ``a string ('x')``, ``an integer (3)``..."""
    names = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table"}
    name = names.get(type(value), type(value).__name__)
    return f"{name} ({value!r})" if isinstance(value, bool | int | float | str) else name
