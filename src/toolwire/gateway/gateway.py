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
from ..logs import get_logger
from ..server.server import Server
from .config import GatewayConfig, load_config
from .health import UpstreamRunner
from .reload import ConfigWatcher

log = get_logger("toolwire.gateway")


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
        self._woken = False
        self._reloading: asyncio.Lock | None = None
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
        self._woken = False
        if any(runner.config.start == "lazy" for runner in self.runners.values()):
            self._wake_on_first_use()
        watcher = ConfigWatcher(self) if self.config.path is not None else None
        try:
            await asyncio.gather(
                *(runner.started() for runner in self.runners.values() if runner.config.start == "eager")
            )
            if watcher is not None:
                watcher.start()
            yield self
        finally:
            if watcher is not None:
                await watcher.stop()
            self._forget_waker()
            await asyncio.gather(*(runner.stop() for runner in self.runners.values()))

    async def reload(self, config: GatewayConfig) -> None:
        """Serve ``config``'s upstreams from now on, sessions kept: upstreams removed (or
        disabled) are stopped, added ones started (lazy ones at the next request if none came
        yet), changed ones restarted; the others go on untouched. A new separator remounts
        every upstream. The rest of ``[gateway]`` and the other tables take effect at the
        next start (a warning says so)."""
        if self._reloading is None:
            self._reloading = asyncio.Lock()
        async with self._reloading:
            await self._apply(config)

    async def _apply(self, config: GatewayConfig) -> None:
        old, self.config = self.config, config
        for key in ("name", "start", "search", "redis"):
            if getattr(old, key) != getattr(config, key):
                log.warning("gateway.toml: [gateway] %r changed: it takes effect when the gateway restarts", key)
        if (old.auth, old.policy_table, old.audit_table, old.admin_table) != (
            config.auth,
            config.policy_table,
            config.audit_table,
            config.admin_table,
        ):
            log.warning(
                "gateway.toml: [auth], [policy], [audit] or [admin] changed: they take effect at the next start"
            )
        wanted = {upstream.name: upstream for upstream in config.upstreams if upstream.enabled}
        stale = [
            name
            for name, runner in self.runners.items()
            if wanted.get(name) != runner.config or config.separator != old.separator
        ]
        await asyncio.gather(*(self.runners.pop(name).stop() for name in stale))
        for name, upstream in wanted.items():
            if name not in self.runners:
                runner = self.runners[name] = UpstreamRunner(upstream, self.server, config.separator)
                if upstream.start == "eager" or self._woken:
                    runner.start()
                else:
                    self._wake_on_first_use()
        self.card.description = self._description()
        log.info("gateway.toml reloaded: %d upstreams", len(self.runners))

    def _wake_on_first_use(self) -> None:
        """Start the upstreams not started yet at the first list or call (a guard that then leaves)."""
        if self._waker is not None:
            return

        @lists_too
        async def wake(call: Call, next: Next) -> Result:
            self._woken = True
            for runner in self.runners.values():
                runner.start()
            self._forget_waker()
            return await next(call)

        self._waker = wake
        self.server.use(wake)

    def _forget_waker(self) -> None:
        waker, self._waker = self._waker, None
        if waker is not None and waker in self.server.guards:
            self.server.guards.remove(waker)
            self.server.recompose()


def card_name(name: str) -> str:
    """The name of the gateway's Server Card: its name when it is ``namespace/name``
    (``com.example/team-gateway``), else ``local/NAME``."""
    return name if "/" in name else f"local/{name}"
