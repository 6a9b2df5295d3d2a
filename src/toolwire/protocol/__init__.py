"""The sans-IO core: JSON-RPC framing, error codes, versions and eras, per-version codecs,
and the per-connection state machine. Imports nothing else of toolwire; does no I/O."""

from .codec import Codec, codec_for
from .connection import ServerConnection
from .errors import ProtocolError
from .identity import ServerIdentity
from .incoming import Cancelled, Request, Response
from .outgoing import Answer, Notification, Outgoing, ServerRequest
from .versions import LATEST, LEGACY_VERSIONS, MODERN_VERSIONS, SUPPORTED_VERSIONS

__all__ = [
    "LATEST",
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "SUPPORTED_VERSIONS",
    "Answer",
    "Cancelled",
    "Codec",
    "Notification",
    "Outgoing",
    "ProtocolError",
    "Request",
    "Response",
    "ServerConnection",
    "ServerIdentity",
    "ServerRequest",
    "codec_for",
]
