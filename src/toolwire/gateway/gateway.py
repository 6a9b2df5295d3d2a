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
items appear with a ``list_changed`` once they are up. The file's policy (``gateway.policy``:
who sees and calls what, approval, limits, the audit; see :mod:`.policy`) and the gateway's
own guards (``guards=``, :meth:`Gateway.add_guards`, inside the policy's) apply to every
upstream's tools; an upstream a caller may call no tool of is invisible to them (its
resources and prompts too, :mod:`.items`). A reload replaces a changed policy in place. It
answers ``server/discover`` as any toolwire server does, and over HTTP serves a Server Card
(``/mcp/server-card``) naming the upstreams' namespaces. Over HTTP, callers are checked as ``[auth]`` says
(:meth:`Gateway.caller_auth`, :mod:`.callers`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cards.publish import ServerCards
from ..extras import ExtraMissing
from ..guards.seam import Call, Guard, Next, Result, lists_too
from ..logs import get_logger
from ..server.server import Server
from .callers import protected_resource
from .config import ConfigError, GatewayConfig, load_config
from .health import UpstreamRunner, explain_down
from .items import UpstreamItems
from .policy import Policy, load_policy
from .reload import ConfigWatcher

if TYPE_CHECKING:
    from ..auth.identity import Identity
    from ..auth.server.resource import ProtectedResource

log = get_logger("toolwire.gateway")


class Gateway:
    """The gateway of ``config`` (see the module). ``guards``: guards of the gateway's server
    (outermost first), added to what it has."""

    def __init__(self, config: GatewayConfig, *, guards: Sequence[Guard] = ()) -> None:
        self.config = config
        self.policy = gateway_policy(config)
        self.runners: dict[str, UpstreamRunner] = {}
        self._policy_guards = self._guards_of(self.policy)
        self.server = Server(config.name, lifespan=self._lifespan, guards=[*self._policy_guards, *guards])
        if self.policy.offers_search:
            self.server.expose_search(only_for=self._search_for)
        if config.redis is not None:
            self.server.use_redis(config.redis)  # legacy sessions shared by replicas (docs/scaling.md)
        self.runners = {
            upstream.name: UpstreamRunner(upstream, self.server, config.separator)
            for upstream in config.upstreams
            if upstream.enabled
        }
        self.server.use(explain_down(lambda: self.runners.values()))
        self._waker: Guard | None = None
        self._woken = False
        self._reloading: asyncio.Lock | None = None
        # upstreams started later bring resources and prompts: clients are told from the start
        self.server.identity.capabilities.setdefault("resources", {"subscribe": True, "listChanged": True})
        self.server.identity.capabilities.setdefault("prompts", {"listChanged": True})
        self.card = ServerCards(name=card_name(config.name), description=self._description())
        self.server.add_extension(self.card)

    def _guards_of(self, policy: Policy) -> list[Guard]:
        """``policy``'s guards, and the one hiding the upstreams a caller may not see (:mod:`.items`)."""
        return [*policy.guards(), UpstreamItems(policy, self._namespaces)]

    def _namespaces(self) -> set[str]:
        return {runner.config.namespace for runner in self.runners.values()}

    def _search_for(self, identity: Identity | None) -> bool:
        return self.policy.search_for(identity)  # the policy of now: a reload may change it

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
        """Serve until stopped, as :meth:`Server.run <toolwire.Server.run>`; over HTTP,
        callers are checked as ``[auth]`` says (unless ``auth=`` is given)."""
        if transport == "http" and "auth" not in options:
            url = f"http://{options.get('host', '127.0.0.1')}:{options.get('port', 8000)}/mcp"
            options["auth"] = self.caller_auth(url)
        self.server.run(transport, **options)

    def caller_auth(self, served_url: str) -> ProtectedResource | None:
        """How callers over HTTP are checked, as ``[auth]`` says (``None`` without it: no
        check), for the gateway served at ``served_url`` (see :mod:`.callers`)."""
        if self.config.auth is None:
            return None
        return protected_resource(self.config.auth, served_url)

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
        """Serve ``config`` from now on, sessions kept: upstreams removed (or disabled) are
        stopped, added ones started (lazy ones at the next request if none came yet), changed
        ones restarted; the others go on untouched. A new separator remounts every upstream.
        A changed policy (``[policy]``, ``[audit]``, ``[gateway].search``) replaces the old one
        for the calls that start from now on (calls in flight finish under the old), and every
        session is told its lists changed. ``[auth]``, ``[admin]`` and the rest of
        ``[gateway]`` take effect at the next start (a warning says so).
        :class:`~.config.ConfigError` if the new policy cannot be used: nothing is applied."""
        if self._reloading is None:
            self._reloading = asyncio.Lock()
        async with self._reloading:
            policy = gateway_policy(config) if policy_inputs(config) != policy_inputs(self.config) else None
            if policy is not None and policy.offers_search and self.server.tool_search is None:
                self._expose_search(config)  # shown to nobody until the new policy is in place
            await self._apply(config, policy)

    async def _apply(self, config: GatewayConfig, policy: Policy | None) -> None:
        old, self.config = self.config, config
        for key in ("name", "start", "redis"):
            if getattr(old, key) != getattr(config, key):
                log.warning("gateway.toml: [gateway] %r changed: it takes effect when the gateway restarts", key)
        if (old.auth, old.admin_table) != (config.auth, config.admin_table):
            log.warning("gateway.toml: [auth] or [admin] changed: they take effect at the next start")
        if policy is not None:
            self._swap_policy(policy)
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

    def _swap_policy(self, policy: Policy) -> None:
        """Put ``policy``'s guards where the old policy's are, and tell every session."""
        self.policy = policy
        guards = self.server.guards
        old = [guard for guard in self._policy_guards if guard in guards]
        at = min((guards.index(guard) for guard in old), default=0)
        kept = [guard for guard in guards if guard not in old]
        self._policy_guards = self._guards_of(policy)
        self.server.guards = [*kept[:at], *self._policy_guards, *kept[at:]]
        self.server.recompose()
        for catalog in (
            self.server.registry, self.server.resources, self.server.resource_templates, self.server.prompts
        ):  # fmt: skip
            catalog.refresh()  # what each caller sees may have changed: every session is told
        log.info("gateway.toml: the new policy applies to the calls that start from now on")

    def _expose_search(self, config: GatewayConfig) -> None:
        """Offer the search transform from now on; :class:`~.config.ConfigError` without the
        ``search`` extra."""
        try:
            self.server.expose_search(only_for=self._search_for)
        except ExtraMissing as exc:
            raise ConfigError(f"{config.path.name if config.path is not None else 'gateway.toml'}: {exc}") from None

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


def gateway_policy(config: GatewayConfig) -> Policy:
    """The policy of ``config``'s ``[policy]`` and ``[audit]`` tables (an audit of every call,
    argument shapes only, to stderr when there is no ``[audit]`` table);
    :class:`~.config.ConfigError` naming the file, the table and the key that cannot be used."""
    try:
        return load_policy(
            dict(config.policy_table) or None,
            dict(config.audit_table),
            separator=config.separator,
            redis_url=config.redis,
            groups_claim=config.auth.groups_claim if config.auth is not None else "groups",
            search=config.search,
            base=str(config.path.parent) if config.path is not None else None,
        )
    except (ValueError, OSError) as exc:
        raise ConfigError(f"{config.path.name if config.path is not None else 'gateway.toml'}: {exc}") from None


def policy_inputs(config: GatewayConfig) -> tuple[Any, ...]:
    """What :func:`gateway_policy` reads of ``config``: the policy changes when this does."""
    groups_claim = config.auth.groups_claim if config.auth is not None else "groups"
    return (config.policy_table, config.audit_table, config.separator, config.redis, groups_claim, config.search)


def card_name(name: str) -> str:
    """The name of the gateway's Server Card: its name when it is ``namespace/name``
    (``com.example/team-gateway``), else ``local/NAME``."""
    return name if "/" in name else f"local/{name}"
