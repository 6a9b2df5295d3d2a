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
                   enforces it, before any handler runs (see :attr:`Dispatch.legacy_only`)
``offered_by``     the server capability the method belongs to (``"resources"``...): a server
                   that does not declare it answers ``-32601``
``requires``       an extension a 2026-07-28 request must declare in its client capabilities
                   (``capabilities.extensions``), else ``-32021`` with ``requiredCapabilities``
=================  ===========================================================================

The session looks a request's method up once and applies the rules in that order (unknown,
not offered, not declared) before calling the handler. The standard methods are registered
by :mod:`toolwire.server.methods`; an extension registers its own the same way, with
:meth:`Dispatch.register`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..protocol.errors import METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY, ProtocolError

if TYPE_CHECKING:
    from ..protocol.connection import Request
    from .session import ServerSession

Handler = Callable[["ServerSession", "Request"], Any]

LEGACY = "legacy"
MODERN = "modern"
BOTH = frozenset({LEGACY, MODERN})


class Route:
    """How one method is answered; see the table in the module's documentation."""

    __slots__ = ("eras", "handler", "method", "offered_by", "requires")

    def __init__(
        self,
        method: str,
        handler: Handler | None,
        eras: frozenset[str],
        offered_by: str | None,
        requires: str | None,
    ) -> None:
        self.method = method
        self.handler = handler
        self.eras = eras
        self.offered_by = offered_by
        self.requires = requires

    def refusal(self, request: Request, capabilities: dict[str, Any]) -> ProtocolError | None:
        """Why ``request`` may not be answered here (``capabilities``: the server's), else
        ``None``. The era rule is the connection's, checked before."""
        if self.handler is None:
            return ProtocolError(METHOD_NOT_FOUND, f"Method not found: {self.method}")
        if self.offered_by is not None and self.offered_by not in capabilities:
            return ProtocolError(METHOD_NOT_FOUND, f"Method not found: this server offers no {self.offered_by}")
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


class Dispatch:
    """The methods a server answers, by name (see the module's documentation)."""

    def __init__(self, routes: Iterable[Route] = ()) -> None:
        self.routes: dict[str, Route] = {}
        #: Methods of one era only, for the connection to refuse in the other.
        self.legacy_only: frozenset[str] = frozenset()
        self.modern_only: frozenset[str] = frozenset()
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
    ) -> Route:
        """Answer ``method`` with ``handler(session, request)``, in ``eras`` (``"legacy"``,
        ``"modern"``), when the server declares capability ``offered_by`` and (2026-07-28)
        the request declares extension ``requires``. Replaces a route of the same method.
        ``ValueError`` for an era that does not exist."""
        eras = frozenset(eras)
        if not eras or not eras <= BOTH:
            raise ValueError(f"eras must be some of {sorted(BOTH)}, not {sorted(eras)}")
        route = Route(method, handler, eras, offered_by, requires)
        self._add(route)
        return route

    def get(self, method: str) -> Route | None:
        """The route of ``method``, or ``None``."""
        return self.routes.get(method)

    def copy(self) -> Dispatch:
        """A table of the same routes, to add to without changing this one."""
        return Dispatch(self.routes.values())

    def __contains__(self, method: object) -> bool:
        return method in self.routes

    def __len__(self) -> int:
        return len(self.routes)

    def _add(self, route: Route) -> None:
        self.routes[route.method] = route
        self.legacy_only = frozenset(m for m, r in self.routes.items() if r.eras == {LEGACY})
        self.modern_only = frozenset(m for m, r in self.routes.items() if r.eras == {MODERN})
