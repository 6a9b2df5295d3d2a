"""Every request toolwire makes of its own to another server (a server card, an authorization
server's metadata, its signing keys, token introspection, OAuth token and registration
endpoints): :func:`fetch`, with the bounds the client keeps with MCP servers.

- One deadline for the whole exchange (connecting, each redirect, every byte of the body): a
  body trickled a byte at a time ends at the deadline, not at the next quiet spell.
- A cap on the body, checked as it arrives (and on a declared ``Content-Length`` first).
- Redirects (when followed: at most :data:`MAX_REDIRECTS`) only to http(s), never from https
  to http; one that leaves the origin asked keeps none of the caller's headers but
  ``Accept``, so credentials (``Authorization``, ``X-Api-Key``, any other) stay with the
  origin they were given for. ``303`` (and ``301``/``302`` after a ``POST``) fetch with ``GET``.
- What a server said that goes into a message (its content type, a redirect's target) is
  escaped to printable ASCII: it cannot carry terminal controls to whoever reads the message.

:class:`FetchFailed` says what went wrong (a :class:`~toolwire.errors.ToolwireError`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import orjson

from .errors import ToolwireError

#: Redirects followed at most.
MAX_REDIRECTS = 5
#: The body's default cap: the documents fetched are a few kilobytes.
MAX_BYTES = 1024 * 1024
_REDIRECTS = (301, 302, 303, 307, 308)
_KEPT_ACROSS_ORIGINS = frozenset({"accept"})


class FetchFailed(ToolwireError):
    """A fetch that gave no answer: unreachable, too slow, too large, a refused redirect."""


@dataclass(frozen=True)
class Fetched:
    """An answer: its ``status``, ``headers``, whole ``body`` and the ``url`` it came from."""

    status: int
    headers: httpx.Headers
    body: bytes
    url: str

    def json(self) -> Any:
        """The body as JSON; ``ValueError`` if it is not."""
        return orjson.loads(self.body)

    @property
    def media_type(self) -> str:
        """The ``Content-Type`` without parameters, in lower case (``""`` without one)."""
        kind: str = self.headers.get("content-type", "")
        return kind.split(";")[0].strip().lower()


def shown(text: str, most: int = 200) -> str:
    """What a server sent, for a message: printable ASCII (``\\x9b`` for a control), cut to ``most``."""
    escaped = ascii(text)[1:-1]
    return escaped if len(escaped) <= most else escaped[:most] + "..."


async def fetch(
    url: str,
    *,
    method: str = "GET",
    headers: Mapping[str, str] | None = None,
    data: Mapping[str, str] | None = None,
    json: Any = None,
    timeout: float = 10.0,
    max_bytes: int = MAX_BYTES,
    follow_redirects: bool = True,
) -> Fetched:
    """``method`` ``url`` with ``headers`` and a form (``data``) or JSON body, within the
    bounds of the module; the answer whatever its status. :class:`FetchFailed` when there is
    none in time, it is larger than ``max_bytes``, or a redirect is refused."""
    if not url.startswith(("http://", "https://")):
        raise FetchFailed(f"{shown(url)} is not an http(s) URL")
    try:
        async with asyncio.timeout(timeout), httpx.AsyncClient(timeout=timeout) as http:
            return await _follow(http, url, method, dict(headers or {}), data, json, max_bytes, follow_redirects)
    except TimeoutError:
        raise FetchFailed(f"{shown(url)} did not answer in full within {timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise FetchFailed(f"cannot reach {shown(url)}: {type(exc).__name__}") from None


async def _follow(
    http: httpx.AsyncClient,
    url: str,
    method: str,
    headers: dict[str, str],
    data: Mapping[str, str] | None,
    json: Any,
    max_bytes: int,
    follow_redirects: bool,
) -> Fetched:
    origin = origin_of(httpx.URL(url))
    for _ in range(MAX_REDIRECTS + 1):
        request = http.build_request(method, url, headers=headers, data=data, json=json)
        response = await http.send(request, stream=True)
        try:
            location = response.headers.get("location")
            if not follow_redirects or response.status_code not in _REDIRECTS or location is None:
                return Fetched(response.status_code, response.headers, await read_body(response, max_bytes), url)
        finally:
            await response.aclose()
        target = response.url.join(location)
        if target.scheme not in ("http", "https") or (response.url.scheme == "https" and target.scheme == "http"):
            raise FetchFailed(f"{shown(url)} redirected to {shown(str(target))}: not followed")
        if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
            method, data, json = "GET", None, None
        if origin_of(target) != origin:  # the caller's credentials stay with their origin
            headers = {name: value for name, value in headers.items() if name.lower() in _KEPT_ACROSS_ORIGINS}
            origin = origin_of(target)
        url = str(target)
    raise FetchFailed(f"{shown(url)} redirected more than {MAX_REDIRECTS} times")


async def read_body(response: httpx.Response, max_bytes: int) -> bytes:
    """The whole body; :class:`FetchFailed` past ``max_bytes`` (declared or arriving)."""
    declared = response.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > max_bytes:
        raise FetchFailed(f"{shown(str(response.url))} answered more than {max_bytes} bytes")
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > max_bytes:
            raise FetchFailed(f"{shown(str(response.url))} answered more than {max_bytes} bytes")
    return bytes(body)


def origin_of(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port
