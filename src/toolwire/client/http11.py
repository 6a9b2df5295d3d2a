"""A lean HTTP/1.1 client on httptools, and the ``httpx`` transport made of it.

httpx's client layer (auth flows, redirects, cookies, timeouts' configuration) is kept as the
API; what sits under it is the part that costs: httpcore's pool and h11 take several hundred
microseconds of CPU per request and grow with the connections open. Here a request is:

* a connection taken from the pool's idle list for its origin (or a new one, TLS through
  asyncio's ``ssl``), at most ``max_connections`` open at once, idle ones closed after
  ``keepalive_expiry`` seconds (checked when taken);
* its head and a body given as bytes written in one ``write``; a streamed body written as it
  comes, chunked when the request says so;
* the answer parsed by httptools as it arrives, in the connection's protocol callbacks: the
  response is handed over when its head is complete and its body is read incrementally (SSE
  streams) from the chunks the parser has delivered. A connection goes back to the pool as
  soon as the whole answer has arrived, before it is read; one closed early (a response
  closed before its end, a cancelled request, an error) is closed.

A request sent on a kept-alive connection that the server closes before answering a byte
(it timed out the idle connection as the request left) is sent again once on a new
connection, when its body can be sent again. Errors surface as the httpx exceptions its own
transport raises: ``ConnectError``/``ConnectTimeout``, ``ReadError``/``ReadTimeout``,
``WriteError``/``WriteTimeout``, ``RemoteProtocolError``, ``LocalProtocolError``,
``PoolTimeout``; and :class:`~.http11_connection.Refused` for an answer that sends more than
:data:`~.http11_connection.MAX_HEAD_BYTES` without a byte of body (a head, trailers), its connection closed.
``HEAD`` requests and schemes other than http(s) go to httpx's own transport.

Here: the pool and the transport. A connection and its answer are in
:mod:`.http11_connection`; what the MCP transport reads an answer as, in :mod:`.http_reply`;
requests sent to the pool without httpx's client layer, in :mod:`.direct_route`.
"""

from __future__ import annotations

import asyncio
import collections
import ssl
import time
from collections.abc import AsyncIterable
from typing import Any

import httpx

from .http11_connection import Connection, Origin, Response, Stale, timeout_of


def _ssl_context(verify: str | bool) -> ssl.SSLContext:
    """httpx's TLS settings (certifi's CAs, or ``SSL_CERT_FILE``/``SSL_CERT_DIR``), offering HTTP/1.1."""
    context = httpx.create_ssl_context(verify=verify)
    context.set_alpn_protocols(["http/1.1"])
    return context


