"""A server card as a typed value, and the reading of one: :func:`parse_card`.

The fields are those of the extension's ``schema.ts`` (``ServerCard``, ``Remote``, ``Input``,
``KeyValueInput``, ``Repository``, the protocol's ``Icon``), in snake case; objects are
open, so what a card has beyond them stays in :attr:`ServerCard.raw`. Reading checks what
the schema says (required fields, types, lengths, patterns, the one ``$schema`` URL) and the
prose rules it cannot (a version is not a range), and raises :class:`CardInvalid` naming every
problem at its place in the document (``remotes[0].url``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

#: The ``$schema`` every v1 card carries, and the only one.
CARD_SCHEMA = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
#: The media type a card is served and asked for with.
CARD_MEDIA_TYPE = "application/mcp-server-card+json"

NAME = re.compile(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+")
REMOTE_URL = re.compile(r"(https?://[^\s]+|\{[a-zA-Z_][a-zA-Z0-9_]*\}[^\s]*)")
_RANGE_PREFIXES = ("^", "~", ">", "<", "=")
_TRANSPORTS = ("streamable-http", "sse")
_FORMATS = ("string", "number", "boolean", "filepath")


class CardInvalid(ValueError):
    """A document that is not a valid server card; :attr:`problems` lists what is wrong, each
    at its place (``"remotes[0].url: ..."``)."""

    def __init__(self, problems: list[str], source: str = "the server card") -> None:
        super().__init__(f"{source} is not valid: " + "; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Input:
    """A value a user supplies (or that is preset), for a remote's URL variable or a header."""

    description: str | None = None
    is_required: bool = False
    is_secret: bool = False
    format: str | None = None
    default: str | None = None
    placeholder: str | None = None
    value: str | None = None
    choices: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Header(Input):
    """An HTTP header to send to a remote (``KeyValueInput``): ``value`` may name ``variables``."""

    name: str = ""
    variables: dict[str, Input] = field(default_factory=dict)


@dataclass(frozen=True)
class Remote:
    """One endpoint to connect to: its transport, URL (maybe a template), headers, versions."""

    type: str
    url: str
    headers: tuple[Header, ...] = ()
    variables: dict[str, Input] = field(default_factory=dict)
    supported_protocol_versions: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Repository:
    """Where the server's source code is."""

    url: str
    source: str
    subfolder: str | None = None
    id: str | None = None


@dataclass(frozen=True)
class ServerCard:
    """A server card (SEP-2127): who the server is and how to connect to it. :attr:`raw` is
    the document as read (or as served)."""

    name: str
    version: str
    description: str
    title: str | None = None
    website_url: str | None = None
    repository: Repository | None = None
    icons: tuple[dict[str, Any], ...] = ()
    remotes: tuple[Remote, ...] = ()
    meta: dict[str, Any] | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)


def parse_card(document: Any, source: str = "the server card") -> ServerCard:
    """The card ``document`` (a JSON object) describes; :class:`CardInvalid` listing every
    problem otherwise (``source`` names the document in its message)."""
    reader = _Reader()
    card = reader.card(document)
    if reader.problems or card is None:
        raise CardInvalid(reader.problems or ["the document is not a JSON object"], source)
    return card


