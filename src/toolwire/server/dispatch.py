"""The dispatch table: every method a server answers, and the rules of who may call it.

Theory of operation
-------------------
One :class:`Dispatch` per server holds a :class:`Route` per method. A route says:

=================  ===========================================================================
``handler``        ``handler(session, request)``: starts answering (at once, or in a task
                   through :meth:`~toolwire.server.session.ServerSession.start`); ``None`` for
                   a method the protocol core answers itself (``initialize``, ``ping``,
                   ``logging/setLevel``, ``server/discover``)
``eras``           the eras the method exists in (``"legacy"``: 2025-11-25 and earlier,
                   ``"modern"``: 2026-07-28); the other era gets ``-32601``. The connection
                   enforces it, before any handler runs (see :attr:`Dispatch.legacy_only`),
                   except for a route of named ``versions``, which refuses the others itself
``offered_by``     the server capability the method belongs to (``"resources"``...): a server
                   that does not declare it answers ``-32601``
``versions``       the protocol versions the method exists in, where that is narrower than its
                   eras (``None``: all of them); another version gets ``-32601``
``requires``       an extension a 2026-07-28 request must declare in its client capabilities
                   (``capabilities.extensions``), else ``-32021`` with ``requiredCapabilities``
``missing``        what ``-32601`` adds when the method does not exist in a request's version
                   (``"tasks/get carries the result"``)
``owner``          the extension whose method it is (its identifier), or ``""``: the server's
                   own (the standard methods, and those a program registers itself)
=================  ===========================================================================

The session looks a request's method up once and applies the rules in that order (unknown,
not offered, not in this version, not declared) before calling the handler. The standard methods are registered
by :mod:`toolwire.server.methods`; an extension registers its own the same way, with
:meth:`Dispatch.register` (see :mod:`toolwire.server.extensions`). One owner never takes
another's method: an extension cannot replace ``tools/call`` or another extension's method.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..protocol.errors import METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY, ProtocolError
from ..protocol.versions import MODERN_VERSIONS, SUPPORTED_VERSIONS

if TYPE_CHECKING:
    from ..protocol.incoming import Request
    from .session import ServerSession

Handler = Callable[["ServerSession", "Request"], Any]

LEGACY = "legacy"
MODERN = "modern"
BOTH = frozenset({LEGACY, MODERN})


class Route:
    """How one method is answered; see the table in the module's documentation."""

    __slots__ = ("checked", "eras", "handler", "method", "missing", "offered_by", "owner", "requires", "versions")

    def __init__(
        self,
        method: str,
        handler: Handler | None,
        eras: frozenset[str],
        offered_by: str | None = None,
        requires: str | None = None,
        versions: frozenset[str] | None = None,
        missing: str | None = None,
        owner: str = "",
    ) -> None:
        self.method = method
        self.owner = owner
        self.handler = handler
        self.eras = eras
        self.offered_by = offered_by
        self.requires = requires
        self.versions = versions
        self.missing = missing
        #: Whether :meth:`refusal` can refuse anything (most routes: no, and it is not called).
        self.checked = handler is None or offered_by is not None or requires is not None or versions is not None

    def refusal(self, request: Request, capabilities: dict[str, Any]) -> ProtocolError | None:
        """Why ``request`` may not be answered here (``capabilities``: the server's), else
        ``None``. The era rule is the connection's, checked before."""
        if self.handler is None:
            return ProtocolError(METHOD_NOT_FOUND, f"Method not found: {self.method}")
        if self.offered_by is not None and self.offered_by not in capabilities:
            return ProtocolError(METHOD_NOT_FOUND, f"Method not found: this server offers no {self.offered_by}")
        if self.versions is not None and request.codec.version not in self.versions:
            version = request.codec.version
            why = f" ({self.missing})" if self.missing else ""
            return ProtocolError(METHOD_NOT_FOUND, f"Method not found: {self.method} does not exist in {version}{why}")
        required = self.requires
        if required is not None and request.codec.modern and not declares(request, required):
            return extension_missing(
                required,
                f"{self.method} needs the {required} extension declared in the request's client capabilities",
            )
        return None

    def __repr__(self) -> str:
        return f"Route({self.method!r}, eras={sorted(self.eras)})"


def declares(request: Request, extension: str) -> bool:
    """Whether ``request``'s client capabilities declare ``extension``."""
    extensions = request.capabilities.get("extensions")
    return type(extensions) is dict and extension in extensions


