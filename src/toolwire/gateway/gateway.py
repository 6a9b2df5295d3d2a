"""The gateway: many MCP servers served as one.

    gateway = Gateway.from_file("gateway.toml")
    gateway.run()                                   # over stdio; or gateway.run("http", port=8000)
    app = gateway.server.http_app()                 # or serve its Server any way a Server is

:class:`Gateway` holds a toolwire :class:`~toolwire.Server` (``gateway.server``) named by
``[gateway].name``. Each enabled upstream is run by an :class:`~.health.UpstreamRunner`: a
proxy of it (:func:`~toolwire.proxy.proxy`: list changes, progress, cancellation, elicitation,
sampling and tasks relayed; any protocol version on either side) mounted under its namespace,
``github.create_issue`` with the default separator. Upstreams with ``start = "eager"`` are
started when the server starts, before it answers anyone; the others (``"lazy"``, the default)
on the first request that reaches the gateway (a list or a call), in the background: their
items appear with a ``list_changed`` once they are up. The gateway's own guards (``guards=``,
:meth:`Gateway.add_guards`) apply to every upstream's tools. It answers ``server/discover``
as any toolwire server does, and over HTTP serves a Server Card (``/mcp/server-card``)
naming the upstreams' namespaces.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from ..cards.publish import ServerCards
from ..guards.seam import Call, Guard, Next, Result, lists_too
from ..server.server import Server
from .config import GatewayConfig, load_config
from .health import UpstreamRunner


class Gateway:
    """The gateway of ``config`` (see the module). ``guards``: guards of the gateway's server
    (outermost first), added to what it has."""

    def __init__(self, config: GatewayConfig, *, guards: Sequence[Guard] = ()) -> None:
        self.config = config
        self.server = Server(config.name, lifespan=self._lifespan, guards=guards)
        self.runners: dict[str, UpstreamRunner] = {
            upstream.name: UpstreamRunner(upstream, self.server, config.separator)
            for upstream in config.upstreams
            if upstream.enabled
        }
        self._waker: Guard | None = None
        # upstreams started later bring resources and prompts: clients are told from the start
        self.server.identity.capabilities.setdefault("resources", {"subscribe": True, "listChanged": True})
        self.server.identity.capabilities.setdefault("prompts", {"listChanged": True})
        self.card = ServerCards(name=card_name(config.name), description=self._description())
        self.server.add_extension(self.card)

    def _description(self) -> str:
        namespaces = ", ".join(runner.config.namespace for runner in self.runners.values())
        return f"A gateway to {len(self.runners)} MCP servers, each under its namespace: {namespaces}"

    @classmethod
    def from_file(cls, path: str | Path, *, guards: Sequence[Guard] = ()) -> Gateway:
        """The gateway of the file ``path``; :class:`~.config.ConfigError` if it cannot be used."""
        return cls(load_config(path), guards=guards)

    def add_guards(self, guards: Sequence[Guard]) -> None:
        """Add ``guards`` to the gateway's server, inside those it has."""
        for guard in guards:
            self.server.use(guard)

    def run(self, transport: str = "stdio", **options: Any) -> None:
        """Serve until stopped, as :meth:`Server.run <toolwire.Server.run>`."""
        self.server.run(transport, **options)

    async def _lifespan(self, server: Server) -> AsyncIterator[Gateway]:
        lazy = [runner for runner in self.runners.values() if runner.config.start == "lazy"]
        if lazy:
            self._waker = self._wake_on_first_use(lazy)
            server.use(self._waker)
        try:
            eager = [runner.started() for runner in self.runners.values() if runner.config.start == "eager"]
            await asyncio.gather(*eager)
            yield self
        finally:
            self._forget_waker()
            await asyncio.gather(*(runner.stop() for runner in self.runners.values()))

    def _wake_on_first_use(self, lazy: list[UpstreamRunner]) -> Guard:
        """A guard that starts the ``lazy`` upstreams at the first list or call, then leaves."""

        @lists_too
        async def wake(call: Call, next: Next) -> Result:
            for runner in lazy:
                runner.start()
            self._forget_waker()
            return await next(call)

        return wake

    def _forget_waker(self) -> None:
        waker, self._waker = self._waker, None
        if waker is not None and waker in self.server.guards:
            self.server.guards.remove(waker)
            self.server.recompose()


def card_name(name: str) -> str:
    """The name of the gateway's Server Card: its name when it is ``namespace/name``
    (``com.example/team-gateway``), else ``local/NAME``."""
    return name if "/" in name else f"local/{name}"
