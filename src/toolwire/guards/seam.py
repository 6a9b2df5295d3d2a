"""The one seam around every request that runs application code.

A *guard* is an async callable ``guard(call, next)``: it sees the request as a :class:`Call`
(method, tool or resource, arguments, caller, client, session, era), may refuse it, and
otherwise awaits ``next(call)`` for the result, which it may look at or replace::

    async def timing(call: Call, next: Next) -> dict[str, Any]:
        started = time.monotonic()
        try:
            return await next(call)
        finally:
            print(call.method, call.name, time.monotonic() - started)

    server = Server("demo", guards=[timing])

Guards run, in the order given (those marked ``outermost``, such as the audit, first; then
the built-in limits; then the others), around ``tools/call``, ``resources/read``, ``prompts/get``
and ``completion/complete`` in every protocol version and over every transport: the session
calls :func:`run` and nothing else grows hooks of its own. The protocol's own requests
(``initialize``, ``ping``, ``server/discover``, ``logging/setLevel``, subscriptions) do not
pass through guards. List requests (``tools/list``, ``resources/list``,
``resources/templates/list``, ``prompts/list``) pass through the guards marked
:func:`lists_too` only (a guard written for calls need not expect them): the ``Call`` has no
name and no arguments, and its result is the page as a dict (``{"tools": [...], ...}``),
which the guard may log, or filter and return. A server without such a guard answers lists
from its encoded pages as before.

The result is the method's result as a dict: for ``tools/call`` a ``CallToolResult``
(``content``, ``isError``, ``structuredContent``), an execution error the model reads when
``isError`` is true. A guard refuses a tool call by returning :func:`refusal` (the model reads
it), or any request by raising :class:`~toolwire.ProtocolError` (a JSON-RPC error). Any other
exception a guard raises is logged and answered as ``-32603`` (:func:`failed`), never left
unanswered. With no guards, none of this costs anything: the session skips the seam.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..logs import get_logger
from ..protocol.errors import INTERNAL_ERROR, ProtocolError
from ..tools.results import error_result

if TYPE_CHECKING:
    import asyncio

    from ..auth.identity import Identity
    from ..protocol.incoming import Request, RequestId
    from ..tools.tool import Tool

Result = dict[str, Any]
Next = Callable[["Call"], Awaitable[Result]]
Guard = Callable[["Call", Next], Awaitable[Result]]
G = TypeVar("G")


class Session(Protocol):
    """What guards see of the session a request came on (a server's
    :class:`~toolwire.server.session.ServerSession`)."""

    #: The connection or HTTP session's id; the client's address, when it has one.
    id: str
    peer: str | None

    def caller(self, request: Request) -> Identity | None:
        """Who sent ``request``, when the transport verified it."""

    def task_of(self, id: RequestId) -> asyncio.Task[None] | None:
        """The asyncio task running request ``id``, once its work waited."""


class Call:
    """One request as guards see it. ``name``: the tool, prompt or resource URI (completion:
    what is completed); ``arguments``: as the client sent them (not yet validated: a guard
    must not trust their types); ``tool``: the registered tool a ``tools/call`` names, if any.
    ``extra``: a dict for guards to leave notes for each other."""

    __slots__ = ("_work", "arguments", "extra", "method", "name", "request", "session", "tool")

    def __init__(
        self,
        session: Session,
        request: Request,
        name: str | None,
        arguments: dict[str, Any] | None,
        work: Callable[[], Awaitable[Result]],
        tool: Tool | None = None,
    ) -> None:
        self.session = session
        self.request = request
        self.method = request.method
        self.name = name
        self.arguments = arguments
        self.tool = tool
        self.extra: dict[str, Any] = {}
        self._work = work

    @property
    def identity(self) -> Identity | None:
        """Who is calling, when the transport authenticated them (else ``None``)."""
        return self.session.caller(self.request)

    @property
    def caller(self) -> str | None:
        """The caller's name (the token's subject, else its client), or ``None``."""
        identity = self.session.caller(self.request)
        return identity.name if identity is not None else None

    @property
    def client(self) -> dict[str, Any] | None:
        """The client's ``clientInfo`` (name, version), when it gave one."""
        info = self.request.client_info
        return info if isinstance(info, dict) else None

    @property
    def session_id(self) -> str:
        """The connection or HTTP session the request came on."""
        return self.session.id

    @property
    def request_id(self) -> str | int:
        return self.request.id

    @property
    def version(self) -> str:
        """The protocol version the request speaks."""
        return self.request.codec.version

    @property
    def meta(self) -> dict[str, Any]:
        """The request's ``_meta`` (empty when it has none)."""
        meta = self.request.params.get("_meta")
        return meta if isinstance(meta, dict) else {}

    @property
    def subject(self) -> str:
        """``"tools/call echo"``, ``"resources/read file:///x"``: for messages and records."""
        return f"{self.method} {self.name}" if self.name is not None else self.method

    def __repr__(self) -> str:
        return f"Call({self.subject!r}, session={self.session_id!r})"


