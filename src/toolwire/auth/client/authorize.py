"""How the user authorizes: an ``authorize(url)`` is awaited with the authorization URL and
returns the URL the authorization server redirected to (with ``code`` and ``state``).
:func:`browser_authorize` is for people, :func:`follow_redirect` for servers that redirect
at once."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

import httpx

from ...fetch import FetchFailed, fetch
from .errors import AuthorizationError

Authorize = Callable[[str], Awaitable[str]]


def browser_authorize(redirect_uri: str, timeout: float = 300.0) -> Authorize:
    """Authorization for people: open ``url`` in the system browser (and print it, for when
    none opens) and wait, on the loopback address of ``redirect_uri``, for the redirect.
    :class:`AuthorizationError` when that address cannot be listened on, or nothing arrives
    within ``timeout`` seconds."""

    async def authorize(url: str) -> str:
        import sys
        import webbrowser

        parts = urlsplit(redirect_uri)
        if parts.hostname not in ("127.0.0.1", "localhost", "::1") or parts.port is None:
            raise AuthorizationError(
                f"cannot wait for {redirect_uri}: give authorize= for a redirect that is not local"
            )
        arrived: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            with contextlib.suppress(Exception):
                line = (await reader.readline()).decode("latin-1").split()
                path = line[1] if len(line) > 1 else "/"
                done = urlsplit(path).path == (parts.path or "/") and not arrived.done()
                page = b"<p>Authorized. You can close this window.</p>" if done else b"<p>Not found.</p>"
                status = b"200 OK" if done else b"404 Not Found"
                head = b"HTTP/1.1 %s\r\ncontent-type: text/html\r\ncontent-length: %d\r\n\r\n" % (status, len(page))
                writer.write(head + page)
                await writer.drain()
                if done:
                    arrived.set_result(f"{parts.scheme}://{parts.netloc}{path}")
            writer.close()

        try:
            server = await asyncio.start_server(answer, parts.hostname, parts.port)
        except OSError as exc:
            raise AuthorizationError(
                f"cannot wait for the browser's redirect on {parts.hostname}:{parts.port} "
                f"({exc.strerror or exc}): end what uses that port, or give OAuth another redirect_uri"
            ) from None
        try:
            sys.stderr.write(f"toolwire: authorize in your browser; if none opens, visit:\n  {url}\n")
            # In a thread, not waited for: a browser command may only return once it is done.
            opening = asyncio.get_running_loop().run_in_executor(None, webbrowser.open, url)
            opening.add_done_callback(lambda done: done.exception())
            return await asyncio.wait_for(arrived, timeout)
        except TimeoutError:
            raise AuthorizationError(f"no authorization arrived within {timeout:g} s") from None
        finally:
            server.close()

    return authorize


async def follow_redirect(url: str) -> str:
    """An ``authorize`` for authorization servers that redirect at once, without a person
    (test servers, pre-approved clients): where the authorization URL redirects to."""
    try:
        response = await fetch(url, timeout=30.0, follow_redirects=False)
    except FetchFailed as exc:
        raise AuthorizationError(f"the authorization endpoint did not answer: {exc}") from None
    location = response.headers.get("location")
    if response.status not in (301, 302, 303, 307, 308) or location is None:
        raise AuthorizationError(f"the authorization endpoint answered HTTP {response.status}, not a redirect")
    return str(httpx.URL(url).join(location))
