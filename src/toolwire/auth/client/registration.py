"""Registration for :class:`~toolwire.auth.client.oauth.OAuth`: this client at an
authorization server, pre-registered, as a Client ID Metadata Document, or registered
dynamically (RFC 7591) and kept in the token store (see step 2 of the :mod:`.oauth` module's
description)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ...fetch import FetchFailed, fetch
from .errors import AuthorizationError, oauth_error

if TYPE_CHECKING:
    from .tokenstore import TokenStore


@dataclass
class Registration:
    """This client as an authorization server knows it."""

    client_id: str
    client_secret: str | None
    method: str  # token endpoint authentication


class ClientRegistration:
    """:class:`~toolwire.auth.client.oauth.OAuth`'s registration (a mixin of it).
    :class:`AuthorizationError` when the client cannot be registered."""

    if TYPE_CHECKING:
        client_id: str | None
        client_secret: str | None
        token_endpoint_auth_method: str | None
        client_metadata_url: str | None
        client_name: str
        redirect_uri: str
        grant: str
        private_key: Any
        store: TokenStore

        timeout: float

    async def _registration(self, issuer: str, metadata: dict[str, Any]) -> Registration:
        """This client at ``issuer``: pre-registered, its metadata document, or registered
        dynamically (and kept in the store)."""
        if self.client_id is not None:
            method = self.token_endpoint_auth_method or self._default_method(metadata, self.client_secret is not None)
            return Registration(self.client_id, self.client_secret, method)
        if self.client_metadata_url is not None and metadata.get("client_id_metadata_document_supported") is True:
            return Registration(self.client_metadata_url, None, "private_key_jwt" if self.private_key else "none")
        stored = self.store.load(client_key(issuer))
        if stored is not None and isinstance(stored.get("client_id"), str):
            return Registration(stored["client_id"], stored.get("client_secret"), stored.get("method", "none"))
        endpoint = metadata.get("registration_endpoint")
        if not isinstance(endpoint, str):
            raise AuthorizationError(
                f"the authorization server {issuer} offers no way to register this client: "
                "give client_id= (and client_secret=) of a client registered there"
            )
        method = self.token_endpoint_auth_method or self._default_method(metadata, confidential=False)
        grant_types = ["authorization_code", "refresh_token"] if self.grant == "authorization_code" else [self.grant]
        asked = {
            "client_name": self.client_name,
            "application_type": "native" if loopback(self.redirect_uri) else "web",
            "redirect_uris": [self.redirect_uri],
            "grant_types": grant_types,
            "response_types": ["code"] if self.grant == "authorization_code" else [],
            "token_endpoint_auth_method": method,
        }
        try:
            response = await fetch(
                endpoint,
                method="POST",
                json=asked,
                headers={"Accept": "application/json"},
                timeout=self.timeout,
                follow_redirects=False,
            )
            answer = response.json()
        except (FetchFailed, ValueError) as exc:
            raise AuthorizationError(f"registering with {issuer} failed: {type(exc).__name__}: {exc}") from None
        if response.status not in (200, 201) or not isinstance(answer, dict) or "client_id" not in answer:
            raise AuthorizationError(
                f"{issuer} refused to register this client: {oauth_error(response.status, answer)}"
            )
        registration = Registration(
            str(answer["client_id"]),
            answer.get("client_secret") if isinstance(answer.get("client_secret"), str) else None,
            str(answer.get("token_endpoint_auth_method") or method),
        )
        self.store.save(
            client_key(issuer),
            {
                "client_id": registration.client_id,
                "client_secret": registration.client_secret,
                "method": registration.method,
            },
        )
        return registration

    def _default_method(self, metadata: dict[str, Any], confidential: bool) -> str:
        """The token endpoint authentication to use: a key's ``private_key_jwt``; for a
        secret, Basic unless the server supports only the POST form; else ``none`` (a public
        client), or what the server supports when it does not support that."""
        supported = metadata.get("token_endpoint_auth_methods_supported")
        supported = supported if isinstance(supported, list) else ["client_secret_basic"]
        if self.private_key is not None:
            return "private_key_jwt"
        if confidential:
            return (
                "client_secret_post"
                if "client_secret_basic" not in supported and "client_secret_post" in supported
                else "client_secret_basic"
            )
        if "none" in supported or not supported:
            return "none"
        return "client_secret_basic" if "client_secret_basic" in supported else str(supported[0])


def client_key(issuer: str) -> str:
    """The store key of this client's registration at ``issuer``."""
    return f"client {issuer}"


def loopback(uri: str) -> bool:
    """Whether ``uri`` redirects to this machine (a native application's redirect)."""
    return urlsplit(uri).hostname in ("127.0.0.1", "localhost", "::1")
