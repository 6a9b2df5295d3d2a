"""The HTTP plumbing the authorization server's endpoints share: a parsed request, a
response (JSON, HTML, a redirect), OAuth error answers (RFC 6749 section 5.2), and the
browser cookie that binds a sign-in to the browser that started it."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson

from ....errors import ToolwireError

#: Cross-origin reads of the public endpoints (clients in browsers call them; no cookies are sent).
CORS = [(b"access-control-allow-origin", b"*")]
NO_STORE = [(b"cache-control", b"no-store"), (b"pragma", b"no-cache")]


class OAuthError(ToolwireError):
    """An OAuth error answered as JSON: ``error`` code, its description, the status and any
    more ``headers`` (``Retry-After``)."""

    def __init__(
        self, error: str, description: str, status: int = 400, headers: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        super().__init__(description)
        self.error = error
        self.status = status
        self.headers = headers or []

    def response(self) -> Response:
        headers = [*NO_STORE, *CORS, *self.headers]
        if self.status == 401:
            headers.append((b"www-authenticate", b'Basic realm="token"'))
        return json_response({"error": self.error, "error_description": str(self)}, self.status, headers)


@dataclass
class Request:
    """One request: ``method``, ``query`` and ``form`` (the first value of each name),
    ``headers`` (lower-case names), ``cookies``, the raw ``body`` and the ``client``'s
    address (behind trusted proxies, the one they name)."""

    method: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes = b""
    form: dict[str, str] = field(default_factory=dict)
    cookies: dict[str, str] = field(default_factory=dict)
    client: str = ""

    @classmethod
    def of(cls, scope: dict[str, Any], headers: dict[str, str], body: bytes, client: str = "") -> Request:
        query = _first(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        form: dict[str, str] = {}
        if headers.get("content-type", "").split(";")[0].strip().lower() == "application/x-www-form-urlencoded":
            form = _first(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
        cookies: dict[str, str] = {}
        for item in headers.get("cookie", "").split(";"):
            name, _, value = item.strip().partition("=")
            if name:
                cookies.setdefault(name, value)
        return cls(scope.get("method", "GET"), query, headers, body, form, cookies, client)

    def basic_credentials(self) -> tuple[str, str] | None:
        """The ``Authorization: Basic`` client ID and secret (form-decoded, as RFC 6749 says)."""
        scheme, _, value = self.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "basic":
            return None
        try:
            user, _, secret = base64.b64decode(value.strip(), validate=True).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            raise OAuthError("invalid_client", "the Authorization header is not valid Basic credentials", 401) from None
        from urllib.parse import unquote_plus

        return unquote_plus(user), unquote_plus(secret)


def _first(pairs: list[tuple[str, str]]) -> dict[str, str]:
    values: dict[str, str] = {}
    for name, value in pairs:
        values.setdefault(name, value)
    return values


@dataclass
class Response:
    status: int
    body: bytes = b""
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)


def json_response(document: Any, status: int = 200, headers: list[tuple[bytes, bytes]] | None = None) -> Response:
    return Response(status, orjson.dumps(document), [(b"content-type", b"application/json"), *(headers or [])])


#: Pages are never framed (clickjacking), never cached, and run no script.
PAGE_HEADERS = [
    (b"content-type", b"text/html; charset=utf-8"),
    (b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    *NO_STORE,
]


def page(status: int, html: str, headers: list[tuple[bytes, bytes]] | None = None) -> Response:
    return Response(status, html.encode(), [*PAGE_HEADERS, *(headers or [])])


def redirect(url: str, headers: list[tuple[bytes, bytes]] | None = None) -> Response:
    return Response(302, b"", [(b"location", url.encode()), *NO_STORE, *(headers or [])])


def with_query(url: str, parameters: dict[str, str]) -> str:
    """``url`` with ``parameters`` added to its query (those it has are kept)."""
    parts = urlsplit(url)
    query = "&".join(part for part in (parts.query, urlencode(parameters)) if part)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def browser_cookie_name(secure: bool) -> str:
    """The cookie that names the browser (``__Host-`` prefixed when served over https)."""
    return "__Host-toolwire-browser" if secure else "toolwire-browser"


def set_cookie(name: str, value: str, secure: bool, max_age: int) -> tuple[bytes, bytes]:
    attributes = f"{name}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}"
    return (b"set-cookie", (attributes + ("; Secure" if secure else "")).encode())