class _Reader:
    """Reads a card, noting each problem rather than stopping at the first."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def note(self, where: str, problem: str) -> None:
        self.problems.append(f"{where}: {problem}" if where else problem)

    def card(self, document: Any) -> ServerCard | None:
        if type(document) is not dict:
            self.note("", f"a server card is a JSON object, not {_kind(document)}")
            return None
        schema = document.get("$schema")
        if schema != CARD_SCHEMA:
            said = "is missing" if schema is None else f"is {schema!r}"
            self.note("$schema", f"{said}; a v1 card says {CARD_SCHEMA!r}")
        name = self.text(document, "name", "", required=True, least=3, most=200)
        if name and not NAME.fullmatch(name):
            self.note("name", f"{name!r} is not 'namespace/name' in reverse-DNS form (e.g. 'com.example/weather')")
        version = self.text(document, "version", "", required=True, most=255)
        if version and (version.startswith(_RANGE_PREFIXES) or "||" in version or _wildcard(version)):
            self.note("version", f"{version!r} is a range; a card names one version")
        description = self.text(document, "description", "", required=True, least=1, most=100)
        title = self.text(document, "title", "", least=1, most=100)
        website = self.text(document, "websiteUrl", "")
        if website is not None and not website.startswith(("http://", "https://")):
            self.note("websiteUrl", f"{website!r} is not an http(s) URL")
        repository = self.repository(document.get("repository"))
        icons = tuple(self.each(document, "icons", "", self.icon))
        remotes = tuple(self.each(document, "remotes", "", self.remote))
        meta = document.get("_meta")
        if meta is not None and type(meta) is not dict:
            self.note("_meta", f"must be an object, not {_kind(meta)}")
        return ServerCard(
            name=name or "",
            version=version or "",
            description=description or "",
            title=title,
            website_url=website,
            repository=repository,
            icons=tuple(icon for icon in icons if icon is not None),
            remotes=tuple(remote for remote in remotes if remote is not None),
            meta=meta if type(meta) is dict else None,
            raw=document,
        )

    def repository(self, value: Any) -> Repository | None:
        if value is None:
            return None
        if type(value) is not dict:
            self.note("repository", f"must be an object, not {_kind(value)}")
            return None
        url = self.text(value, "url", "repository.", required=True)
        source = self.text(value, "source", "repository.", required=True)
        subfolder = self.text(value, "subfolder", "repository.")
        identifier = self.text(value, "id", "repository.")
        return Repository(url or "", source or "", subfolder, identifier)

    def icon(self, value: Any, where: str) -> dict[str, Any] | None:
        if type(value) is not dict:
            self.note(where, f"an icon is an object, not {_kind(value)}")
            return None
        self.text(value, "src", where + ".", required=True)
        self.text(value, "mimeType", where + ".")
        self.strings(value, "sizes", where + ".")
        theme = value.get("theme")
        if theme is not None and theme not in ("light", "dark"):
            self.note(where + ".theme", f"is 'light' or 'dark', not {theme!r}")
        return value

    def remote(self, value: Any, where: str) -> Remote | None:
        if type(value) is not dict:
            self.note(where, f"a remote is an object, not {_kind(value)}")
            return None
        kind = value.get("type")
        if kind not in _TRANSPORTS:
            self.note(where + ".type", f"is 'streamable-http' or 'sse', not {kind!r}")
        url = self.text(value, "url", where + ".", required=True)
        if url is not None and not REMOTE_URL.fullmatch(url):
            self.note(where + ".url", f"{url!r} does not start with http://, https:// or a {{variable}}")
        headers = tuple(self.each(value, "headers", where + ".", self.header))
        versions = self.strings(value, "supportedProtocolVersions", where + ".")
        return Remote(
            type=kind if isinstance(kind, str) else "",
            url=url or "",
            headers=tuple(header for header in headers if header is not None),
            variables=self.variables(value, where + "."),
            supported_protocol_versions=versions,
        )

    def header(self, value: Any, where: str) -> Header | None:
        if type(value) is not dict:
            self.note(where, f"a header is an object, not {_kind(value)}")
            return None
        name = self.text(value, "name", where + ".", required=True)
        return Header(**self.input_fields(value, where), name=name or "", variables=self.variables(value, where + "."))

    def variables(self, owner: dict[str, Any], prefix: str) -> dict[str, Input]:
        value = owner.get("variables")
        if value is None:
            return {}
        if type(value) is not dict:
            self.note(prefix + "variables", f"must be an object, not {_kind(value)}")
            return {}
        found: dict[str, Input] = {}
        for name, spec in value.items():
            where = f"{prefix}variables.{name}"
            if type(spec) is not dict:
                self.note(where, f"an input is an object, not {_kind(spec)}")
                continue
            found[name] = Input(**self.input_fields(spec, where))
        return found

    def input_fields(self, value: dict[str, Any], where: str) -> dict[str, Any]:
        prefix = where + "."
        fields: dict[str, Any] = {
            key: self.text(value, wire, prefix)
            for key, wire in (("description", "description"), ("default", "default"), ("placeholder", "placeholder"))
        }
        fields["value"] = self.text(value, "value", prefix)
        fields["is_required"] = self.flag(value, "isRequired", prefix)
        fields["is_secret"] = self.flag(value, "isSecret", prefix)
        form = value.get("format")
        if form is not None and form not in _FORMATS:
            self.note(prefix + "format", f"is one of {', '.join(_FORMATS)}, not {form!r}")
        fields["format"] = form if form in _FORMATS else None
        fields["choices"] = self.strings(value, "choices", prefix)
        return fields

    # -- fields ----------------------------------------------------------------------------

    def text(
        self, owner: dict[str, Any], key: str, prefix: str, *, required: bool = False, least: int = 0, most: int = 0
    ) -> str | None:
        value = owner.get(key)
        if value is None:
            if required:
                self.note(prefix + key, "is required")
            return None
        if type(value) is not str:
            self.note(prefix + key, f"must be a string, not {_kind(value)}")
            return None
        if len(value) < least:
            self.note(prefix + key, "must not be empty" if least == 1 else f"needs at least {least} characters")
        if most and len(value) > most:
            self.note(prefix + key, f"has {len(value)} characters, more than {most}")
        return value

    def flag(self, owner: dict[str, Any], key: str, prefix: str) -> bool:
        value = owner.get(key)
        if value is not None and type(value) is not bool:
            self.note(prefix + key, f"must be true or false, not {_kind(value)}")
        return value is True

    def strings(self, owner: dict[str, Any], key: str, prefix: str) -> tuple[str, ...] | None:
        value = owner.get(key)
        if value is None:
            return None
        if type(value) is not list or not all(type(item) is str for item in value):
            self.note(prefix + key, "must be a list of strings")
            return None
        return tuple(value)

    def each(self, owner: dict[str, Any], key: str, prefix: str, read: Any) -> list[Any]:
        value = owner.get(key)
        if value is None:
            return []
        if type(value) is not list:
            self.note(prefix + key, f"must be a list, not {_kind(value)}")
            return []
        return [read(item, f"{prefix}{key}[{index}]") for index, item in enumerate(value)]


def _wildcard(version: str) -> bool:
    return any(part in ("x", "X", "*") for part in version.split("."))


def _kind(value: Any) -> str:
    """What a JSON value is, for messages."""
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)
