"""The identity provider behind toolwire's authorization server: what the server needs of it.

toolwire's authorization server (the one MCP clients register with and get tokens from)
signs people in at an upstream provider (any OpenID Connect provider, a plain OAuth 2.0
provider such as GitHub, or a preset for a known one). The server sees that provider only
through :class:`Upstream`: the address to send a person's browser to, and the exchange of
the code that comes back for who the person is and the provider's tokens. The provider's
tokens stay on the server (encrypted at rest); MCP clients get tokens of the server's own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...errors import ToolwireError


class UpstreamError(ToolwireError):
    """The provider refused, failed or could not be reached; the message says which and is
    safe to show a person (it never holds a secret or a token)."""


@dataclass(frozen=True)
class UpstreamIdentity:
    """Who signed in at the provider: ``subject`` is stable per person and provider (OIDC's
    ``sub``, GitHub's numeric id), ``groups`` the groups or roles the provider names, and
    ``claims`` everything else it said (an ID token's claims, or the user-info answer)."""

    subject: str
    email: str | None = None
    name: str | None = None
    groups: tuple[str, ...] = ()
    claims: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class UpstreamTokens:
    """The provider's tokens for one person. ``expires_at`` is in seconds since the epoch
    (``None``: the provider did not say)."""

    access_token: str
    refresh_token: str | None = None
    expires_at: float | None = None
    scope: str | None = None
    id_token: str | None = None


class Upstream(Protocol):
    """An identity provider the authorization server federates to.

    Each method raises :class:`UpstreamError` when the provider refuses or cannot be reached
    within its time limit; none of them blocks without one.
    """

    @property
    def name(self) -> str:
        """A short name for pages and logs (``"github"``, ``"keycloak"``, the issuer's host)."""
        ...

    async def authorization_url(
        self, *, state: str, redirect_uri: str, code_challenge: str, scopes: Sequence[str] | None = None
    ) -> str:
        """The provider's authorization address for a browser, with ``state``, the server's
        own ``redirect_uri`` (its callback), a PKCE S256 ``code_challenge`` and the scopes
        (``None``: the provider's configured defaults). May read the provider's discovery
        document the first time."""
        ...

    async def exchange(
        self, *, code: str, redirect_uri: str, code_verifier: str
    ) -> tuple[UpstreamIdentity, UpstreamTokens]:
        """The code the provider sent back, exchanged for the person's identity (from a
        verified ID token or the user-info endpoint) and the provider's tokens."""
        ...

    async def refresh(self, tokens: UpstreamTokens) -> UpstreamTokens:
        """New tokens for ``tokens`` (its refresh token); :class:`UpstreamError` when there is
        none or the provider refuses it."""
        ...
