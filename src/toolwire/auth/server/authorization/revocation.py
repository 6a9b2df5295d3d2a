"""Token revocation (RFC 7009): a client revokes one of its refresh or access tokens, and
with it every token of the same sign-in (the family), and the provider's tokens kept for the
person when it was their last sign-in (:mod:`.signins`). The answer is 200 whatever the token
was (unknown, expired, someone else's: nothing is revoked then), as the RFC asks, so the
endpoint tells nobody which tokens exist."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..verifiers import InvalidToken
from .token import authenticate_client
from .tokens import digest
from .web import NO_STORE, Request, Response

if TYPE_CHECKING:
    from .server import AuthorizationServer


async def revoke(server: AuthorizationServer, request: Request) -> Response:
    """``POST /oauth/revoke``: see the module."""
    client_id = await authenticate_client(server, request)
    token = request.form.get("token", "")
    grant = await server.state.get("refresh", digest(token)) if token else None
    family, subject = (
        (grant["family"], grant["subject"]) if grant is not None and grant["client_id"] == client_id else (None, "")
    )
    if family is None and token.count(".") == 2:
        try:
            identity = await server.tokens.verify(token)
        except InvalidToken:
            identity = None
        if identity is not None and identity.client_id == client_id:
            family, subject = identity.claims.get("fam"), identity.subject
    if family is not None:
        await server.revoke(family, subject)
        if grant is not None:
            await server.state.delete("refresh", digest(token))
    return Response(200, b"", NO_STORE)
