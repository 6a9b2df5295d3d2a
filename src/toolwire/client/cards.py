"""Reading a server's card (SEP-2127) before connecting to it: :func:`fetch_card`."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

import httpx
import orjson

from ..cards.document import CARD_MEDIA_TYPE, ServerCard, parse_card
from ..cards.publish import CARD_PATH, card_url
from ..fetch import FetchFailed, fetch, shown
from .errors import ClientError

#: Larger documents are refused: a card is a few hundred bytes.
MAX_CARD_BYTES = 1024 * 1024
_ACCEPT = f"{CARD_MEDIA_TYPE}, application/json;q=0.9"
_NOT_HERE = (400, 404, 405, 406)  # what an MCP endpoint answers a GET that is not for a card


class CardUnavailable(ClientError):
    """No card could be read at the URL: unreachable, an HTTP error, not JSON, too large."""


async def fetch_card(url: str, *, timeout: float = 10.0, headers: Mapping[str, str] | None = None) -> ServerCard:
    """The server card at ``url`` (``GET`` asking for ``application/mcp-server-card+json``),
    checked: :class:`~toolwire.cards.CardInvalid` (a ``ValueError``) naming each problem of a
    document that is not a valid card, :class:`CardUnavailable` when none could be read.

    A ``url`` that gives no card (404, 405, 406, 400, or something other than JSON) and does
    not end in ``/server-card`` is taken for the server's MCP endpoint: the card is then
    looked for at ``url/server-card``, where SEP-2127 reserves its place. Everything is read
    within ``timeout`` seconds in all, a card of at most :data:`MAX_CARD_BYTES`; redirects
    are followed, and ``headers`` (an API key, say) go only to the origin of ``url``
    (:func:`toolwire.fetch.fetch`). A card is advisory: what the connected server says wins
    over it."""
    if not url.startswith(("http://", "https://")):
        raise CardUnavailable(f"a server card is fetched from an http(s) URL, not {shown(url)}")
    sent = {"Accept": _ACCEPT, **(headers or {})}
    try:
        async with asyncio.timeout(timeout):
            try:
                return await _read(url, sent, timeout)
            except _NoCard as first:
                if httpx.URL(url).path.rstrip("/").endswith("/" + CARD_PATH):
                    raise CardUnavailable(str(first)) from None
                try:
                    return await _read(card_url(url), sent, timeout)
                except _NoCard as second:
                    raise CardUnavailable(f"{first}, nor at {shown(card_url(url))}: {second.reason}") from None
    except TimeoutError:
        raise CardUnavailable(f"no server card could be read from {shown(url)} within {timeout:g} s") from None


class _NoCard(Exception):
    """What a URL gave was not a card (maybe it is an MCP endpoint)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"no server card at {shown(url)}: {reason}")
        self.reason = reason


async def _read(url: str, headers: dict[str, str], timeout: float) -> ServerCard:
    try:
        response = await fetch(url, headers=headers, timeout=timeout, max_bytes=MAX_CARD_BYTES)
    except FetchFailed as exc:
        raise CardUnavailable(f"cannot read the server card at {shown(url)}: {exc}") from None
    if response.status in _NOT_HERE:
        raise _NoCard(url, f"HTTP {response.status}")
    if response.status != 200:
        raise CardUnavailable(f"cannot read the server card at {shown(url)}: HTTP {response.status}")
    kind = response.media_type
    if kind != "application/json" and not kind.endswith("+json"):
        raise _NoCard(url, f"it is {shown(kind, 80) or 'of no content type'}, not JSON")
    try:
        document = response.json()
    except orjson.JSONDecodeError as exc:
        raise CardUnavailable(f"the server card at {shown(url)} is not valid JSON ({exc})") from None
    return parse_card(document, f"the server card at {shown(url)}")


__all__ = ["CardUnavailable", "fetch_card"]
