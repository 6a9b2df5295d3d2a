"""toolwire as the authorization server MCP clients talk to, in front of the identity
provider people already have (:class:`~..upstream.Upstream`).

:mod:`.server` (settings and routing), :mod:`.metadata` (RFC 8414), :mod:`.registration`
(Dynamic Client Registration and Client ID Metadata Documents, redirect URIs),
:mod:`.authorize` (the authorization endpoint, consent and the provider's callback),
:mod:`.consent` (the pages), :mod:`.token` (codes and refresh-token rotation),
:mod:`.revocation` (RFC 7009), :mod:`.tokens` (the server's own tokens), :mod:`.state` (where
everything is kept: SQLite or Redis) and :mod:`.web` (the HTTP plumbing they share).
"""

from .server import AuthorizationServer

__all__ = ["AuthorizationServer"]