def lists_too(guard: G) -> G:
    """Mark ``guard`` as one that also sees list requests (see the module's documentation);
    returns it, so it serves as a decorator."""
    guard.sees_lists = True  # type: ignore[attr-defined]
    return guard


def sees_lists(guard: Guard) -> bool:
    """Whether ``guard`` was marked with :func:`lists_too` (or has ``sees_lists = True``)."""
    return bool(getattr(guard, "sees_lists", False))


def chain(guards: Sequence[Guard]) -> Next | None:
    """The guards composed into one handler, outermost first (``None`` for no guards)."""
    if not guards:
        return None
    handler: Next = _innermost
    for guard in reversed(guards):
        handler = _link(guard, handler)
    return handler


def _innermost(call: Call) -> Awaitable[Result]:
    return call._work()


def _link(guard: Guard, following: Next) -> Next:
    def handle(call: Call) -> Awaitable[Result]:  # no coroutine of its own: one frame less per guard
        return guard(call, following)

    return handle


class Refusal(dict[str, Any]):
    """A ``tools/call`` result by which a guard refused the call (an ``isError`` result);
    ``kind`` says why, for records: ``"refused"``, ``"timeout"``, ``"busy"``, ``"too_large"``..."""

    kind = "refused"


def refusal(message: str, kind: str = "refused") -> Result:
    """A ``tools/call`` result refusing the call: an execution error the model reads."""
    refused = Refusal(error_result(message))
    refused.kind = kind
    return refused


async def run_guarded(guarded: Next, call: Call) -> Result:
    """``guarded(call)``, where an exception other than a ``ProtocolError`` becomes the
    ``-32603`` of :func:`failed` (the server goes on serving)."""
    try:
        return await guarded(call)
    except ProtocolError:
        raise
    except Exception as exc:
        raise failed(call, exc) from None


def failed(call: Call, error: Exception) -> ProtocolError:
    """The answer to ``call`` when a guard (or what it wraps) raised ``error``, which is not a
    ``ProtocolError``: logged with its traceback, told as ``-32603`` by its kind only (its text
    may name files or hosts)."""
    get_logger("toolwire").error("answering %s %s failed", call.method, call.name or "", exc_info=error)
    return ProtocolError(
        INTERNAL_ERROR,
        f"Internal error: {type(error).__name__} while answering this {call.method} (the server's log has the details)",
    )


def describe(request: Request) -> tuple[str | None, dict[str, Any] | None]:
    """A request's name and arguments as a :class:`Call` shows them."""
    params = request.params
    name = params.get("name")
    if request.method == "resources/read":
        name = params.get("uri")
    elif request.method == "completion/complete":
        ref = params.get("ref")
        name = (ref.get("name") or ref.get("uri")) if isinstance(ref, dict) else None
    arguments = params.get("arguments")
    return (name if isinstance(name, str) else None), (arguments if isinstance(arguments, dict) else None)
