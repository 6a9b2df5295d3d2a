"""What a server says about itself, per protocol version: :class:`ServerIdentity`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .codec import Codec


class ServerIdentity:
    """What a server says about itself: in the handshake, ``server/discover`` and results.

    ``capabilities`` are neutral (a codec names them per version); ``contributions`` are
    functions ``(version) -> capabilities`` whose results are added per version (an
    extension's ``capabilities.extensions`` entry, say), their ``extensions`` merged. Call
    :meth:`changed` after changing either, or ``info``: what each version sees is kept until then."""

    __slots__ = (
        "_rendered",
        "cache_scope",
        "capabilities",
        "contributions",
        "info",
        "instructions",
        "text_ends",
        "ttl_ms",
    )

    def __init__(
        self,
        info: dict[str, Any],
        capabilities: dict[str, Any],
        instructions: str | None,
        ttl_ms: int = 60_000,
        cache_scope: str = "public",
        contributions: list[Callable[[str], dict[str, Any]]] | None = None,
    ) -> None:
        self.info = info
        self.capabilities = capabilities
        self.instructions = instructions
        self.ttl_ms = ttl_ms
        self.cache_scope = cache_scope
        self.contributions = contributions if contributions is not None else []
        self._rendered: dict[str, dict[str, Any]] = {}
        #: By version: what ends an answer of one text block, once :meth:`text_end` made it.
        self.text_ends: dict[str, bytes] = {}

    def capabilities_in(self, codec: Codec) -> dict[str, Any]:
        """The capabilities as ``codec``'s version sends them (do not change the dict)."""
        rendered = self._rendered.get(codec.version)
        if rendered is None:
            rendered = dict(codec.capabilities(self.capabilities))
            for contribute in self.contributions:
                for name, value in contribute(codec.version).items():
                    if name == "extensions":
                        value = {**rendered.get("extensions", {}), **value}
                    rendered[name] = value
            self._rendered[codec.version] = rendered
        return rendered

    def text_end(self, codec: Codec) -> bytes:
        """What ends an answer of one text block in ``codec``'s version, after its text:
        the result's end (:meth:`Codec.text_result_end` with this server's info), then the
        message's; kept in :attr:`text_ends`."""
        end = self.text_ends[codec.version] = codec.text_result_end(self.info) + b"}"
        return end

    def changed(self) -> None:
        """Forget what each version was sent: capabilities, contributions or info changed."""
        self._rendered.clear()
        self.text_ends.clear()
