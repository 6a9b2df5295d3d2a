"""Discovery for :class:`~toolwire.auth.client.oauth.OAuth`: the MCP server's Protected
Resource Metadata, then its authorization server's metadata, each checked to be for what was
asked (see step 1 of the :mod:`.oauth` module's description)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ...fetch import FetchFailed, fetch
from ..metadata import metadata_urls
from .errors import AuthorizationError


@dataclass
class Discovered:
    """What discovery found for one MCP server."""

    resource: str  # the ``resource`` parameter: the protected resource's identifier
    issuer: str
    metadata: dict[str, Any]  # the authorization server's
    scopes_supported: list[str] | None  # the protected resource's
    takes_dpop: bool = False  # whether the protected resource accepts DPoP-bound tokens


class MetadataDiscovery:
    """:class:`~toolwire.auth.client.oauth.OAuth`'s discovery (a mixin of it): what it found
    is kept by issuer. Raises :class:`AuthorizationError` for metadata that is missing or
    for another resource or issuer."""

    if TYPE_CHECKING:
        _metadata: dict[str, dict[str, Any]]

        timeout: float

    async def _discover(self, target: str, challenge: dict[str, str], takes_dpop: bool) -> Discovered:
        """What the server and its authorization server publish; ``takes_dpop``: it
        challenged with the ``DPoP`` scheme."""
        resource_metadata = await self._resource_metadata(target, challenge.get("resource_metadata"))
        if resource_metadata is None:  # 2025-03-26: the server's origin is its authorization server
            parts = urlsplit(target)
            issuer = f"{parts.scheme}://{parts.netloc}"
            metadata = await self._server_metadata(issuer, legacy=True)
            return Discovered(target, issuer, metadata, None)
        resource = resource_metadata.get("resource")
        if not isinstance(resource, str) or not covers(resource, target):
            raise AuthorizationError(
                f"{target} published resource metadata for {resource!r}, not for itself: refusing to authorize"
            )
        servers = resource_metadata.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
            raise AuthorizationError(f"{target}'s resource metadata names no authorization server")
        issuer = servers[0]
        metadata = await self._server_metadata(issuer, legacy=False)
        supported = resource_metadata.get("scopes_supported")
        scopes = [s for s in supported if isinstance(s, str)] if isinstance(supported, list) else None
        takes_dpop = (
            takes_dpop
            or resource_metadata.get("dpop_bound_access_tokens_required") is True
            or isinstance(resource_metadata.get("dpop_signing_alg_values_supported"), list)
        )
        return Discovered(resource, issuer, metadata, scopes, takes_dpop)

    async def _resource_metadata(self, target: str, announced: str | None) -> dict[str, Any] | None:
        """The Protected Resource Metadata: from the URL the challenge announced, else the
        well-known URIs (with the endpoint's path, then at the root); ``None`` if none."""
        parts = urlsplit(target)
        origin = f"{parts.scheme}://{parts.netloc}"
        path = parts.path.rstrip("/")
        candidates = [announced] if announced else []
        if path:
            candidates.append(f"{origin}/.well-known/oauth-protected-resource{path}")
        candidates.append(f"{origin}/.well-known/oauth-protected-resource")
        for url in candidates:
            document = await self._get_json(url)
            if document is not None:
                return document
        return None

    async def _server_metadata(self, issuer: str, legacy: bool) -> dict[str, Any]:
        """The authorization server's metadata, its ``issuer`` checked; for a 2025-03-26
        server without any, the default endpoints at its origin."""
        known = self._metadata.get(issuer)
        if known is not None:
            return known
        mismatched = None
        for url in metadata_urls(issuer):
            document = await self._get_json(url)
            if document is None:
                continue
            if document.get("issuer") != issuer:
                mismatched = document.get("issuer")
                continue  # a document for another issuer must not be used
            self._metadata[issuer] = document
            return document
        if mismatched is not None:
            raise AuthorizationError(
                f"the authorization server metadata for {issuer} names another issuer ({mismatched!r}): not used"
            )
        if not legacy:
            raise AuthorizationError(f"the authorization server {issuer} publishes no metadata")
        fallback = {
            "issuer": issuer,
            "authorization_endpoint": f"{issuer}/authorize",
            "token_endpoint": f"{issuer}/token",
            "registration_endpoint": f"{issuer}/register",
            "_fallback": True,
        }
        self._metadata[issuer] = fallback
        return fallback

    async def _get_json(self, url: str) -> dict[str, Any] | None:
        try:
            response = await fetch(
                url, headers={"Accept": "application/json"}, timeout=self.timeout, follow_redirects=False
            )
            document = response.json() if response.status == 200 else None
        except (FetchFailed, ValueError):
            return None
        return document if isinstance(document, dict) else None


def covers(resource: str, target: str) -> bool:
    """Whether the protected resource ``resource`` is ``target`` or a parent of it (same
    origin, its path a whole-segment prefix of the target's)."""
    have, want = urlsplit(resource), urlsplit(target)
    if (have.scheme.lower(), have.netloc.lower()) != (want.scheme.lower(), want.netloc.lower()):
        return False
    prefix = have.path.rstrip("/")
    return want.path.rstrip("/") == prefix or want.path.startswith(prefix + "/")
