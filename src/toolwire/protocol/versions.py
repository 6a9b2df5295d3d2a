"""The protocol versions toolwire speaks, and the two eras they fall into.

Legacy versions (2025-11-25 and earlier) open with an ``initialize`` handshake; modern
versions (2026-07-28) carry the version and client capabilities on every request's ``_meta``.
What each version changes on the wire is not decided here but in :mod:`.codec`.
"""

from __future__ import annotations

from typing import Final

LEGACY_VERSIONS: Final[tuple[str, ...]] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS: Final[tuple[str, ...]] = ("2026-07-28",)
#: Newest first, as reported in ``server/discover`` and ``-32022`` errors.
SUPPORTED_VERSIONS: tuple[str, ...] = (*reversed(MODERN_VERSIONS), *reversed(LEGACY_VERSIONS))
LATEST_LEGACY = LEGACY_VERSIONS[-1]
LATEST = MODERN_VERSIONS[-1]
#: What a Streamable HTTP request without ``MCP-Protocol-Version`` speaks (the transport's first).
HTTP_DEFAULT_VERSION = "2025-03-26"

# Per-request ``_meta`` keys of the modern era (Final: the compiled build reads them without a look-up).
META_PROTOCOL_VERSION: Final = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO: Final = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL: Final = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO: Final = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"
#: 2025-11-25: ``_meta`` key tying a message to the task it belongs to.
META_RELATED_TASK = "io.modelcontextprotocol/related-task"
#: 2026-07-28: the tasks extension's identifier.
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
#: The identifier of the skills extension (SEP-2640).
SKILLS_EXTENSION = "io.modelcontextprotocol/skills"


def negotiate_legacy(requested: object) -> str:
    """The version to answer an ``initialize`` with: the client's if we speak it, else our latest."""
    if isinstance(requested, str) and requested in LEGACY_VERSIONS:
        return requested
    return LATEST_LEGACY
