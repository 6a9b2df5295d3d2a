"""The authorization server's metadata (RFC 8414), served at
``/.well-known/oauth-authorization-server`` beside the protected resource's own (RFC 9728),
which names this server as its authorization server."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import AuthorizationServer

WELL_KNOWN = "/.well-known/oauth-authorization-server"


def metadata(server: AuthorizationServer) -> dict[str, Any]:
    """The metadata document: where each endpoint is and what the server supports."""
    issuer = server.issuer
    document: dict[str, Any] = {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/oauth/authorize",
        "token_endpoint": f"{issuer}/oauth/token",
        "registration_endpoint": f"{issuer}/oauth/register",
        "revocation_endpoint": f"{issuer}/oauth/revoke",
        "jwks_uri": f"{issuer}/oauth/jwks",
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
        "revocation_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
        "client_id_metadata_document_supported": True,
        "authorization_response_iss_parameter_supported": True,
    }
    if server.scopes_supported:
        document["scopes_supported"] = list(server.scopes_supported)
    return document
