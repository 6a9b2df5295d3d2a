"""A server publishing its card: the :class:`ServerCards` extension."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..protocol.versions import SUPPORTED_VERSIONS
from ..server.extensions import Document, Endpoint, Extension
from .document import CARD_MEDIA_TYPE, CARD_SCHEMA, CardInvalid, Repository, parse_card

if TYPE_CHECKING:
    from ..auth.server.resource import ProtectedResource
    from ..server.server import Server

#: The extension's identifier (SEP-2127).
SERVER_CARD_EXTENSION = "io.modelcontextprotocol/server-card"
#: Where a card is served, below the MCP endpoint: the location SEP-2127 reserves.
CARD_PATH = "server-card"


def card_url(endpoint_url: str) -> str:
    """Where the server at MCP endpoint ``endpoint_url`` serves its card, if it does so at the
    reserved location (``https://host/mcp`` → ``https://host/mcp/server-card``)."""
    return endpoint_url.rstrip("/") + "/" + CARD_PATH


class ServerCards(Extension):
    """Serve the server's card over HTTP at ``<endpoint>/server-card`` (``path=``: elsewhere,
    relative to the endpoint or absolute), built from the server as it is when asked.

    From the server: ``version``, ``title``, and the description (``description=``, else the
    server's instructions when their first paragraph has at most 100 characters). The
    remote: Streamable HTTP at the endpoint's URL (``url=``: the public one, for a server
    behind a proxy; else the ``auth=`` resource, else the URL the card was asked at), with
    every protocol version the endpoint serves and, with ``auth=``, the ``Authorization``
    header it needs (its description names the protected resource metadata and the scopes).

    What the server cannot know: ``name`` (reverse-DNS, ``"com.example/weather"``; the
    server's name when it is one), ``website_url``, ``repository`` (a URL, or the object),
    ``icons``, more ``headers`` and URL ``variables`` (as the card writes them), ``meta``
    (namespaced ``_meta``). ``max_age``: seconds caches may keep the card.

    The card says nothing of tools, capabilities or extensions (SEP-2127 leaves them to the
    live connection), and the extension adds nothing to the capabilities: it has no methods.
    ``ValueError`` (a :class:`~toolwire.cards.CardInvalid`) from ``add_extension`` when the
    card would not be valid, naming each problem.
    """

    id = SERVER_CARD_EXTENSION

    def __init__(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        url: str | None = None,
        website_url: str | None = None,
        repository: str | Repository | dict[str, Any] | None = None,
        icons: Sequence[dict[str, Any]] = (),
        headers: Sequence[dict[str, Any]] = (),
        variables: dict[str, dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        path: str = CARD_PATH,
        max_age: int = 3600,
    ) -> None:
        self.name = name
        self.description = description
        self.url = url
        self.website_url = website_url
        self.repository = _repository(repository)
        self.icons = list(icons)
        self.headers = list(headers)
        self.variables = dict(variables or {})
        self.meta = meta
        self.document = Document(path, CARD_MEDIA_TYPE, self.card, max_age)
        self._server: Server | None = None

    def capabilities(self, version: str) -> dict[str, Any]:
        return {}

    def install(self, server: Server) -> None:
        self._server = server
        super().install(server)
        parse_card(self.card(Endpoint(self.url or "http://localhost/mcp", SUPPORTED_VERSIONS, None)))

    def documents(self) -> tuple[Document, ...]:
        return (self.document,)

    def card(self, endpoint: Endpoint) -> dict[str, Any]:
        """The card, as served at ``endpoint``."""
        server = self._server
        if server is None:
            raise RuntimeError("the server card is built once the extension is added to a server")
        info = server.identity.info
        card: dict[str, Any] = {
            "$schema": CARD_SCHEMA,
            "name": self._name(server),
            "version": info["version"],
            "description": self._description(server),
        }
        if info.get("title"):
            card["title"] = info["title"]
        if self.website_url is not None:
            card["websiteUrl"] = self.website_url
        if self.repository is not None:
            card["repository"] = self.repository
        if self.icons:
            card["icons"] = self.icons
        remote: dict[str, Any] = {"type": "streamable-http", "url": self.url or endpoint.url}
        headers = ([_authorization(endpoint.auth)] if endpoint.auth is not None else []) + self.headers
        if headers:
            remote["headers"] = headers
        if self.variables:
            remote["variables"] = self.variables
        remote["supportedProtocolVersions"] = list(endpoint.versions)
        card["remotes"] = [remote]
        if self.meta:
            card["_meta"] = self.meta
        return card

    def _name(self, server: Server) -> str:
        if self.name is not None:
            return self.name
        if "/" in server.name:
            return server.name
        raise CardInvalid(
            [f"name: the server's name {server.name!r} is not reverse-DNS: pass ServerCards(name='com.example/...')"]
        )

    def _description(self, server: Server) -> str:
        if self.description is not None:
            return self.description
        said = server.identity.info.get("description") or (server.identity.instructions or "").strip().split("\n\n")[0]
        if said and len(said) <= 100:
            return " ".join(said.split())
        raise CardInvalid(
            [
                "description: needed, of at most 100 characters: pass ServerCards(description=...) "
                "(the server's instructions are not one)"
            ]
        )


def _authorization(auth: ProtectedResource) -> dict[str, Any]:
    """The ``Authorization`` header an endpoint with ``auth`` needs, as a card describes it."""
    scopes = auth.required_scopes or auth.scopes_supported
    where = f"the protected resource metadata at {auth.metadata_url} names the authorization servers"
    token = (
        "An OAuth access token for "
        + auth.resource
        + (f" with the scopes {' '.join(sorted(scopes))}" if scopes else "")
    )
    return {
        "name": "Authorization",
        "description": f"{token}, sent as 'Bearer TOKEN'; {where}.",
        "isRequired": True,
        "isSecret": True,
        "value": "Bearer {token}",
        "variables": {"token": {"description": token + ".", "isRequired": True, "isSecret": True}},
    }


def _repository(repository: str | Repository | dict[str, Any] | None) -> dict[str, Any] | None:
    """The card's ``repository`` object: a URL's source is its host's first label (``github``)."""
    if repository is None or isinstance(repository, dict):
        return repository
    if isinstance(repository, str):
        host = urlsplit(repository).hostname or ""
        labels = host.split(".")
        repository = Repository(repository, labels[-2] if len(labels) >= 2 else host)
    fields = {"url": repository.url, "source": repository.source}
    if repository.subfolder is not None:
        fields["subfolder"] = repository.subfolder
    if repository.id is not None:
        fields["id"] = repository.id
    return fields
