"""Requests to one URL sent straight to the connection pool, without httpx's client layer
(which costs several times what the rest of a request does), for as long as that layer would
add nothing to them."""

from __future__ import annotations

import httpx

from .http11 import Http11Transport
from .http11_connection import Origin
from .http_reply import DECODABLE, Reply

#: Statuses httpx follows as redirects (when the answer names a ``Location``).
REDIRECTS = frozenset({301, 302, 303, 307, 308})


class DirectRoute:
    """Requests to one URL sent straight through ``transport``'s pool, as ``client`` (an
    ``httpx.AsyncClient`` on that transport) would send them: its default headers, its
    timeouts, ``Host`` and ``Content-Length``.

    It holds only while httpx's client layer would add nothing: no auth, no cookies (a
    ``Set-Cookie`` answer is put in the client's jar, after which :attr:`usable` is false), no
    redirect (:meth:`send` returns ``None`` for a redirect, which the caller sends again
    through ``client``, which follows it; :attr:`usable` is false from then on), and an
    ``Accept-Encoding`` of gzip or deflate only. :meth:`send` raises the httpx exceptions the
    pool raises.
    """

    def __init__(self, client: httpx.AsyncClient, transport: Http11Transport, url: str) -> None:
        self.client = client
        self.pool = transport.pool
        parsed = httpx.URL(url)
        self._url = url
        self._origin: Origin = (parsed.scheme, parsed.host, parsed.port or (443 if parsed.scheme == "https" else 80))
        self._target = parsed.raw_path
        self._host = parsed.netloc.decode("ascii")
        self._fixed: dict[tuple[str, ...], bytes] = {}
        self._timeouts = client.timeout.as_dict()
        self._defaults = {name.lower(): (name, value) for name, value in client.headers.items()}
        self._redirected = False
        self._fits = parsed.scheme in ("http", "https") and not parsed.userinfo and client.auth is None

    @property
    def usable(self) -> bool:
        """Whether a request may take this route now."""
        return self._fits and not self._redirected and not self.client.cookies

    def allows(self, headers: dict[str, str]) -> bool:
        """Whether requests with these headers may take this route (their content codings
        are ones :class:`Reply` decodes)."""
        merged = {**self._defaults, **{name.lower(): (name, value) for name, value in headers.items()}}
        accepted = merged.get("accept-encoding", ("", ""))[1]
        codings = {coding.split(";")[0].strip().lower() for coding in accepted.split(",")}
        return codings <= DECODABLE | {""}

    async def send(self, method: str, headers: dict[str, str], content: bytes | None = None) -> Reply | None:
        """The answer, its head read; ``None`` when it is a redirect (dropped). A header
        holding a line break raises ``httpx.LocalProtocolError``, one that is not ASCII
        ``UnicodeEncodeError`` (as httpx does)."""
        fixed = self._fixed.get(tuple(headers))
        if fixed is None:
            fixed = self._fixed_headers(headers)
        text = "".join([f"{name}: {value}\r\n" for name, value in headers.items()])
        if text.count("\n") != len(headers) or text.count("\r") != len(headers):
            raise httpx.LocalProtocolError("a header holds a line break")
        length = b"" if content is None else b"Content-Length: %d\r\n" % len(content)
        head = b"%s %s HTTP/1.1\r\n%s%s%s\r\n" % (method.encode(), self._target, fixed, text.encode("ascii"), length)
        response = await self.pool.send(self._origin, head, content or b"", False, self._timeouts)
        if any(name.lower() == b"set-cookie" for name, _ in response.headers):
            self.client.cookies.extract_cookies(
                httpx.Response(response.status, headers=response.headers, request=httpx.Request(method, self._url))
            )
        reply = Reply(response)
        if response.status in REDIRECTS and "location" in reply.headers:
            self._redirected = True
            await reply.aclose()
            return None
        return reply

    def _fixed_headers(self, headers: dict[str, str]) -> bytes:
        """``Host`` and the client's default headers that ``headers`` leave, encoded (and kept
        for the next request with the same header names)."""
        names = {name.lower() for name in headers}
        lines = [b"Host: %s\r\n" % self._host.encode()]
        lines += [f"{name}: {value}\r\n".encode() for low, (name, value) in self._defaults.items() if low not in names]
        if len(self._fixed) > 64:
            self._fixed.clear()
        fixed = self._fixed[tuple(headers)] = b"".join(lines)
        return fixed
