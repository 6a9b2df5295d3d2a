"""Who the clients are: Dynamic Client Registration (RFC 7591) and Client ID Metadata
Documents (the 2025-11-25 specification's client registration), and the redirect URIs they
may use.

A redirect URI is ``https``, or ``http`` on a loopback address (RFC 8252), without a
fragment; it is matched exactly, except that a loopback one matches on any port. A client ID
that is an ``https`` URL with a path is a metadata document, fetched at most once per
``cache_seconds``, with protection against server-side request forgery: the host's
addresses must all be public (the connection goes to the address checked, so DNS cannot
change it in between), no redirects are followed, the document is at most ``max_bytes`` and
must arrive within ``timeout`` seconds, and its ``client_id`` must be its own URL.
``allow_private=True`` (for development and tests) lets documents come from this machine or
the private network, over ``http`` on a loopback address too. :class:`ClientError` says
what is wrong in words a developer can act on.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ....errors import ToolwireError
from ....fetch import shown
from .state import AuthState
from .tokens import digest, random_token

LOOPBACK_HOSTS = ("127.0.0.1", "[::1]", "localhost")
AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post")
MAX_REDIRECT_URIS = 20
MAX_URI_LENGTH = 2000
#: A registered client is kept a year after the last code issued to it...
CLIENT_TTL = 365 * 24 * 3600.0
#: ... and a day after registering while none is (registrations never used do not pile up).
UNUSED_CLIENT_TTL = 24 * 3600.0


class ClientError(ToolwireError):
    """A registration, or a client's metadata document, that cannot be accepted (RFC 7591's
    ``error`` code and the reason)."""

    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error


def check_redirect_uri(uri: Any) -> str:
    """``uri`` if a client may register it; :class:`ClientError` saying why not."""
    if not isinstance(uri, str) or len(uri) > MAX_URI_LENGTH:
        raise ClientError("invalid_redirect_uri", f"a redirect URI is a string of at most {MAX_URI_LENGTH} characters")
    parts = urlsplit(uri)
    if parts.fragment or "#" in uri:
        raise ClientError("invalid_redirect_uri", f"the redirect URI {shown(uri)} has a fragment")
    loopback = parts.scheme == "http" and _host(parts.netloc) in LOOPBACK_HOSTS
    if not parts.netloc or not (parts.scheme == "https" or loopback):
        raise ClientError(
            "invalid_redirect_uri",
            f"the redirect URI {shown(uri)} must be https, or http on 127.0.0.1, [::1] or localhost",
        )
    return uri


def redirect_matches(registered: list[str], asked: str) -> bool:
    """Whether ``asked`` is one of the ``registered`` URIs: exactly, or a loopback one on any port."""
    if asked in registered:
        return True
    parts = urlsplit(asked)
    if parts.scheme != "http" or _host(parts.netloc) not in LOOPBACK_HOSTS:
        return False
    portless = urlunsplit(("http", _host(parts.netloc), parts.path, parts.query, ""))
    return any(
        urlunsplit(("http", _host(urlsplit(uri).netloc), urlsplit(uri).path, urlsplit(uri).query, "")) == portless
        for uri in registered
        if urlsplit(uri).scheme == "http"
    )


def _host(netloc: str) -> str:
    host = netloc.rpartition("@")[2]
    if host.startswith("["):
        return host.partition("]")[0] + "]"
    return host.partition(":")[0].lower()


def is_metadata_url(client_id: str) -> bool:
    """Whether ``client_id`` names a Client ID Metadata Document (an http(s) URL with a path)."""
    parts = urlsplit(client_id)
    return parts.scheme in ("https", "http") and bool(parts.netloc) and parts.path not in ("", "/")


class Clients:
    """The clients of one authorization server, kept in ``state`` (see the module)."""

    def __init__(
        self,
        state: AuthState,
        *,
        allow_private: bool = False,
        timeout: float = 5.0,
        max_bytes: int = 64 * 1024,
        cache_seconds: float = 300.0,
    ) -> None:
        self.state = state
        self.allow_private = allow_private
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.cache_seconds = cache_seconds
        self._documents: dict[str, tuple[float, dict[str, Any]]] = {}

    async def register(self, metadata: Any) -> dict[str, Any]:
        """Register a client (RFC 7591) from its ``metadata``; the registration response.
        A client with ``token_endpoint_auth_method`` other than ``none`` gets a secret."""
        if not isinstance(metadata, dict):
            raise ClientError("invalid_client_metadata", "the registration must be a JSON object")
        client = _client_metadata(metadata)
        client["client_id"] = random_token()
        answer = {**client, "client_id_issued_at": int(time.time())}
        if client["token_endpoint_auth_method"] != "none":
            secret = random_token()
            client["secret"] = digest(secret)
            answer.update(client_secret=secret, client_secret_expires_at=0)
        await self.state.put("client", client["client_id"], client, UNUSED_CLIENT_TTL)
        return answer

    async def used(self, client_id: str) -> None:
        """Keep a registered client a year from now (a code is being issued to it); nothing
        for a metadata document (not kept) or a client no longer registered."""
        client = None if is_metadata_url(client_id) else await self.state.get("client", client_id)
        if client is not None:
            await self.state.put("client", client_id, client, CLIENT_TTL)

    async def find(self, client_id: str) -> dict[str, Any]:
        """A client by its ID: registered, or a metadata document (fetched, or cached);
        :class:`ClientError` (``invalid_client``) when there is none."""
        if is_metadata_url(client_id):
            return await self._document(client_id)
        client = await self.state.get("client", client_id)
        if client is None:
            raise ClientError("invalid_client", f"no client {shown(client_id)} is registered here: register again")
        return client

    async def _document(self, url: str) -> dict[str, Any]:
        cached = self._documents.get(url)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        document = await self._fetch(url)
        if document.get("client_id") != url:
            raise ClientError("invalid_client", f"the metadata document at {shown(url)} names another client_id")
        client = _client_metadata(document)
        if client["token_endpoint_auth_method"] != "none":
            raise ClientError("invalid_client", "a client with a metadata document authenticates with 'none' here")
        client["client_id"] = url
        self._documents[url] = (time.monotonic() + self.cache_seconds, client)
        if len(self._documents) > 10_000:
            self._documents.pop(next(iter(self._documents)))
        return client

    async def _fetch(self, url: str) -> dict[str, Any]:
        """The document at ``url`` (see the module for the bounds)."""
        import httpx
        import orjson

        from ....fetch import read_body

        parts = urlsplit(url)
        host = parts.hostname or ""
        loopback = _host(parts.netloc) in LOOPBACK_HOSTS
        if parts.scheme != "https" and not (self.allow_private and loopback):
            raise ClientError("invalid_client", f"the client ID {shown(url)} is not an https URL")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            async with asyncio.timeout(self.timeout):
                address = await self._public_address(host, port)
                pinned = urlunsplit((parts.scheme, _netloc(address, parts.port), parts.path, parts.query, ""))
                async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as http:
                    request = http.build_request(
                        "GET",
                        pinned,
                        headers={"host": parts.netloc, "accept": "application/json"},
                        extensions={"sni_hostname": host},
                    )
                    response = await http.send(request, stream=True)
                    try:
                        if response.status_code != 200:
                            raise ClientError(
                                "invalid_client",
                                f"the client's metadata document at {shown(url)} answered {response.status_code}",
                            )
                        body = await read_body(response, self.max_bytes)
                    finally:
                        await response.aclose()
        except TimeoutError:
            raise ClientError(
                "invalid_client",
                f"the client's metadata document at {shown(url)} did not arrive within {self.timeout:g} s",
            ) from None
        except (httpx.HTTPError, OSError, ToolwireError) as exc:
            if isinstance(exc, ClientError):
                raise
            raise ClientError(
                "invalid_client", f"the client's metadata document at {shown(url)} could not be fetched: {exc}"
            ) from None
        try:
            document = orjson.loads(body)
        except orjson.JSONDecodeError:
            document = None
        if not isinstance(document, dict):
            raise ClientError("invalid_client", f"the client's metadata document at {shown(url)} is not a JSON object")
        return document

    async def _public_address(self, host: str, port: int) -> str:
        """An address of ``host`` to connect to; :class:`ClientError` if any of its addresses
        is not public (unless private ones are allowed)."""
        try:
            found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError:
            raise ClientError("invalid_client", f"the host {shown(host)} of the client ID does not resolve") from None
        addresses = [ipaddress.ip_address(str(info[4][0]).partition("%")[0]) for info in found]
        if not addresses:
            raise ClientError("invalid_client", f"the host {shown(host)} of the client ID has no address")
        private = [address for address in addresses if not address.is_global]
        if private and not self.allow_private:
            raise ClientError(
                "invalid_client",
                f"the client ID's host {shown(host)} has the non-public address {private[0]}: not fetched",
            )
        return str(addresses[0])


def _netloc(address: str, port: int | None) -> str:
    shown_address = f"[{address}]" if ":" in address else address
    return f"{shown_address}:{port}" if port is not None else shown_address


def _client_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """The checked metadata a client is kept with; :class:`ClientError` naming what is wrong."""
    uris = metadata.get("redirect_uris")
    if not isinstance(uris, list) or not 0 < len(uris) <= MAX_REDIRECT_URIS:
        raise ClientError(
            "invalid_redirect_uri", f"a client needs redirect_uris: a list of 1 to {MAX_REDIRECT_URIS} URIs"
        )
    method = metadata.get("token_endpoint_auth_method", "client_secret_basic")
    if method not in AUTH_METHODS:
        raise ClientError(
            "invalid_client_metadata",
            f"token_endpoint_auth_method {shown(str(method))} is not supported (use one of {', '.join(AUTH_METHODS)})",
        )
    grants = metadata.get("grant_types", ["authorization_code"])
    if not isinstance(grants, list) or not set(grants) <= {"authorization_code", "refresh_token"}:
        raise ClientError("invalid_client_metadata", "grant_types may be authorization_code and refresh_token only")
    responses = metadata.get("response_types", ["code"])
    if responses != ["code"]:
        raise ClientError("invalid_client_metadata", "response_types must be ['code']")
    name = metadata.get("client_name")
    client: dict[str, Any] = {
        "redirect_uris": [check_redirect_uri(uri) for uri in uris],
        "token_endpoint_auth_method": method,
        "grant_types": grants,
        "response_types": responses,
    }
    if isinstance(name, str) and name.strip():
        client["client_name"] = name.strip()[:200]
    return client
