"""The :class:`Client`: discover and call any MCP server's tools, in either protocol era.

    async with Client(["npx", "some-server"]) as client:
        for tool in await client.list_tools():
            print(tool.name)
        result = await client.call_tool("echo", {"text": "hi"}, progress=print)

Connecting probes with ``server/discover`` (2026-07-28); any answer that is not a modern one,
or no answer within ``probe_timeout``, falls back to the ``initialize`` handshake, whose
version the server may negotiate down to 2024-11-05. The era is then fixed for the
connection: ``client.version`` and ``client.modern`` say which.

This module holds the connection: the handshake, requests and what the server sends (its
notifications, and the requests it makes of the client). What is asked of the server comes
from one mixin per concern: :mod:`.tool_calls`, :mod:`.task_calls`, :mod:`.resource_calls`,
:mod:`.prompt_calls`, :mod:`.skills`, :mod:`.pinning` and :mod:`.input_rounds` (questions answered round by
round); :mod:`.targets` makes the transport of what to connect to.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ..logs import get_logger
from ..protocol.connection import DEFAULT_MAX_MESSAGE_BYTES
from ..protocol.errors import METHOD_NOT_FOUND, MODERN_ERRORS
from ..protocol.versions import (
    LATEST_LEGACY,
    LEGACY_VERSIONS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    MODERN_VERSIONS,
)
from .errors import (
    AUTHORIZATION_FAILED,
    ClientError,
    ConnectionClosed,
    ProtocolViolation,
    RequestTimeout,
    ServerError,
    VersionMismatch,
)
from .input_rounds import InputRounds
from .pinning import Pinning
from .prompt_calls import PromptCalls
from .resource_calls import ResourceCalls
from .session import ClientSession
from .skills import SkillCalls
from .targets import transport_for
from .task_calls import TaskCalls
from .tasks import TaskInfo
from .tool_calls import ToolCalls, WatchedCall
from .transports import InProcess, StdioProcess, Transport
from .types import ToolInfo

if TYPE_CHECKING:
    from ..cards.document import ServerCard
    from .progress import ProgressCallback
    from .telemetry import ClientTelemetry

log = get_logger("toolwire.client")

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]

#: The most pages the client reads of one list (every list: tools, resources, prompts,
#: tasks, skills, folders), whatever cursors a server keeps handing out.
MAX_PAGES = 1000


class Client(ToolCalls, TaskCalls, ResourceCalls, PromptCalls, SkillCalls, Pinning, InputRounds):
    """A connection to one MCP server. Use it as an async context manager.

    ``target`` is a command to run over stdio (a list of arguments, or one string split like
    a shell would), a path to a ``.py`` file (served with ``toolwire run``), an
    ``http(s)://`` URL (Streamable HTTP, or the 2024-11-05 HTTP+SSE transport), a toolwire
    :class:`~toolwire.Server` (in memory), or a :class:`Transport`.

    Options: ``env``/``cwd`` for the process; ``headers`` for every HTTP request; ``auth``
    for HTTP servers that ask for authorization: a :class:`~toolwire.auth.OAuth` (or any
    ``httpx.Auth``), see docs/authorization.md;
    ``protocol`` to speak one version only (a legacy version skips the probe and asks for it
    in the handshake; the server may still answer an older one); ``timeout`` (seconds) for each request;
    ``probe_timeout`` for the era probe (with ``auth``, ``timeout``: the probe may be what
    the server first asks authorization for); ``elicitation``/``sampling`` handlers, each
    ``async (params) -> result`` (declared as capabilities only when given); ``roots``, the
    roots to offer (``[{"uri": "file:///...", "name": ...}]``, see :meth:`set_roots`); ``on_log`` for
    the server's log messages (``log_level`` asks for them); ``on_tools_changed``,
    ``on_resources_changed``, ``on_prompts_changed`` (the server's lists changed) and
    ``on_resource_updated(uri)`` (a subscribed resource changed); ``on_close(reason)`` (the
    server went away: it exited, crashed or closed the connection; not called after
    :meth:`close`); ``pins`` to check tools against approved definitions (see :meth:`approve`);
    ``max_message_bytes``: the largest message taken from a server (default 4 MiB, as
    servers): over stdio a longer line ends the connection with :class:`ConnectionClosed`
    saying so; over HTTP a longer answer, or event of a stream, decompressed, fails its
    request with a :class:`ServerError` saying so (the client stays usable);
    ``telemetry``: OpenTelemetry spans and durations of every request, the trace context sent
    along (``True`` for the global providers, or a :class:`~.telemetry.ClientTelemetry`);
    ``extensions``: the protocol extensions this client takes part in, by identifier, with
    their settings (declared in its capabilities, see docs/extensions.md; what the server
    offers is :attr:`server_extensions`, its notifications reach :meth:`on_notification`).
    """

    def __init__(
        self,
        target: str | list[str] | InProcess | Transport,
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        headers: dict[str, str] | None = None,
        auth: Any = None,
        name: str = "toolwire-client",
        version: str = "0.1.0",
        protocol: str | None = None,
        timeout: float = 60.0,
        probe_timeout: float = 5.0,
        elicitation: Handler | None = None,
        sampling: Handler | None = None,
        roots: list[dict[str, Any]] | None = None,
        on_log: Callable[[dict[str, Any]], Any] | None = None,
        log_level: str | None = None,
        on_tools_changed: Callable[[], Any] | None = None,
        on_resources_changed: Callable[[], Any] | None = None,
        on_prompts_changed: Callable[[], Any] | None = None,
        on_resource_updated: Callable[[str], Any] | None = None,
        on_close: Callable[[str], Any] | None = None,
        pins: dict[str, dict[str, str]] | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        telemetry: bool | ClientTelemetry = False,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        if protocol is not None and protocol not in (*LEGACY_VERSIONS, *MODERN_VERSIONS):
            raise ClientError(f"unknown protocol version {protocol!r}")
        self.transport = transport_for(target, env, cwd, headers, max_message_bytes, auth)
        self.client_info = {"name": name, "version": version}
        self.protocol = protocol
        self.timeout = timeout
        self.probe_timeout = max(probe_timeout, timeout) if auth is not None else probe_timeout
        self.elicitation = elicitation
        self.sampling = sampling
        self.roots = roots
        self.on_log = on_log
        self.log_level = log_level
        self.on_tools_changed = on_tools_changed
        self.on_resources_changed = on_resources_changed
        self.on_prompts_changed = on_prompts_changed
        self.on_resource_updated = on_resource_updated
        self.pins = pins
        self.extensions = dict(extensions or {})
        self._on_notification: dict[str, Callable[[dict[str, Any]], Any]] = {}
        self.version: str | None = None
        self.server_info: dict[str, Any] = {}
        self.capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        if telemetry is True:
            from .telemetry import ClientTelemetry

            telemetry = ClientTelemetry()
        self._session = ClientSession(
            self.transport, self._serve, self._notified, on_close, telemetry if telemetry else None
        )
        self._tools: dict[str, ToolInfo] = {}
        self._tools_fresh_until = 0.0
        self._tools_valid = False
        self._validators: dict[str, Any] = {}
        self._progress: dict[str | int, ProgressCallback] = {}
        self._watched: dict[int, WatchedCall] = {}
        self._watchdog: asyncio.TimerHandle | None = None
        self._subscription: int | None = None
        self._acknowledged: asyncio.Future[dict[str, Any]] | None = None
        self._resource_subscriptions: set[str] = set()
        self._request_meta: dict[str, Any] | None = None
        self._task_watchers: dict[str, Callable[[TaskInfo], Any]] = {}

    # -- connection ------------------------------------------------------------------------

    @property
    def closed(self) -> str | None:
        """Why the connection ended (``None`` while it is open)."""
        return self._session.closed

    @property
    def modern(self) -> bool:
        """Whether the connection speaks the 2026-07-28 era (per-request ``_meta``)."""
        return self.version in MODERN_VERSIONS

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def connect(self) -> None:
        """Start the transport and find the server's era and version.

        :class:`VersionMismatch` if it speaks none of ours; :class:`ConnectionClosed` if it
        cannot be started or dies first.
        """
        try:
            await self.transport.start()
        except OSError as exc:
            command = f" {self.transport.command[0]!r}" if isinstance(self.transport, StdioProcess) else ""
            raise ConnectionClosed(f"cannot start the server{command}: {exc.strerror or exc}") from exc
        try:
            if self.protocol in LEGACY_VERSIONS or not await self._probe_modern():
                if self.protocol in MODERN_VERSIONS:
                    raise VersionMismatch(f"the server does not speak {self.protocol}")
                await self._initialize()
        except BaseException:
            await self.close()
            raise
        if self.modern and self._listen_filter():
            self._listen()

    async def _probe_modern(self) -> bool:
        id, future = self._session.start("server/discover", {"_meta": self._meta(self.protocol or MODERN_VERSIONS[-1])})
        try:
            result = await asyncio.wait_for(future, self.probe_timeout)
        except TimeoutError:
            self._session.forget(id)
            return False
        except ServerError as exc:
            if exc.code == AUTHORIZATION_FAILED:
                raise  # the handshake would need the same authorization
            if exc.code not in MODERN_ERRORS:
                return False
            supported = (exc.data or {}).get("supported", []) if isinstance(exc.data, dict) else []
            if not set(supported) & set(MODERN_VERSIONS):
                return False  # a dual-era server without our modern version: use the handshake
            result = await self._session.request("server/discover", {"_meta": self._meta(_latest(supported))})
        if not isinstance(result, dict) or "supportedVersions" not in result:
            return False
        shared = [v for v in MODERN_VERSIONS if v in result.get("supportedVersions", [])]
        if not shared:
            return False
        self.version = shared[-1]
        self.capabilities = result.get("capabilities") or {}
        self.instructions = result.get("instructions")
        self.server_info = (result.get("_meta") or {}).get(META_SERVER_INFO) or {}
        return True

    async def _initialize(self) -> None:
        params = {
            "protocolVersion": self.protocol or LATEST_LEGACY,
            "capabilities": self._capabilities(),
            "clientInfo": self.client_info,
        }
        result = await self._session.request("initialize", params, self.timeout)
        version = result.get("protocolVersion")
        if version not in LEGACY_VERSIONS or (self.protocol is not None and version > self.protocol):
            raise VersionMismatch(f"the server wants protocol version {version!r}, which this client does not speak")
        self.version = version
        self.capabilities = result.get("capabilities") or {}
        self.server_info = result.get("serverInfo") or {}
        self.instructions = result.get("instructions")
        self._session.notify("notifications/initialized")
        if self.log_level is not None and "logging" in self.capabilities:
            await self._session.request("logging/setLevel", {"level": self.log_level}, self.timeout)

    async def close(self) -> None:
        """End the connection (for a process: close its stdin, then terminate, then kill)."""
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        if self._subscription is not None:
            self._session.cancel(self._subscription, "the client is closing")
            self._subscription = None
        await self._session.close()
        await self.transport.close()

    def _capabilities(self) -> dict[str, Any]:
        capabilities: dict[str, Any] = {}
        if self.elicitation is not None:
            capabilities["elicitation"] = {"form": {}}
        if self.sampling is not None:
            capabilities["sampling"] = {}
        if self.roots is not None:
            capabilities["roots"] = {"listChanged": True}
        if self.extensions:
            capabilities["extensions"] = self.extensions
        return capabilities

    @property
    def server_extensions(self) -> dict[str, dict[str, Any]]:
        """The extensions the server offers, by identifier, with their settings (empty
        before :meth:`connect`, and for a server that offers none)."""
        extensions = self.capabilities.get("extensions")
        return extensions if isinstance(extensions, dict) else {}

    def on_notification(self, method: str, callback: Callable[[dict[str, Any]], Any]) -> Callable[[], None]:
        """Call ``callback(params)`` for each notification ``method`` the server sends (an
        extension's, say), in place of what the client would do with it; returns a function
        that stops it. What the callback raises is logged, not raised."""
        self._on_notification[method] = callback

        def stop() -> None:
            if self._on_notification.get(method) is callback:
                del self._on_notification[method]

        return stop

    def _meta(self, version: str | None = None) -> dict[str, Any]:
        """The per-request ``_meta`` of the modern era (built once per connection)."""
        if version is None and self._request_meta is not None:
            return self._request_meta
        meta: dict[str, Any] = {
            META_PROTOCOL_VERSION: version or self.version,
            META_CLIENT_CAPABILITIES: self._capabilities(),
            META_CLIENT_INFO: self.client_info,
        }
        if self.log_level is not None:
            meta[META_LOG_LEVEL] = self.log_level
        if version is None:
            self._request_meta = meta
        return meta

    def _params(self, params: dict[str, Any], meta: dict[str, Any] | None = None) -> dict[str, Any]:
        """Request params for this era: modern requests carry the per-request ``_meta``."""
        if self.version in MODERN_VERSIONS:
            meta = {**self._meta(), **meta} if meta else self._meta()
        if meta:
            params = {**params, "_meta": meta}
        return params

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Any request, with this era's ``_meta``; raises as :meth:`ClientSession.request`."""
        return await self._session.request(method, self._params(params or {}), self.timeout)

    @staticmethod
    async def fetch_card(url: str, **options: Any) -> ServerCard:
        """The server card at ``url`` (or at the MCP endpoint ``url``'s ``/server-card``), read
        before connecting: see :func:`toolwire.client.cards.fetch_card`."""
        from .cards import fetch_card

        return await fetch_card(url, **options)

    async def ping(self) -> None:
        """Check the server answers (legacy era: ``ping``; modern: ``server/discover``)."""
        if self.modern:
            await self.request("server/discover")
        else:
            await self._session.request("ping", None, self.timeout)

    async def _walk(
        self, method: str, key: str, params: dict[str, Any] | None = None
    ) -> tuple[list[dict[str, Any]], float]:
        """Every item of a paged list (``params``: what each page's request carries besides
        the cursor), and the shortest ``ttlMs`` of its pages (modern). The one walk of every
        paged list the client reads: :class:`ProtocolViolation` for a ``nextCursor`` that is
        not a string, repeats, or still comes after :data:`MAX_PAGES` pages."""
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        ttl = float("inf")
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            asked = dict(params or {})
            if cursor is not None:
                asked["cursor"] = cursor
            result = await self.request(method, asked)
            items += [item for item in result.get(key) or [] if isinstance(item, dict)]
            if self.modern:
                ttl = min(ttl, max(0, result.get("ttlMs", 0)))
            cursor = result.get("nextCursor")
            if cursor is None:
                return items, ttl
            if not isinstance(cursor, str):
                raise ProtocolViolation(f"{method} answered a nextCursor that is not a string")
            if cursor in seen:
                shown = cursor if len(cursor) <= 40 else f"{cursor[:40]}... ({len(cursor)} characters)"
                raise ProtocolViolation(f"the server handed out the cursor {shown!r} twice: its pages loop")
            seen.add(cursor)
        raise ProtocolViolation(f"{method} did not end after {MAX_PAGES} pages")

    # -- roots -----------------------------------------------------------------------------

    def set_roots(self, roots: list[dict[str, Any]]) -> None:
        """Offer other roots from now on; a legacy server is told the list changed (a
        2026-07-28 server asks for them with each request that needs them)."""
        self.roots = roots
        if not self.modern and self.version is not None:
            self._session.notify("notifications/roots/list_changed")

    # -- from the server -------------------------------------------------------------------

    def _listen_filter(self) -> dict[str, Any]:
        """What to listen for on 2026-07-28: the list changes the server offers to announce,
        and the resources subscribed to."""
        wanted: dict[str, Any] = {}
        for kind in ("tools", "prompts", "resources"):
            if (self.capabilities.get(kind) or {}).get("listChanged"):
                wanted[f"{kind}ListChanged"] = True
        if self._resource_subscriptions:
            wanted["resourceSubscriptions"] = sorted(self._resource_subscriptions)
        return wanted

    def _listen(self) -> None:
        params = self._params({"notifications": self._listen_filter()})
        self._acknowledged = asyncio.get_running_loop().create_future()
        self._subscription, future = self._session.start("subscriptions/listen", params, long_lived=True)
        future.add_done_callback(lambda f: f.exception() if not f.cancelled() else None)

    async def _relisten(self) -> dict[str, Any]:
        """Replace the subscription with one for the current filter; returns what the server
        agreed to honour. :class:`RequestTimeout` if it does not acknowledge in time."""
        if self._subscription is not None:
            self._session.cancel(self._subscription, "replaced by a new subscription")
        self._listen()
        assert self._acknowledged is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._acknowledged), self.timeout)
        except TimeoutError:
            raise RequestTimeout("the server did not acknowledge the subscription") from None

    def _notified(self, method: str, params: dict[str, Any]) -> None:
        if self._on_notification:
            heard = self._on_notification.get(method)
            if heard is not None:
                try:
                    heard(params)
                except Exception:
                    log.exception("the callback for %s failed", method)
                return
        if method == "notifications/progress":
            callback = self._progress.get(params.get("progressToken"))  # type: ignore[arg-type]
            if callback is not None:
                callback(params.get("progress", 0), params.get("total"), params.get("message"))
            return
        if method == "notifications/message":
            if self.on_log is not None:
                self.on_log(params)
            return
        if method == "notifications/tasks/status":
            watcher = self._task_watchers.get(params.get("taskId"))  # type: ignore[arg-type]
            if watcher is not None:
                watcher(TaskInfo(params))
            return
        subscription = (params.get("_meta") or {}).get(META_SUBSCRIPTION_ID)
        if self.modern and subscription != self._subscription:
            return  # a notification of a subscription given up on
        if method == "notifications/tools/list_changed":
            self._tools_valid = False
            if self.on_tools_changed is not None:
                self.on_tools_changed()
        elif method == "notifications/resources/list_changed" and self.on_resources_changed is not None:
            self.on_resources_changed()
        elif method == "notifications/prompts/list_changed" and self.on_prompts_changed is not None:
            self.on_prompts_changed()
        elif method == "notifications/resources/updated" and self.on_resource_updated is not None:
            self.on_resource_updated(str(params.get("uri", "")))
        elif method == "notifications/subscriptions/acknowledged":
            acknowledged = self._acknowledged
            if acknowledged is not None and not acknowledged.done():
                acknowledged.set_result(params.get("notifications") or {})

    async def _serve(self, method: str, params: dict[str, Any]) -> Any:
        """Answer what the server asks: legacy requests and 2026-07-28 input requests alike."""
        if method == "ping":
            return {}
        if method == "roots/list" and self.roots is not None:
            return {"roots": self.roots}
        handler = {"elicitation/create": self.elicitation, "sampling/createMessage": self.sampling}.get(method)
        if handler is None:
            raise ServerError(METHOD_NOT_FOUND, f"Method not found: this client does not handle {method}")
        return await handler(params)

    async def serve_request(self, method: str, params: dict[str, Any]) -> Any:
        """Answer a question from the server (elicitation, sampling, roots) as this client
        answers them: with its handlers."""
        return await self._serve(method, params)


def _latest(versions: list[str]) -> str:
    return max(v for v in versions if v in MODERN_VERSIONS)