class ConnectionPool:
    """Keep-alive HTTP/1.1 connections by origin, at most ``max_connections`` open.

    ``ssl_context`` is used for https origins (made on first use with
    ``httpx.create_ssl_context()`` when not given). :meth:`request` raises the httpx
    exceptions named in the module's docstring.
    """

    def __init__(
        self, ssl_context: ssl.SSLContext | None = None, max_connections: int = 100, keepalive_expiry: float = 5.0
    ) -> None:
        self.ssl_context = ssl_context
        self.max_connections = max_connections
        self.keepalive_expiry = keepalive_expiry
        self._idle: dict[Origin, list[Connection]] = {}
        self._open: set[Connection] = set()
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    async def request(
        self,
        method: bytes,
        origin: Origin,
        target: bytes,
        headers: list[tuple[bytes, bytes]],
        body: bytes | AsyncIterable[bytes] = b"",
        timeouts: dict[str, Any] | None = None,
    ) -> Response:
        """Send a request to ``origin`` (scheme, host, port) and return its answer once the
        head has arrived. ``headers`` must include ``Host`` and what frames the body."""
        lines = [b"%s: %s\r\n" % header for header in headers]
        block = b"".join(lines)
        if block.count(b"\n") != len(lines) or block.count(b"\r") != len(lines) or b" " in target:
            raise httpx.LocalProtocolError("a header or the target holds a line break or a space")
        head = b"%s %s HTTP/1.1\r\n%s\r\n" % (method, target, block)
        chunked = any(n.lower() == b"transfer-encoding" and b"chunked" in v.lower() for n, v in headers)
        return await self.send(origin, head, body, chunked, timeouts or {})

    async def send(
        self, origin: Origin, head: bytes, body: bytes | AsyncIterable[bytes], chunked: bool, timeouts: dict[str, Any]
    ) -> Response:
        """:meth:`request` with its head already made (and checked)."""
        connection = await self._acquire(origin, timeouts)
        try:
            return await connection.exchange(head, body, chunked, timeouts)
        except Stale:
            if not isinstance(body, bytes):
                raise httpx.RemoteProtocolError("the server closed the connection without answering") from None
        connection = await self._connect(origin, timeouts)
        try:
            return await connection.exchange(head, body, chunked, timeouts)
        except Stale:
            raise httpx.RemoteProtocolError("the server closed the connection without answering") from None

    async def aclose(self) -> None:
        """Close every connection."""
        for connection in list(self._open):
            connection.close()
        self._idle.clear()

    async def _acquire(self, origin: Origin, timeouts: dict[str, Any]) -> Connection:
        """An idle connection to ``origin``, else a new one once there is room for it
        (``PoolTimeout`` if there is none within the pool timeout)."""
        connection = self._take_idle(origin)
        if connection is not None:
            return connection
        if len(self._open) >= self.max_connections:
            try:
                async with asyncio.timeout(timeout_of(timeouts, "pool")):
                    while len(self._open) >= self.max_connections:
                        others = [connections for connections in self._idle.values() if connections]
                        if others:
                            others[0].pop(0).close()  # the oldest idle connection of another origin
                            break
                        waiter = asyncio.get_running_loop().create_future()
                        self._waiters.append(waiter)
                        try:
                            await waiter
                        except BaseException:
                            if waiter in self._waiters:
                                self._waiters.remove(waiter)
                            elif waiter.done() and not waiter.cancelled():
                                self._wake()  # woken, then cancelled: the room goes to the next
                            raise
                        connection = self._take_idle(origin)
                        if connection is not None:
                            return connection
            except TimeoutError:
                raise httpx.PoolTimeout("timed out waiting for a connection") from None
        return await self._connect(origin, timeouts)

    def _take_idle(self, origin: Origin) -> Connection | None:
        """The idle connection to ``origin`` used last, if one is still open and fresh."""
        idle = self._idle.get(origin)
        expired = time.monotonic() - self.keepalive_expiry if idle else 0.0
        while idle:
            connection = idle.pop()
            transport = connection.transport
            if connection.closed or transport is None or transport.is_closing() or connection.idle_since < expired:
                connection.close()
            else:
                return connection
        return None

    async def _connect(self, origin: Origin, timeouts: dict[str, Any]) -> Connection:
        scheme, host, port = origin
        loop = asyncio.get_running_loop()
        connection = Connection(self, origin, loop)
        self._open.add(connection)
        context: ssl.SSLContext | None = None
        if scheme == "https":
            if self.ssl_context is None:
                self.ssl_context = _ssl_context(True)
            context = self.ssl_context
        try:
            async with asyncio.timeout(timeout_of(timeouts, "connect")):
                await loop.create_connection(
                    lambda: connection, host, port, ssl=context, server_hostname=host if context else None
                )
        except TimeoutError:
            self.discard(connection)
            raise httpx.ConnectTimeout(f"timed out connecting to {host}:{port}") from None
        except OSError as exc:
            self.discard(connection)
            raise httpx.ConnectError(str(exc) or type(exc).__name__) from exc
        except BaseException:
            connection.close()
            raise
        return connection

    def release(self, connection: Connection) -> None:
        """Take back ``connection``, its answer arrived whole, as idle (its connection calls this)."""
        connection.idle_since = time.monotonic()
        self._idle.setdefault(connection.origin, []).append(connection)
        if self._waiters:  # someone waits for room: an idle connection makes it
            self._wake()

    def discard(self, connection: Connection) -> None:
        """Forget ``connection``, closed (its connection calls this), making room for another."""
        if connection in self._open:
            self._open.discard(connection)
            idle = self._idle.get(connection.origin)
            if idle and connection in idle:
                idle.remove(connection)
            self._wake()

    def _wake(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return


class Http11Transport(httpx.AsyncBaseTransport):
    """An ``httpx.AsyncClient`` transport on :class:`ConnectionPool`.

    ``verify`` as httpx takes it (``True``, a CA bundle's path, an ``ssl.SSLContext``, or
    ``False``). ``HEAD`` requests and other schemes go to ``httpx.AsyncHTTPTransport``.
    Request timeouts come from the request (``connect``, ``read``, ``write``, ``pool``).
    """

    def __init__(
        self,
        verify: ssl.SSLContext | str | bool = True,
        *,
        max_connections: int = 100,
        keepalive_expiry: float = 5.0,
    ) -> None:
        self._verify = verify
        context = None
        if verify is not True:
            context = verify if isinstance(verify, ssl.SSLContext) else _ssl_context(verify)
        self.pool = ConnectionPool(context, max_connections, keepalive_expiry)
        self._fallback: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if request.method == "HEAD" or url.scheme not in ("http", "https"):
            if self._fallback is None:
                self._fallback = httpx.AsyncHTTPTransport(verify=self._verify)
            return await self._fallback.handle_async_request(request)
        port = url.port or (443 if url.scheme == "https" else 80)
        stream = request.stream
        body: bytes | AsyncIterable[bytes]
        if isinstance(stream, httpx.ByteStream):
            body = b"".join(stream)
        elif isinstance(stream, AsyncIterable):
            body = stream
        else:
            raise RuntimeError("the request's body cannot be read asynchronously")
        try:
            response = await self.pool.request(
                request.method.encode(),
                (url.scheme, url.host, port),
                url.raw_path,
                request.headers.raw,
                body,
                request.extensions.get("timeout", {}),
            )
        except httpx.TransportError as exc:
            exc.request = request
            raise
        return httpx.Response(
            response.status,
            headers=response.headers,
            stream=response,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": response.reason},
        )

    async def aclose(self) -> None:
        await self.pool.aclose()
        if self._fallback is not None:
            await self._fallback.aclose()
