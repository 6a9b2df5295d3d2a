"""Extensions of the protocol (SEP-2133): everything one extension adds to a server, in one object.

Theory of operation
-------------------
An :class:`Extension` has an identifier (``vendor-prefix/name``, as ``_meta`` keys are
named, the prefix mandatory) and says what it adds; :meth:`Server.add_extension
<toolwire.server.server.Server.add_extension>` puts it in place. SEP-2133 asks that an
SDK's extensions be off until a server opts in: adding one is that opt-in.

===========================  ===============================================================
``settings()``               advertised under ``capabilities.extensions[id]``, in
                             ``initialize`` and in ``server/discover`` (every version)
``capabilities(version)``    the whole of what it adds to the capabilities of one version
                             (by default the line above; tasks, core in 2025-11-25, add
                             their ``tasks`` capability there instead)
``@method(...)``             the requests it answers: ``async def m(self, call) -> dict``,
                             with ``call`` a :class:`MethodCall`; on 2026-07-28 a request
                             that does not declare the extension gets ``-32021`` with the
                             ``requiredCapabilities`` to declare (``declared=False`` lifts it)
``tool_definition(tool)``    fields (``_meta`` keys, ``execution``...) it adds to the
                             definition of each tool that ``tools/list`` shows
``install(server)``          anything else, once, on the server (tools, resources, guards,
                             routes of :attr:`Server.dispatch
                             <toolwire.server.server.Server.dispatch>`)
``documents()``              public read-only JSON documents (:class:`Document`) served over
                             HTTP beside the MCP endpoint (the server card of SEP-2127)
===========================  ===============================================================

Mounted (``parent.mount(server, prefix)``), ``mounted(prefix)`` says what the parent offers
in its place (by default, for an extension with methods, the same identifier, capabilities
and methods), ``mount_into(parent, prefix)`` puts it there (by default: offers what
``mounted`` gives; the skills extension joins the parent's own instead) and
``prefixed_definition(definition, prefix)`` how a tool definition holding its fields reads
there (see :mod:`toolwire.server.mount`).

Two lower-level hooks reach inside the server's handlers (the tasks extension uses both):
``claim_call(request, tool)`` takes a ``tools/call`` over (a :class:`CallClaim` runs
around the tool and may answer in the call's place); ``listen(session, request, wanted,
honoured)`` adds filters to a 2026-07-28 ``subscriptions/listen`` (``acknowledged`` follows
its acknowledgement).

Errors: a handler that raises :class:`~toolwire.protocol.errors.ProtocolError` answers with
that error; anything else it raises is logged with its traceback and answered ``-32603``
(the server goes on), without the details; a result that is not an object, or that JSON
cannot carry, is ``-32603`` too. A plain ``def`` handler runs on a worker thread, as plain
tools do. An extension never takes a method answered already (the server's own, another
extension's): :meth:`Server.add_extension <toolwire.server.server.Server.add_extension>`
raises ``ValueError`` naming both, and leaves nothing of an extension whose ``install``
raised (see :mod:`toolwire.server.offering`).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from ..logs import get_logger
from ..protocol.errors import INTERNAL_ERROR, ProtocolError
from ..protocol.incoming import Request
from ..protocol.outgoing import Answer
from .dispatch import BOTH

if TYPE_CHECKING:
    from ..auth.server.resource import ProtectedResource
    from ..tools.tool import Tool
    from .context import Context
    from .server import Server
    from .session import ServerSession

log = get_logger("toolwire")

F = TypeVar("F", bound=Callable[..., Any])

_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
#: ``vendor-prefix/name``: the prefix as ``_meta`` key prefixes (dot-separated labels), the
#: name starting and ending with a letter or digit.
IDENTIFIER = re.compile(rf"{_LABEL}(?:\.{_LABEL})*/[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def check_identifier(identifier: object) -> str:
    """``identifier`` if it is a well-formed extension identifier, else ``ValueError`` saying
    what one looks like."""
    if type(identifier) is not str or not IDENTIFIER.fullmatch(identifier):
        raise ValueError(
            f"an extension identifier is 'vendor-prefix/name' with a reversed domain as the prefix "
            f"(e.g. 'com.example/greetings'), not {identifier!r}"
        )
    return identifier


class MethodCall:
    """One request to an extension's method, as its handler sees it."""

    __slots__ = ("_request", "_session", "extension")

    def __init__(self, session: ServerSession, request: Request, extension: str) -> None:
        self._session = session
        self._request = request
        #: The identifier of the extension whose method this is.
        self.extension = extension

    @property
    def method(self) -> str:
        return self._request.method

    @property
    def params(self) -> dict[str, Any]:
        """The request's params (an object; ``_meta`` included, when it has one)."""
        return self._request.params

    @property
    def version(self) -> str:
        """The protocol version the request speaks."""
        return self._request.codec.version

    @property
    def client_capabilities(self) -> dict[str, Any]:
        """What the client declared: in ``initialize`` (2025-11-25 and earlier), or on this
        request (2026-07-28)."""
        return self._request.capabilities

    @property
    def declared(self) -> dict[str, Any] | None:
        """The settings the client declared for this extension, or ``None`` if it did not."""
        extensions = self._request.capabilities.get("extensions")
        settings = extensions.get(self.extension) if type(extensions) is dict else None
        return settings if type(settings) is dict else None

    @property
    def caller(self) -> Any:
        """The caller's verified :class:`~toolwire.auth.Identity` (HTTP with ``auth=``), or ``None``."""
        return self._session.caller(self._request)

    @property
    def server(self) -> Server:
        return self._session.server

    def cacheable(self, result: dict[str, Any]) -> dict[str, Any]:
        """``result`` with the server's caching hints (``ttlMs``, ``cacheScope``) where the
        request's version has them (2026-07-28), as list and read results carry; unchanged
        in earlier versions."""
        identity = self._session.server.identity
        return self._request.codec.cacheable(result, identity.ttl_ms, identity.cache_scope)

    def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send notification ``method`` about this request (on its stream over HTTP);
        dropped once the request is answered or cancelled."""
        self._session.send_for(self._request, method, params)


class _Method:
    """What :func:`method` records on a handler."""

    __slots__ = ("declared", "eras", "name", "versions")

    def __init__(self, name: str, eras: Iterable[str], versions: Iterable[str] | None, declared: bool) -> None:
        self.name = name
        self.eras = eras
        self.versions = versions
        self.declared = declared


def method(
    name: str, *, eras: Iterable[str] = BOTH, versions: Iterable[str] | None = None, declared: bool = True
) -> Callable[[F], F]:
    """Make an :class:`Extension`'s method (``async def m(self, call) -> dict``, or a plain
    ``def``) the handler of requests ``name``, in ``eras`` (``"legacy"``, ``"modern"``) or
    only the protocol ``versions`` named. With ``declared`` (the default) a 2026-07-28
    request must declare the extension in its client capabilities (``-32021`` otherwise)."""

    def mark(handler: F) -> F:
        handler.__toolwire_method__ = _Method(name, eras, versions, declared)  # type: ignore[attr-defined]
        return handler

    return mark


class CallClaim:
    """An extension's part in one ``tools/call`` it took over (see :meth:`Extension.claim_call`).

    :meth:`begin` runs once the call's :class:`~toolwire.server.context.Context` exists,
    before the tool does. When the tool is done, :meth:`finish` (its result) or :meth:`fail`
    (the call's error) may answer in the call's place: returning ``True`` means the claim
    dealt with it and the call sends no answer of its own. A claim that is ``elsewhere``
    has handed the call to another process in :meth:`begin` (a task queue's worker): the
    tool does not run here, and the call sends no answer (guards see an empty result)."""

    #: Whether :meth:`begin` handed the call to another process.
    elsewhere = False

    async def begin(self, session: ServerSession, request: Request, tool: Tool, context: Context | None) -> None:
        """Before the tool runs."""

    async def finish(self, session: ServerSession, request: Request, tool: Tool | None, result: dict[str, Any]) -> bool:
        """The tool gave ``result`` (neutral): whether the claim took care of it."""
        return False

    async def fail(self, session: ServerSession, request: Request, error: ProtocolError) -> bool:
        """The call failed with ``error``: whether the claim took care of it."""
        return False


class Endpoint:
    """An HTTP endpoint serving the server, as a :class:`Document` that describes it sees it."""

    __slots__ = ("auth", "url", "versions")

    def __init__(self, url: str, versions: tuple[str, ...], auth: ProtectedResource | None) -> None:
        #: The endpoint's URL: the ``auth=`` resource's when it has one, else the scheme, ``Host``
        #: and path the request for the document came with.
        self.url = url
        #: The protocol versions it serves.
        self.versions = versions
        #: Its ``auth=`` (the protected resource every request needs a token for), or ``None``.
        self.auth = auth


class Document:
    """A public, read-only JSON document an extension serves over HTTP (:meth:`Extension.documents`).

    ``path``: relative (``"server-card"``) below the MCP endpoint's path (``/mcp/server-card``),
    or absolute (``"/.well-known/..."``). ``render(endpoint)`` gives the document (a JSON
    object) for an :class:`Endpoint`. It is served to anyone (no token asked, any origin),
    to ``GET`` and ``HEAD`` with ``media_type``, ``Cache-Control: public, max-age=<max_age>``
    and a strong ``ETag`` (``If-None-Match`` gets 304); ``OPTIONS`` answers CORS preflights.
    An exception from ``render`` is logged and answered 500."""

    __slots__ = ("max_age", "media_type", "path", "render")

    def __init__(
        self, path: str, media_type: str, render: Callable[[Endpoint], dict[str, Any]], max_age: int = 3600
    ) -> None:
        bare = path.lstrip("/")
        if not bare or bare.endswith("/") or "//" in path:
            raise ValueError(f"a document's path is 'name' or '/absolute/path', without a trailing slash: {path!r}")
        self.path = path
        self.media_type = media_type
        self.render = render
        self.max_age = max_age

    def served_at(self, endpoint_path: str) -> str:
        """The path it is served at, for an MCP endpoint at ``endpoint_path``."""
        if self.path.startswith("/"):
            return self.path
        return f"{endpoint_path.rstrip('/')}/{self.path}"


class Extension:
    """One extension a server offers; see the module's documentation.

    Subclass it, set :attr:`id`, and give what the extension has: ``settings``, handlers
    marked with :func:`method`, ``tool_definition``, ``install``."""

    #: The extension's identifier, ``vendor-prefix/name`` (``"com.example/greetings"``).
    id: str = ""

    def settings(self) -> dict[str, Any]:
        """What the server advertises under ``capabilities.extensions[id]`` (``{}``: no settings)."""
        return {}

    def capabilities(self, version: str) -> dict[str, Any]:
        """What this extension adds to the server's capabilities in protocol ``version``."""
        return {"extensions": {self.id: self.settings()}}

    def install(self, server: Server) -> None:
        """Put the extension in place on ``server`` (once, from :meth:`Server.add_extension`):
        by default, register the handlers marked with :func:`method`. Call it from an override."""
        register_methods(self, self.id, server)

    def mounted(self, prefix: str) -> Extension | None:
        """What a server that mounts this one's under ``prefix`` offers in its place, unless
        it offers this identifier itself (see :mod:`toolwire.server.mount`). By default, for
        an extension with methods, one of the same identifier, capabilities and methods
        (answered by this extension's handlers); ``None``: nothing."""
        if not any(getattr(handler, "__toolwire_method__", None) for _, handler in _methods(self)):
            return None
        from .mount import MountedExtension

        return MountedExtension(self)

    def mount_into(self, server: Server, prefix: str) -> Callable[[], None] | None:
        """Offer on ``server``, which mounts this one's under ``prefix``, what it offers
        there; how to take that back when it unmounts (``None``: nothing was offered). By
        default what :meth:`mounted` gives, unless ``server`` offers this identifier itself;
        raises what :meth:`Server.add_extension <toolwire.server.server.Server.add_extension>`
        raises (a method taken), with nothing offered."""
        if self.id in server.extensions:
            return None
        offered = self.mounted(prefix)
        if offered is None:
            return None
        server.add_extension(offered)
        from .offering import withdraw

        return lambda: withdraw(server, offered.id)

    def prefixed_definition(self, definition: dict[str, Any], prefix: str) -> dict[str, Any]:
        """A tool's definition holding this extension's fields, as a server that mounts this
        one's under ``prefix`` lists it (the mount prefixes resource URIs: fields naming
        one follow). By default unchanged."""
        return definition

    def tool_definition(self, tool: Tool) -> dict[str, Any] | None:
        """Fields to add to ``tool``'s definition (``_meta`` merged key by key), or ``None``."""
        return None

    def documents(self) -> Iterable[Document]:
        """The public documents it serves over HTTP beside the MCP endpoint (none by default)."""
        return ()

    def claim_call(self, request: Request, tool: Tool) -> CallClaim | None:
        """Whether this extension takes over a call of ``tool``: a :class:`CallClaim`, or
        ``None`` (most calls). Raise :class:`ProtocolError` to refuse the call instead."""
        return None

    def listen(
        self, session: ServerSession, request: Request, wanted: dict[str, Any], honoured: dict[str, Any]
    ) -> ProtocolError | None:
        """A 2026-07-28 ``subscriptions/listen`` asked for ``wanted``: add to ``honoured``
        what this extension will send on it; an error to refuse the subscription with."""
        return None

    def acknowledged(self, session: ServerSession, honoured: dict[str, Any]) -> None:
        """After a ``subscriptions/listen`` was acknowledged with ``honoured``: send what
        the subscriber should know at once (the tasks extension: where each task stands)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.id!r})"


def register_methods(source: object, extension: str, server: Server) -> None:
    """Answer on ``server`` the requests of the handlers of ``source`` marked with
    :func:`method`, as methods of ``extension``."""
    for _, handler in _methods(source):
        marked: _Method | None = getattr(handler, "__toolwire_method__", None)
        if marked is not None:
            server.dispatch.register(
                marked.name,
                _route(extension, handler),
                eras=marked.eras,
                versions=marked.versions,
                requires=extension if marked.declared else None,
            )


def _methods(source: object) -> list[tuple[str, Any]]:
    return [(name, member) for name, member in inspect.getmembers(source, callable) if not name.startswith("__")]


def overrides(extension: Extension, hook: str) -> bool:
    """Whether ``extension`` has hook ``hook`` of its own (the server calls only those)."""
    return getattr(type(extension), hook) is not getattr(Extension, hook)


def merge_definition(definition: dict[str, Any], fields: dict[str, Any]) -> dict[str, Any]:
    """``definition`` with ``fields`` added (``_meta`` merged key by key), as a new dict."""
    merged = {**definition, **fields}
    if "_meta" in fields and "_meta" in definition:
        merged["_meta"] = {**definition["_meta"], **fields["_meta"]}
    return merged


def _route(extension: str, handler: Callable[[MethodCall], Any]) -> Callable[[ServerSession, Request], None]:
    """The dispatch table's handler for an extension's method ``handler`` (a plain function
    runs on a worker thread, as plain tools do: it may block without holding up the loop)."""
    blocking = not inspect.iscoroutinefunction(handler)

    def start(session: ServerSession, request: Request) -> None:
        session.start(request, _answer(session, request, extension, handler, blocking))

    return start


async def _answer(
    session: ServerSession, request: Request, extension: str, handler: Callable[[MethodCall], Any], blocking: bool
) -> Answer | None:
    """The answer to ``request`` from ``handler``: its result, or ``-32603`` naming the method
    when it raises, returns something other than an object, or an object JSON cannot carry."""
    call = MethodCall(session, request, extension)
    try:
        if blocking:
            from ..tools.threads import run_sync_on

            result = await run_sync_on(session.loop, handler, call)
        else:
            result = handler(call)
        if inspect.isawaitable(result):
            result = await result
        if type(result) is not dict:
            raise TypeError(f"the handler of {request.method} returned {type(result).__name__}, not a dict")
        return session.connection.respond(request, result)
    except ProtocolError as exc:
        return session.connection.respond_error(request, exc)
    except Exception as exc:
        log.error("extension %s: %s failed", extension, request.method, exc_info=exc)
        failed = ProtocolError(INTERNAL_ERROR, f"Internal error: {request.method} failed (the server's log says why)")
        return session.connection.respond_error(request, failed)


__all__ = ["CallClaim", "Document", "Endpoint", "Extension", "MethodCall", "check_identifier", "method"]
