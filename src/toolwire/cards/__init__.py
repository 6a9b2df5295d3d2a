"""Server cards (SEP-2127): a public document saying who an MCP server is and how to connect
to it, read before connecting.

Implemented from SEP-2127 as of the ``sep/mcp-server-cards`` branch of the specification
repository on 2026-08-21 (commit 7201873), whose wire format is that of the
``experimental-ext-server-card`` repository on 2026-07-24 (commit 8924e08: ``schema.ts``
and ``docs/discovery.md``). A card has the server's identity (``name`` in reverse-DNS form,
``version``, ``description``, ``title``, ``websiteUrl``, ``repository``, ``icons``) and its
remotes (transport, URL, headers, URL variables, protocol versions); by design it lists no
tools, capabilities or extensions, which stay with the live connection.

- Serving: ``server.add_extension(ServerCards(...))`` (:mod:`.publish`); over HTTP the card is
  at ``<endpoint>/server-card`` (``/mcp/server-card``), the location the SEP reserves, as
  ``application/mcp-server-card+json`` with CORS, ``Cache-Control`` and an ``ETag``.
- Reading: :func:`parse_card` (:mod:`.document`) checks a document and gives a typed
  :class:`ServerCard`; :func:`toolwire.client.cards.fetch_card` fetches one.
"""

from .document import (
    CARD_MEDIA_TYPE,
    CARD_SCHEMA,
    CardInvalid,
    Header,
    Input,
    Remote,
    Repository,
    ServerCard,
    parse_card,
)
from .publish import CARD_PATH, SERVER_CARD_EXTENSION, ServerCards, card_url

__all__ = [
    "CARD_MEDIA_TYPE",
    "CARD_PATH",
    "CARD_SCHEMA",
    "SERVER_CARD_EXTENSION",
    "CardInvalid",
    "Header",
    "Input",
    "Remote",
    "Repository",
    "ServerCard",
    "ServerCards",
    "card_url",
    "parse_card",
]
