"""The public documents that extensions serve beside the MCP endpoint
(:class:`~toolwire.server.extensions.Document`: the server card of SEP-2127, say).

Each is read-only and public: no token is asked for it (even with ``auth=``), any origin may
read it (``Access-Control-Allow-Origin: *``, its ``ETag`` exposed), and its ``Host`` is
checked as the endpoint's is (DNS rebinding, 403). ``GET`` and ``HEAD`` get it with its media
type, ``Cache-Control: public, max-age=…`` and a strong ``ETag`` (a digest of the body);
``If-None-Match`` naming that tag gets 304 without the body; ``OPTIONS`` answers a CORS
preflight (204); any other method is 405. A document that fails to render is logged and
answered 500 (the details stay in the log).
"""

from __future__ import annotations

import base64
import hashlib
from typing import TYPE_CHECKING

import orjson

from ...logs import get_logger
from ...protocol.errors import INTERNAL_ERROR, INVALID_REQUEST
from ...protocol.versions import SUPPORTED_VERSIONS
from ...server.extensions import Document, Endpoint
from .asgi import HttpError, Scope, Send, headers
from .channel import respond

if TYPE_CHECKING:
    from ...auth.server.resource import ProtectedResource
    from ...server.server import Server
    from .checks import Checks

log = get_logger("toolwire.http")

_CORS = [
    (b"access-control-allow-origin", b"*"),
    (b"access-control-expose-headers", b"ETag"),
]
_PREFLIGHT = [
    (b"access-control-allow-origin", b"*"),
    (b"access-control-allow-methods", b"GET"),
    (b"access-control-allow-headers", b"Content-Type, If-None-Match"),
    (b"access-control-max-age", b"86400"),
]
_ALLOW = [(b"allow", b"GET, HEAD, OPTIONS")]


class Documents:
    """The documents of ``server``'s extensions, for the endpoint at ``path`` (with ``auth``)."""

    def __init__(self, server: Server, path: str, auth: ProtectedResource | None) -> None:
        self.server = server
        self.path = path
        self.auth = auth
        self._by_path: dict[str, Document] = {}
        self._extensions = -1  # how many extensions _by_path was made from (they are only added)

    def find(self, path: str) -> Document | None:
        """The document served at ``path``, or ``None``."""
        extensions = self.server.extensions
        if len(extensions) != self._extensions:
            self._by_path = {
                document.served_at(self.path): document
                for extension in extensions.values()
                for document in extension.documents()
            }
            self._extensions = len(extensions)
        return self._by_path.get(path)

    async def serve(self, document: Document, scope: Scope, send: Send, checks: Checks) -> None:
        """Answer one request for ``document`` (see the module's documentation)."""
        asked = headers(scope)
        checks.check_origin({"host": asked.get("host", "")})
        method = scope.get("method")
        if method == "OPTIONS":
            await respond(send, 204, headers=_PREFLIGHT + _ALLOW)
            return
        if method not in ("GET", "HEAD"):
            raise HttpError(
                405, INVALID_REQUEST, f"Method not allowed: {method} (this document is read with GET)", headers=_ALLOW
            )
        try:
            body = orjson.dumps(document.render(self._endpoint(scope, asked.get("host", ""))))
        except Exception as exc:
            log.error("the document at %s failed to render", document.served_at(self.path), exc_info=exc)
            raise HttpError(
                500, INTERNAL_ERROR, "Internal error: the document failed to render (the server's log says why)"
            ) from None
        tag = b'"' + base64.urlsafe_b64encode(hashlib.sha256(body).digest()[:18]) + b'"'
        common = [(b"etag", tag), (b"cache-control", f"public, max-age={document.max_age}".encode()), *_CORS]
        if _matches(asked.get("if-none-match"), tag.decode()):
            await respond(send, 304, headers=common)
            return
        described = [(b"content-type", document.media_type.encode()), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": described + common})
        await send({"type": "http.response.body", "body": body if method == "GET" else b""})

    def _endpoint(self, scope: Scope, host: str) -> Endpoint:
        if self.auth is not None:
            url = self.auth.resource
        else:
            url = f"{scope.get('scheme', 'http')}://{host}{scope.get('root_path', '')}{self.path}"
        return Endpoint(url, SUPPORTED_VERSIONS, self.auth)


def _matches(if_none_match: str | None, tag: str) -> bool:
    """Whether an ``If-None-Match`` value names ``tag`` (weakly, as RFC 9110 compares it) or is ``*``."""
    if not if_none_match:
        return False
    for item in if_none_match.split(","):
        item = item.strip()
        if item == "*" or item.removeprefix("W/") == tag:
            return True
    return False
