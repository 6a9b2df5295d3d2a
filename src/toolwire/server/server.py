"""The :class:`Server` users define tools on.

A server is a definition (its identity, its tools, its options); it holds no connection
state, so one server object serves any number of connections, in either protocol era, at
once. ``server.run()`` serves it over stdio; transports in :mod:`toolwire.transports` serve
it in other ways.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, Unpack, overload

from ..catalog import Catalog
from ..guards.seam import Guard, Next, chain, sees_lists
from ..protocol.codec import Codec
from ..protocol.connection import DEFAULT_MAX_DEPTH, DEFAULT_MAX_MESSAGE_BYTES, ServerConnection
from ..protocol.identity import ServerIdentity
from ..protocol.versions import TASKS_EXTENSION
from ..tools.tool import Tool, ToolOptions, annotations_from
from .extensions import Extension
from .lifecycle import Lifecycle
from .lifespan import Lifespan, LifespanRunner
from .offering import extend_definition, offer
from .raw_handlers import RawHandlers
from .resources_prompts import ResourcesAndPrompts
from .targets import Targets
from .versions import ToolVersions
from .visibility import Visibility

if TYPE_CHECKING:
    from ..apps.view import App
    from ..auth.identity import Identity
    from ..auth.server.vault import TokenVault
    from ..prompts.prompt import Prompt
    from ..resources.resource import Resource, ResourceTemplate
    from ..skills import Skill, SkillsExtension
    from ..tasks.manager import TaskManager
    from ..tasks.store import TaskStore
    from ..transports.http.app import StreamableHTTP
    from .dispatch import Dispatch
    from .folder import Folder
    from .mount import Mount
    from .search import ToolSearch
    from .session import ServerSession

F = TypeVar("F", bound=Callable[..., Any])

_ListHandler = Callable[..., Any]
_CallHandler = Callable[..., Any]


class Server(Lifecycle, ResourcesAndPrompts, RawHandlers, Targets):
    """An MCP server offering tools (and resources, prompts and completion), for every
    protocol version from 2024-11-05 to 2026-07-28.

    Options:

    - ``instructions``: guidance for the model on using this server.
    - ``page_size``: items per ``tools/list`` (``resources/list``, ``prompts/list``...) page
      (``None``: all in one page).
    - ``mask_errors``: answer unexpected tool exceptions with a generic message instead of
      the exception's text (it is always logged to stderr). For production.
    - ``lenient_arguments``: default for decorated tools: accept ``"5"`` for ``5`` and JSON
      text for objects and arrays (see :mod:`toolwire.tools.validation`).
    - ``max_message_bytes``, ``max_depth``: larger or deeper messages are refused (-32600).
    - ``state_key``, ``state_ttl``: HMAC key and lifetime (seconds) of 2026-07-28
      ``requestState``; the key defaults to ``TOOLWIRE_STATE_KEY`` or a random per-process key.
      Several keys (a list, or the variable's keys separated by commas): the first seals, all
      are accepted (to rotate keys without refusing states handed out before).
    - ``cache_ttl_ms``, ``cache_scope``: caching hints on 2026-07-28 discover and list results.
    - ``guards``: callables wrapped around every request that runs your code, outermost first
      (see :mod:`toolwire.guards`); :meth:`use` adds more.
    - ``timeout``: seconds a tool call (or a resource read, a prompt) may run before it is
      cancelled (a tool's own ``timeout=`` wins); ``max_concurrency``: calls running at once
      in all (a tool's own ``max_concurrency=`` limits that tool). See :mod:`toolwire.guards`.
    - ``task_store``: where tools declared with ``task=`` keep their tasks: ``None`` (memory),
      a file path (SQLite: tasks survive restarts), a ``redis://`` URL (replicas share them)
      or a :class:`~toolwire.tasks.TaskStore`;
      ``task_ttl``: seconds a task and its result are kept (``None``: until deleted);
      ``task_poll_interval``: seconds suggested between polls. See docs/tasks.md.
    - ``lifespan``: what the server opens before serving and closes when it stops (a function
      returning a context manager, or a generator function); tools reach what it yields as
      ``ctx.lifespan``. See :mod:`toolwire.server.lifespan`; :meth:`lifespan` sets it too.
    - ``tool_search``: list ``search_tools`` and ``call_tool`` instead of every tool (see
      :meth:`expose_search`).
    - ``include_tags``: list only the tools, resources and prompts carrying one of these tags
      (and, with ``tool_search``, its two tools);
      ``exclude_tags``: hide those carrying one of these. Rules for one caller or one session
      go on :attr:`visibility` (see :mod:`toolwire.server.visibility`).
    """

    def __init__(
        self,
        name: str = "toolwire-server",
        version: str = "0.1.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        page_size: int | None = None,
        mask_errors: bool = False,
        lenient_arguments: bool = True,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        max_depth: int = DEFAULT_MAX_DEPTH,
        state_key: bytes | str | Sequence[bytes | str] | None = None,
        state_ttl: float = 600.0,
        cache_ttl_ms: int = 60_000,
        cache_scope: str = "public",
        guards: Sequence[Guard] = (),
        timeout: float | None = None,
        max_concurrency: int | None = None,
        task_store: TaskStore | str | os.PathLike[str] | None = None,
        task_ttl: float | None = 3600.0,
        task_poll_interval: float = 1.0,
        lifespan: Lifespan | None = None,
        include_tags: Iterable[str] | None = None,
        exclude_tags: Iterable[str] | None = None,
        tool_search: bool = False,
    ) -> None:
        if cache_scope not in ("public", "private"):
            raise ValueError('cache_scope must be "public" or "private"')
        if cache_ttl_ms < 0:
            raise ValueError("cache_ttl_ms must be 0 or more")
        self.name = name
        self.version = version
        self.registry: Catalog[Tool] = Catalog("tools", "tool", Codec.tool, page_size)
        self.resources: Catalog[Resource] = Catalog("resources", "resource", Codec.resource, page_size)
        self.resource_templates: Catalog[ResourceTemplate] = Catalog(
            "resourceTemplates", "resource template", Codec.resource_template, page_size
        )
        self.prompts: Catalog[Prompt] = Catalog("prompts", "prompt", Codec.prompt, page_size)
        self._resource_listeners: dict[int, Callable[[str], None]] = {}
        #: The versions of versioned tools (the registry holds the exposed one of each).
        self.tool_versions = ToolVersions(self.registry)
        #: Which items each request sees: rules for everyone, per caller, per session.
        self.visibility = Visibility(self)
        self.mask_errors = mask_errors
        self.lenient_arguments = lenient_arguments
        self.max_message_bytes = max_message_bytes
        self.max_depth = max_depth
        #: Keys sealing 2026-07-28 ``requestState``: the first seals, any unseals (rotation).
        self.state_keys = _state_keys(state_key if state_key is not None else os.environ.get("TOOLWIRE_STATE_KEY"))
        self.state_ttl = state_ttl
        info: dict[str, Any] = {"name": name, "version": version}
        if title is not None:
            info["title"] = title
        capabilities = {"tools": {"listChanged": True}, "logging": {}}
        self.identity = ServerIdentity(info, capabilities, instructions, cache_ttl_ms, cache_scope)
        self.timeout = timeout
        self.max_concurrency = max_concurrency
        self.guards: list[Guard] = list(guards)
        self._limits: Guard | None = None
        #: The search transform, once exposed (:meth:`expose_search`).
        self.tool_search: ToolSearch | None = None
        #: The guards composed (``None`` without any): what sessions call; those that see
        #: list requests too (:func:`~toolwire.guards.lists_too`), composed.
        self.guarded: Next | None = None
        self.list_guarded: Next | None = None
        self.recompose()
        self._dispatch: Dispatch | None = None
        #: The extensions this server offers, by identifier (see :meth:`add_extension`).
        self.extensions: dict[str, Extension] = {}
        #: Those with hooks the handlers call: on ``tools/call``, on ``subscriptions/listen``,
        #: on tool definitions.
        self.call_claimers: tuple[Extension, ...] = ()
        self.listeners: tuple[Extension, ...] = ()
        self.definers: tuple[Extension, ...] = ()
        self.raw_list_handler: _ListHandler | None = None
        self.raw_call_handler: _CallHandler | None = None
        self._raw_tools: dict[str, Tool] = {}
        self._task_options: dict[str, Any] = {
            "store": task_store,
            "ttl": task_ttl,
            "poll_interval": task_poll_interval,
            "page_size": page_size or 50,
        }
        self._tasks: TaskManager | None = None
        self._lifespan: LifespanRunner | None = None
        self._mounts: dict[str, Mount] = {}
        self._folders: list[Folder] = []
        self._redis: tuple[str, str] | None = None  # use_redis's URL and key prefix
        if lifespan is not None:
            self.lifespan(lifespan)
        #: The provider tokens tools may have (``ctx.upstream_token()``); ``None``: none are
        #: handed out. Set when the operator allows it (see docs/authorization.md).
        self.upstream_tokens: TokenVault | None = None
        if tool_search:
            self.expose_search()
        if include_tags is not None:  # the search transform's own two tools stay
            kept = tuple(self.tool_search.listed.by_key) if self.tool_search is not None else ()
            self.visibility.everyone.enable(*kept, tags=include_tags, only=True)
        if exclude_tags is not None:
            self.visibility.everyone.disable(tags=exclude_tags)

    # -- guards ----------------------------------------------------------------------------

    def use(self, guard: Guard) -> Guard:
        """Add a guard inside those already there (it runs after them, closer to the tool)."""
        self.guards.append(guard)
        self.recompose()
        return guard

    def recompose(self, tool_limits: bool = False) -> None:
        """Order the guards (``outermost`` ones first, then the built-in limits when any is
        set and the user gave no :class:`Limits` of their own, then the rest) and compose.
        ``tool_limits``: a tool with limits of its own was just added (no need to look for one)."""
        if self._limits in self.guards:
            self.guards.remove(self._limits)
        wanted = not any(getattr(guard, "applies_tool_limits", False) for guard in self.guards) and (
            tool_limits
            or self.timeout is not None
            or self.max_concurrency is not None
            or any(tool.timeout is not None or tool.max_concurrency is not None for tool in self.registry.all())
        )
        self._limits = None
        outer = [guard for guard in self.guards if getattr(guard, "outermost", False)]
        inner = [guard for guard in self.guards if not getattr(guard, "outermost", False)]
        if wanted:
            from ..guards.limits import Limits  # asyncio: only for a server that needs it

            self._limits = Limits(self.timeout, self.max_concurrency)
            inner.insert(0, self._limits)
        self.guards = outer + inner
        self.guarded = chain(self.guards)
        if self.guarded is not None and self.tool_search is not None:
            self.guarded = self.tool_search.routed(self.guarded)  # call_tool guarded as the tool it runs
        self.list_guarded = chain([guard for guard in self.guards if sees_lists(guard)])

    # -- other sources ---------------------------------------------------------------------

    @classmethod
    def from_openapi(cls, document: Any, base_url: str | None = None, client: Any = None, **options: Any) -> Server:
        """A server for the HTTP API an OpenAPI document describes (a dict, a JSON or YAML
        file, or a URL read once): each operation a tool (or a resource), its calls sent to
        ``base_url`` (default: the document's first server) through ``client`` (an
        ``httpx.AsyncClient``, else one made for it). See
        :func:`toolwire.openapi.from_openapi` for the options (route maps, upstream
        credentials, limits) and errors, docs/openapi.md for the whole story."""
        from ..openapi.server import from_openapi

        return from_openapi(document, base_url, client, **options)

    @classmethod
    def from_asgi(cls, app: Any, **options: Any) -> Server:
        """A server for an ASGI application that publishes an OpenAPI document (FastAPI,
        Starlette with a schema), called in process: no socket. See
        :func:`toolwire.openapi.from_asgi` for the options and errors."""
        from ..openapi.server import from_asgi

        return from_asgi(app, **options)

    # -- lifespan and composition -----------------------------------------------------------

    def lifespan(self, function: F) -> F:
        """Set the server's lifespan (usable as a decorator): a function of the server (or of
        nothing) returning a context manager, sync or async, or a generator function that
        yields once. What it yields is ``ctx.lifespan`` in tools. ``ValueError`` if one is
        set already."""
        if self._lifespan is not None:
            raise ValueError("this server has a lifespan already: combine them in one")
        self._lifespan = LifespanRunner(self, function)
        return function

    def mount(self, server: Server, prefix: str, *, separator: str = "_", strict: bool = True) -> None:
        """Serve ``server``'s tools, resources and prompts here under ``prefix`` (see
        :mod:`toolwire.server.mount`: ``weather_forecast``, ``data://weather/today``;
        ``separator="."`` makes it ``weather.forecast``), kept in step with it. ``ValueError``
        for a prefix used already, or a name taken here or too long once prefixed (with
        ``strict=False``, such items are left out with a warning instead)."""
        from .mount import Mount

        if prefix in self._mounts:
            raise ValueError(f"a server is mounted at {prefix!r} already: unmount it first")
        mount = Mount(self, server, prefix, separator, strict)
        mount.attach()
        self._mounts[prefix] = mount

    def unmount(self, prefix: str) -> None:
        """Stop serving what is mounted at ``prefix``; ``KeyError`` if nothing is."""
        self._mounts.pop(prefix).detach()

    def add_folder(self, path: str | os.PathLike[str], *, reload: bool = False) -> Folder:
        """Serve the tools, resources and prompts of every tool file in the folder ``path``
        (see :mod:`toolwire.server.folder` for what a file holds); ``reload``: load them
        again when a file changes while serving, telling clients the lists changed.
        ``ValueError`` if ``path`` is not a folder; a file that fails, or a name two files
        define, is reported in the returned folder's ``problems`` and the log, never raised."""
        from .folder import Folder

        folder = Folder(self, path, reload)
        folder.load()
        self._folders.append(folder)
        return folder

    # -- decorators ------------------------------------------------------------------------

    @overload
    def tool(self, fn: F, /) -> F: ...

    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        read_only: bool | None = None,
        destructive: bool | None = None,
        idempotent: bool | None = None,
        open_world: bool | None = None,
        output_schema: dict[str, Any] | type | None = None,
        structured_output: bool | None = None,
        app: App | None = None,
        **options: Unpack[ToolOptions],
    ) -> Callable[[F], F]: ...

    def tool(self, fn: Any = None, /, **options: Any) -> Any:
        """Register a function as a tool: ``@server.tool`` or ``@server.tool(name=..., ...)``.

        The function may be sync (run on a worker thread, never blocking the event loop;
        ``inline=True`` calls it on the loop instead, for a function that never blocks) or
        async. Its name, docstring and type hints give the tool's name, description and
        schemas; the keywords override them. ``read_only``, ``destructive``, ``idempotent``
        and ``open_world`` set the annotation hints; ``timeout`` (seconds) and
        ``max_concurrency`` limit its calls; ``scopes``: the OAuth scopes a caller needs to
        see and call it (over HTTP with ``auth=``, see docs/authorization.md). ``task``:
        ``True`` (or ``"optional"``) lets a client that can run it as a task do so,
        ``"required"`` lets it run only as one; ``defer_task=True`` starts the task when the
        tool awaits ``ctx.start_task()`` rather than before it runs (see docs/tasks.md).
        ``app``: a :class:`~toolwire.apps.App`, the interactive view hosts show its results
        in (MCP Apps, see docs/extensions.md).
        Raises ``ValueError`` for an invalid or taken name and ``TypeError`` for a type that
        has no JSON Schema. The keywords shared with :class:`~toolwire.Tool` are
        :class:`~toolwire.tools.tool.ToolOptions`'; ``lenient=None``: the server's
        ``lenient_arguments``.
        """

        def register(function: F) -> F:
            self.add_tool(function, **options)
            return function

        return register(fn) if fn is not None else register

    def add_tool(self, tool: Tool | Callable[..., Any], **options: Any) -> Tool:
        """Register a :class:`Tool`, or a function with the same keywords as :meth:`tool`."""
        app = options.pop("app", None)
        if not isinstance(tool, Tool):
            hints = {key: options.pop(key, None) for key in ("read_only", "destructive", "idempotent", "open_world")}
            options["annotations"] = annotations_from(hints, options.get("annotations"))
            if options.get("lenient") is None:
                options["lenient"] = self.lenient_arguments
            tool = Tool.from_function(tool, **options)
        if tool.owner is None:
            tool.owner = self
        if tool.task is not None and TASKS_EXTENSION not in self.extensions:
            from ..tasks.extension import TasksExtension

            self.add_extension(TasksExtension())
        if app is not None:
            from ..apps.extension import show_in_view

            show_in_view(self, tool, app)
        for extension in self.definers:
            extend_definition(tool, extension)
        if tool.version is not None:
            had_versions = bool(self.tool_versions)
            self.tool_versions.add(tool, self.registry.add)
            if not had_versions:
                from .calls import route_calls

                route_calls(self)
        else:
            self.registry.add(tool.name, tool)
        if tool.timeout is not None or tool.max_concurrency is not None:
            self.recompose(tool_limits=True)
        return tool

    def raw_tool(
        self,
        name: str,
        *,
        input_schema: dict[str, Any],
        output_schema: dict[str, Any] | None = None,
        **options: Unpack[ToolOptions],
    ) -> Callable[[F], F]:
        """Register a low-level tool: ``handler(arguments)`` (or ``handler(arguments, context)``)
        receives the arguments dict, validated against ``input_schema`` as given."""

        def register(handler: F) -> F:
            self.add_tool(Tool.from_schema(name, input_schema, handler, output_schema=output_schema, **options))
            return handler

        return register

    def remove_tool(self, name: str) -> Tool:
        """Unregister a tool, every version of it (clients are told the list changed);
        ``KeyError`` if unknown."""
        removed = self.registry.remove(name)
        self.tool_versions.forget(name)
        return removed

    def expose_search(self, limit: int = 5, *, only_for: Callable[[Identity | None], bool] | None = None) -> None:
        """List ``search_tools`` and ``call_tool`` instead of every tool, for clients that
        cannot load definitions on demand (see :mod:`toolwire.server.search`); a search
        returns ``limit`` tools unless it asks otherwise. The tools stay callable by name.
        ``only_for``: whether a caller (``None``: anonymous) gets the two tools; the others
        are listed every tool (default: every caller gets the two).
        :class:`~toolwire.extras.ExtraMissing` without the ``search`` extra; ``ValueError``
        if exposed already or a tool holds one of the two names."""
        if self.tool_search is not None:
            raise ValueError("this server exposes search already")
        from .search import ToolSearch

        self.tool_search = ToolSearch(self, limit, only_for)
        self.recompose()

    def resources_as_tools(self, max_chars: int = 100_000, max_blob_bytes: int = 2_000_000) -> None:
        """Add the tools ``list_resources`` and ``read_resource``, for clients that read only
        tools (see :mod:`toolwire.server.transforms`): what a read returns is cut at
        ``max_chars`` characters of text, ``max_blob_bytes`` bytes of binary. ``ValueError``
        if the server has a tool of either name (or added them already)."""
        from .transforms import ResourcesAsTools

        ResourcesAsTools(self, max_chars, max_blob_bytes)

    def prompts_as_tools(self) -> None:
        """Add the tools ``list_prompts`` and ``get_prompt``, for clients that read only tools
        (see :mod:`toolwire.server.transforms`). ``ValueError`` if the server has a tool of
        either name (or added them already)."""
        from .transforms import PromptsAsTools

        PromptsAsTools(self)

    def expose_version(self, name: str, version: str | None) -> None:
        """List ``version`` of the versioned tool ``name`` (``None``: the newest again; see
        :mod:`toolwire.server.versions`); ``KeyError`` for an unknown tool or version."""
        self.tool_versions.expose(name, version)

    def enable_tool(self, name: str, *, caller: str | None = None) -> None:
        """Show a disabled tool again; ``KeyError`` if unknown. With ``caller``: show it to
        that authenticated caller (``Identity.name``) only, undoing a
        ``disable_tool(name, caller=...)`` (a tool disabled for everyone stays hidden)."""
        if caller is not None:
            self._known_tool(name)
            self.visibility.caller(caller).enable(name, kind="tools")
        else:
            self.registry.set_enabled(name, True)

    def disable_tool(self, name: str, *, caller: str | None = None) -> None:
        """Hide a tool from ``tools/list`` and refuse calls to it; ``KeyError`` if unknown.
        With ``caller``: for that authenticated caller only (their sessions are told)."""
        if caller is not None:
            self._known_tool(name)
            self.visibility.caller(caller).disable(name, kind="tools")
        else:
            self.registry.set_enabled(name, False)

    def _known_tool(self, name: str) -> None:
        if name not in self.registry:
            raise KeyError(f"no tool {name!r}")

    # -- skills ----------------------------------------------------------------------------

    def add_skill(self, folder: str | os.PathLike[str], prefix: str = "") -> Skill:
        """Serve the skill in ``folder`` (a ``SKILL.md`` and its files) at
        ``skill://PREFIX/NAME``, offering the skills extension from the first (see
        :mod:`toolwire.skills`). :class:`~toolwire.skills.SkillInvalid` naming the file and
        the problem; ``ValueError`` for a skill served already."""
        from ..skills import load_skill

        return self._skills().add(load_skill(folder, prefix))

    def add_skills(self, folder: str | os.PathLike[str], prefix: str = "") -> list[Skill]:
        """Serve every skill of ``folder`` (the folder itself if it is one, else each
        sub-folder with a ``SKILL.md``); raises as :meth:`add_skill` (an invalid skill before
        any is served)."""
        from ..skills import find_skills

        extension = self._skills()
        return [extension.add(skill) for skill in find_skills(folder, prefix)]

    def _skills(self) -> SkillsExtension:
        from ..skills.extension import skills_of

        return skills_of(self)

    # -- extensions ------------------------------------------------------------------------

    def add_extension(self, extension: Extension) -> Extension:
        """Offer ``extension`` (see :mod:`toolwire.server.extensions` and docs/extensions.md):
        advertise it in the capabilities of every version, answer its methods, add its
        fields to tool definitions. ``ValueError`` for a malformed identifier, one this
        server offers already, or a method the server or another extension answers (naming
        both). All or nothing: when a step (its ``install``...) raises, nothing of the
        extension stays (see :mod:`toolwire.server.offering`)."""
        return offer(self, extension)

    # -- serving ---------------------------------------------------------------------------

    def connection(self, terminator: bytes = b"\n", identity: ServerIdentity | None = None) -> ServerConnection:
        """Fresh protocol state for one connection to this server (which may present
        another ``identity``: capabilities a transport cannot honour left out, say)."""
        dispatch = self.dispatch
        return ServerConnection(
            identity or self.identity,
            terminator=terminator,
            max_message_bytes=self.max_message_bytes,
            max_depth=self.max_depth,
            legacy_only=dispatch.legacy_only,
            modern_only=dispatch.modern_only,
        )

    @property
    def dispatch(self) -> Dispatch:
        """The methods this server answers (see :mod:`toolwire.server.dispatch`): the
        standard ones, and those registered on it (``server.dispatch.register(...)``)."""
        dispatch = self._dispatch
        if dispatch is None:
            from .methods import STANDARD

            dispatch = self._dispatch = STANDARD.copy()
        return dispatch

    def open_session(self, send: Callable[[bytes], None], terminator: bytes = b"") -> ServerSession:
        """A session of a new connection to this server whose messages go to ``send`` (what
        ``Client(server)`` talks to in memory); feed it messages with ``feed_message``."""
        from .session import ServerSession

        return ServerSession(self, self.connection(terminator=terminator), send)

    def run(self, transport: str = "stdio", **options: Any) -> None:
        """Serve until stopped: over stdio until stdin closes (what desktop MCP clients
        launch), or with ``transport="http"`` over Streamable HTTP, ``options`` as for
        :meth:`run_http` (``host``, ``port``, ``auth``...). ``ValueError`` for another transport."""
        if transport == "http":
            self.run_http(**options)
            return
        if transport != "stdio" or options:
            raise ValueError('transport is "stdio" (which takes no options) or "http"')
        from ..transports.stdio import run_stdio

        run_stdio(self)

    def http_app(self, **options: Any) -> StreamableHTTP:
        """This server as an ASGI application speaking Streamable HTTP to every protocol
        version (mount it in Starlette or FastAPI, or serve it with any ASGI server); see
        :class:`~toolwire.transports.http.app.StreamableHTTP` for the options."""
        from ..transports.http.app import StreamableHTTP

        return StreamableHTTP(self, **options)

    def run_http(self, host: str = "127.0.0.1", port: int = 8000, **options: Any) -> None:
        """Serve over Streamable HTTP at ``http://host:port/mcp`` until interrupted; see
        :func:`~toolwire.transports.http.serve.run_http` for the options (runner, connection
        limits, trusted proxies, the application's)."""
        from ..transports.http.serve import run_http

        run_http(self, host, port, **options)


def _state_keys(given: bytes | str | Sequence[bytes | str] | None) -> list[bytes]:
    """The sealing keys from ``state_key`` / ``TOOLWIRE_STATE_KEY`` (a random one without)."""
    if given is None:
        return [os.urandom(32)]
    if isinstance(given, str):
        given = [part for part in given.split(",") if part]
    elif isinstance(given, bytes):
        given = [given]
    keys = [key.encode() if isinstance(key, str) else bytes(key) for key in given]
    if not keys:
        raise ValueError("state_key must hold at least one key")
    return keys
