"""Authorization: an HTTP server as an OAuth 2.1 protected resource, and who is calling.

See docs/authorization.md. Server side: :class:`ProtectedResource` (metadata, token checks,
challenges) with a :class:`JWTVerifier`, an :class:`IntrospectionVerifier` or a verifier of
your own; tools read the caller's :class:`Identity` from ``ctx.identity``. Client side:
:class:`OAuth` (``Client(url, auth=OAuth())``) with a token store. Importing this
package costs nothing until one of these is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .identity import Identity

if TYPE_CHECKING:
    from .oauth import AuthorizationError, OAuth
    from .resource import AuthError, ProtectedResource
    from .tokenstore import FileTokenStore, KeyringTokenStore, MemoryTokenStore
    from .verifiers import IntrospectionVerifier, InvalidToken, JWTVerifier, TokenVerifier

_LAZY = {
    "AuthorizationError": ".oauth",
    "FileTokenStore": ".tokenstore",
    "KeyringTokenStore": ".tokenstore",
    "MemoryTokenStore": ".tokenstore",
    "OAuth": ".oauth",
    "AuthError": ".resource",
    "ProtectedResource": ".resource",
    "IntrospectionVerifier": ".verifiers",
    "InvalidToken": ".verifiers",
    "JWTVerifier": ".verifiers",
    "TokenVerifier": ".verifiers",
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