def extension_missing(extension: str, why: str) -> ProtocolError:
    """``-32021`` for a request that needed ``extension`` undeclared (``why`` says what needed
    it), with the ``requiredCapabilities`` a client reads to declare it."""
    return ProtocolError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Missing required client capability: {why}",
        {"requiredCapabilities": {"extensions": {extension: {}}}},
    )


def whose(owner: str) -> str:
    """Who ``owner`` (a route's) is, in words."""
    return f"the extension {owner!r}" if owner else "the server itself"


class Dispatch:
    """The methods a server answers, by name (see the module's documentation)."""

    def __init__(self, routes: Iterable[Route] = ()) -> None:
        self.routes: dict[str, Route] = {}
        #: Methods of one era only, for the connection to refuse in the other.
        self.legacy_only: frozenset[str] = frozenset()
        self.modern_only: frozenset[str] = frozenset()
        #: The extension being installed (``Server.add_extension``): the owner of the routes
        #: registered meanwhile; ``""`` otherwise.
        self.installing = ""
        for route in routes:
            self._add(route)

    def register(
        self,
        method: str,
        handler: Handler | None,
        *,
        eras: Iterable[str] = BOTH,
        offered_by: str | None = None,
        requires: str | None = None,
        versions: Iterable[str] | None = None,
        missing: str | None = None,
        owner: str | None = None,
    ) -> Route:
        """Answer ``method`` with ``handler(session, request)``, in ``eras`` (``"legacy"``,
        ``"modern"``) or only the protocol ``versions`` named (the eras then follow from
        them; ``missing`` is what the refusal of another version adds), when the server
        declares capability ``offered_by`` and (2026-07-28) the request declares extension
        ``requires``. ``owner``: the extension whose method it is (``None``: the one being
        installed, else the server's own). Replaces a route of the same method and owner.
        ``ValueError`` for an era or a version that does not exist, or a method another
        owner answers (naming both)."""
        owner = self.installing if owner is None else owner
        existing = self.routes.get(method)
        if existing is not None and existing.owner != owner:
            raise ValueError(f"{whose(owner)} cannot answer {method}: {whose(existing.owner)} does")
        allowed: frozenset[str] | None = None
        if versions is not None:
            allowed = frozenset(versions)
            unknown = allowed - set(SUPPORTED_VERSIONS)
            if not allowed or unknown:
                raise ValueError(f"versions must be some of {list(SUPPORTED_VERSIONS)}, not {sorted(allowed)}")
            eras = {MODERN if version in MODERN_VERSIONS else LEGACY for version in allowed}
        eras = frozenset(eras)
        if not eras or not eras <= BOTH:
            raise ValueError(f"eras must be some of {sorted(BOTH)}, not {sorted(eras)}")
        route = Route(method, handler, eras, offered_by, requires, allowed, missing, owner)
        self._add(route)
        return route

    def get(self, method: str) -> Route | None:
        """The route of ``method``, or ``None``."""
        return self.routes.get(method)

    def remove(self, method: str) -> None:
        """Stop answering ``method`` (``-32601`` from now on); nothing if it had no route."""
        if self.routes.pop(method, None) is not None:
            self._eras_changed()

    def remove_owned(self, owner: str) -> None:
        """Stop answering the methods of extension ``owner``."""
        for method in [method for method, route in self.routes.items() if route.owner == owner]:
            self.remove(method)

    def restore(self, routes: dict[str, Route]) -> None:
        """Answer exactly ``routes`` again (a copy of :attr:`routes` taken before)."""
        self.routes.clear()
        self.routes.update(routes)
        self._eras_changed()

    def copy(self) -> Dispatch:
        """A table of the same routes, to add to without changing this one."""
        return Dispatch(self.routes.values())

    def __contains__(self, method: object) -> bool:
        return method in self.routes

    def __len__(self) -> int:
        return len(self.routes)

    def _add(self, route: Route) -> None:
        self.routes[route.method] = route
        self._eras_changed()

    def _eras_changed(self) -> None:
        # A route of named versions refuses the others itself, saying why (its ``missing``).
        self.legacy_only = frozenset(m for m, r in self.routes.items() if r.eras == {LEGACY} and r.versions is None)
        self.modern_only = frozenset(m for m, r in self.routes.items() if r.eras == {MODERN} and r.versions is None)
