"""Where an authorization server publishes its metadata: read by the server's side (a
verifier finding an issuer's keys) and the client's (OAuth discovering the endpoints)."""

from __future__ import annotations

from urllib.parse import urlsplit


def metadata_urls(issuer: str) -> list[str]:
    """Where ``issuer``'s metadata may be, in the order MCP clients try them: RFC 8414 and
    OpenID discovery with the path inserted, then OpenID discovery with it appended."""
    parts = urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if not path:
        return [f"{origin}/.well-known/oauth-authorization-server", f"{origin}/.well-known/openid-configuration"]
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]
