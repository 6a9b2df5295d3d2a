"""Authorization: an HTTP server as an OAuth 2.1 protected resource, and who is calling.

See docs/authorization.md. Server side (:mod:`.server`): :class:`ProtectedResource`
(metadata, token checks, challenges) with a :class:`JWTVerifier`, an
:class:`IntrospectionVerifier` or a verifier of your own; tools read the caller's
:class:`Identity` from ``ctx.identity``. Client side (:mod:`.client`, which imports nothing of
the server side): :class:`OAuth` (``Client(url, auth=OAuth())``) with a token store. Shared:
:mod:`.identity` and :mod:`.metadata`. Importing this package costs nothing until one of
these is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .identity import Identity

if TYPE_CHECKING:
    from .client.errors import AuthorizationError
    from .client.oauth import OAuth
    from .client.tokenstore import FileTokenStore, KeyringTokenStore, MemoryTokenStore
    from .server.resource import AuthError, ProtectedResource
    from .server.verifiers import IntrospectionVerifier, InvalidToken, JWTVerifier, TokenVerifier

_LAZY = {
    "AuthorizationError": ".client.errors",
    "FileTokenStore": ".client.tokenstore",
    "KeyringTokenStore": ".client.tokenstore",
    "MemoryTokenStore": ".client.tokenstore",
    "OAuth": ".client.oauth",
    "AuthError": ".server.resource",
    "ProtectedResource": ".server.resource",
    "IntrospectionVerifier": ".server.verifiers",
    "InvalidToken": ".server.verifiers",
    "JWTVerifier": ".server.verifiers",
    "TokenVerifier": ".server.verifiers",
}

__all__ = [
    "AuthError",
    "AuthorizationError",
    "FileTokenStore",
    "Identity",
    "IntrospectionVerifier",
    "InvalidToken",
    "JWTVerifier",
    "KeyringTokenStore",
    "MemoryTokenStore",
    "OAuth",
    "ProtectedResource",
    "TokenVerifier",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
