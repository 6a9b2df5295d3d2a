"""Serving one connection: dispatching its requests through the server's dispatch table.

A :class:`ServerSession` sits between a transport and a :class:`~toolwire.Server`. The
transport feeds it bytes; the session passes them through the connection's protocol state
machine and hands each request to the handler the server's dispatch table names for its
method (:mod:`.dispatch`; the standard ones in :mod:`.methods`: lists in :mod:`.lists`,
``tools/call`` in :mod:`.calls`, resources, prompts and completion in :mod:`.features`,
``subscriptions/listen`` in :mod:`.subscriptions`, an extension's where it says: ``tasks/*``
in :mod:`toolwire.tasks.methods`).
The session keeps what they share: sending, the tasks requests run in, cancellation,
questions to the client, change notifications, shutdown.

It runs each ``tools/call`` as a task of its own (the unit of concurrency and of cancellation), started at
once on Python 3.12+ so that a tool that does not wait answers without a trip around the
event loop (on 3.11 a transport may run a call in its request's own task instead: see
:meth:`ServerSession.handle_inline`). Answers go out through the ``write`` callable the
transport gave it.

A tool that fails never takes the session down: its exception becomes an ``isError`` result
(masked to a generic message when the server says so) and is logged to stderr with its
traceback; a protocol problem becomes the JSON-RPC error the specification prescribes.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import functools
import os
import sys
import threading
import types
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, Final

from ..logs import get_logger
from ..protocol.connection import ServerConnection
from ..protocol.errors import (
    INTERNAL_ERROR,
    METHOD_NOT_FOUND,
    ProtocolError,
)
from ..protocol.incoming import Cancelled, Request, RequestId, Response
from ..protocol.outgoing import Answer, Outgoing
from ..protocol.versions import META_SUBSCRIPTION_ID
from ..tools.tool import Tool
from .calls import ANSWER_CALL, call_tool
from .context import ClientRequestFailed, InputRequired
from .stepping import Rest
from .subscriptions import tell_list_changed, tell_resource_updated
from .unraised import FINISHED, awaited, boxed, unboxed

if TYPE_CHECKING:
    from ..auth.identity import Identity
    from .server import Server
    from .visibility import RuleSet

log = get_logger("toolwire")

#: Whether tasks can start eagerly (Python 3.12+), running their first step at once.
EAGER_TASKS: Final = sys.version_info >= (3, 12)
#: The most tool (or method) names a session remembers as waiting (names come from clients).
MAX_WAITED: Final = 1024
#: What running a queued call's first step reads, bound once: the compiled build reads a Final
#: name without looking it up (a global, a builtin, another module's attribute) per call.
_copy_context: Final = contextvars.copy_context
_next: Final = next
_boxed: Final = boxed
_FINISHED: Final = FINISHED
_COROUTINE: Final = types.CoroutineType

#: How a call whose work is its tool's own coroutine is answered (``calls.answer_call``):
#: ``finish(session, request, tool, value, raised)``, given what the coroutine returned or raised.
Finish = Callable[["ServerSession", Request, Any, Any, "Exception | InputRequired | None"], "Answer | None"]


def _called(request: Request, tool: Tool | None) -> Any:
    """What a call of ``tool`` (if registered) made by ``request`` is known by among those
    that waited: the tool's name (or the name it was called by), else the method."""
    if tool is not None:
        return tool.name
    return request.params.get("name") if request.method == "tools/call" else request.method


class ServerSession:
    """Serves ``connection`` for ``server``; ``write`` sends bytes to the peer.

    Must be created on the event loop it will run on. A transport
    with a channel per request (HTTP) passes ``route(message, related)`` instead of ``write``:
    ``message`` is the :class:`~toolwire.protocol.outgoing.Outgoing` message (it says what
    it is, and holds its bytes); ``related`` is the id of the client request it belongs to
    (its answer, its progress, a question asked on its behalf), or ``None`` for what
    belongs to none.
    ``listen=False`` (a session serving one stateless request) hears the server's changes
    only if the request is a ``subscriptions/listen``.
    """

    def __init__(
        self,
        server: Server,
        connection: ServerConnection,
        write: Callable[[bytes], None] | None = None,
        route: Callable[[Outgoing, RequestId | None], None] | None = None,
        listen: bool = True,
        id: str | None = None,
    ) -> None:
        if (write is None) == (route is None):
            raise ValueError("a session needs exactly one of write= and route=")
        #: Names this connection (an HTTP session's id, or a random one) in guards and records.
        self.id = id if id is not None else os.urandom(6).hex()
        #: Who the client is, as the transport keys it: over HTTP its address (through trusted
        #: proxies) or its authenticated caller; ``None`` elsewhere.
        self.peer: str | None = None
        #: The authenticated caller that opened the session (a legacy HTTP session with
        #: ``auth=``), whose visibility rules it follows; ``None`` elsewhere.
        self.owner: str | None = None
        #: This session's own visibility rules (see :mod:`.visibility`), once it has some.
        self.visibility: RuleSet | None = None
        #: Whether the session outlives its request (not a 2026-07-28 HTTP request's own).
        self.lasting = listen
        self.server = server
        self.connection = connection
        #: The server's dispatch table (method -> route), read once per request.
        self._routes = server.dispatch.routes
        #: The server's tools by name, enabled or not: its registry's own dict (``by_key``), for
        #: ``tools/call`` to look up without reading the server and its registry per call.
        self.tools: dict[str, Tool] = server.registry.by_key  # type: ignore[assignment]
        self._write = write
        self._route = route
        #: Whether messages go to one newline-delimited stream (several may leave in one write).
        self._stream = write is not None and connection.terminator == b"\n"
        #: Set by transports that can end a request's connection but keep its stream
        #: (resumable HTTP): ``closer(request_id)``; see :meth:`Context.close_stream`.
        self.stream_closer: Callable[[RequestId], None] | None = None
        self._loop = asyncio.get_running_loop()
        #: The loop the session runs on (tools that run on worker threads come back to it).
        self.loop = self._loop
        self._loop_thread = threading.get_ident()
        self._tasks: dict[RequestId, asyncio.Task[None]] = {}
        #: Calls run in their caller's task (see handle_inline): whether this session called
        #: them off (cancelled them) since.
        self._inline_calls: dict[RequestId, bool] = {}
        self._adopting: list[Coroutine[Any, Any, None]] | None = None
        #: Calls started and not yet run (Python 3.11), their ids in order: run by one task, see
        #: _run_queued. By request id: the request and its work.
        self._queued: dict[RequestId, tuple[Request, Coroutine[Any, Any, Any], Tool | None, Finish | None]] = {}
        self._queue: collections.deque[RequestId] = collections.deque()
        self._runner_due = False  # a task will run what is queued
        #: Tools (and methods) whose calls waited: theirs get a task of their own at once.
        self._waited: set[str] = set()
        #: Open 2026-07-28 subscriptions: by request id, the request and what it honours.
        self.subscriptions: dict[RequestId, tuple[Request, dict[str, Any]]] = {}
        #: Resource URIs a legacy client subscribed to with ``resources/subscribe``.
        self.resource_subscriptions: set[str] = set()
        self._waiting: dict[RequestId, asyncio.Future[Response]] = {}
        self._closed = False
        self._stop_listening: list[Callable[[], object]] = []
        #: What 2026-07-28 subscriptions watch (an extension's: tasks...), by subscription
        #: (request id): how to stop each.
        self._watches: dict[RequestId, list[Callable[[], None]]] = {}
        if listen:
            self.start_listening()

    def start_listening(self) -> None:
        """Hear the server's changes (lists, resource updates), to pass them on."""
        if self._stop_listening:
            return
        server = self.server
        self._stop_listening = [
            server.registry.on_change(lambda: self.list_changed("tools")),
            server.prompts.on_change(lambda: self.list_changed("prompts")),
            server.resources.on_change(lambda: self.list_changed("resources")),
            server.resource_templates.on_change(lambda: self.list_changed("resources")),
            server.on_resource_updated(self.resource_updated),
            server.visibility.on_change(self._caller_rules_changed),
        ]

    @property
    def idle(self) -> bool:
        """Whether nothing is going on: no call or question in flight, no subscription,
        no change listened to."""
        return (
            not (
                self._tasks
                or self._queued
                or self.subscriptions
                or self._waiting
                or self._stop_listening
                or self.connection.in_flight
            )
            and not self._closed
        )

    # -- input -----------------------------------------------------------------------------

    def feed(self, data: bytes) -> None:
        """Bytes from a newline-delimited stream (stdio): whole lines one at a time (see
        :meth:`_feed_lines`), a line split across reads the general way."""
        connection = self.connection
        lines = connection.whole_lines(data)
        if lines is None:
            self.handle(connection.receive_data(data))
        else:
            self._feed_lines(lines)

    def _feed_lines(self, lines: list[bytes]) -> None:
        """Act on whole lines in order, as :meth:`handle` acts on their events. On Python
        3.11, a ``tools/call`` that :func:`.calls.call_tool` would queue with the tool's own
        coroutine (no guards, visibility rules or extension taking calls; a tool called
        directly, its arguments taken as they are: :meth:`.DirectCall.takes`) is queued here,
        the same way, without its route: the stream's hot path."""
        connection = self.connection
        server = self.server
        route = self._routes.get("tools/call")
        direct = (
            not EAGER_TASKS
            and route is not None
            and route.handler is call_tool
            and not route.checked
            and server.guarded is None
            and not server.call_claimers
        )
        tools, queued, queue, waited = self.tools, self._queued, self._queue, self._waited
        pending: list[Any] = []  # the lines' events for handle, handed over before a call is queued here
        for line in lines:
            got = connection.receive_line(line)
            if type(got) is not Request:
                pending += got  # type: ignore[arg-type]  # the line's events
                continue
            request: Request = got
            if direct and request.method == "tools/call":  # call_tool's and start's checks, inlined
                params = request.params
                name: Any = params.get("name")
                arguments = params.get("arguments")
                try:
                    tool = tools.get(name)
                except TypeError:  # a name that cannot key a dict (a list...): call_tool refuses it
                    tool = None
                if tool is not None and type(arguments) is dict:
                    call = tool.direct
                    id = request.id
                    if (
                        call is not None
                        and tool.enabled
                        and (not waited or tool.name not in waited)
                        and id not in queued
                        and call.takes(arguments)
                    ):
                        if pending:
                            self.handle(pending)
                            pending = []
                        queued[id] = (request, call.handler(**arguments), tool, ANSWER_CALL)
                        queue.append(id)
                        continue
            pending.append(request)
        if pending:
            self.handle(pending)
        if queue and not self._runner_due:
            self._runner_due = True
            self._loop.create_task(self._run_queued())

    def feed_message(self, data: bytes) -> None:
        """One whole message (an HTTP body, an in-memory message)."""
        self.handle(self.connection.receive_message(data))

    def handle(self, events: list[Any]) -> None:
        """Act on events the connection produced (the transport may feed it directly)."""
        routes = self._routes
        for event in events:
            kind = type(event)
            if kind is Answer:
                self.send(event)
            elif kind is Request:
                request: Request = event  # typed: the compiled build reads its fields directly
                route = routes.get(request.method)  # the dispatch table: one look-up per request
                if route is None:
                    self.fail(request, ProtocolError(METHOD_NOT_FOUND, f"Method not found: {request.method}"))
                    continue
                handler = route.handler
                if route.checked:
                    refusal = route.refusal(request, self.server.identity.capabilities)
                    if refusal is not None:
                        self.fail(request, refusal)
                        continue
                try:
                    handler(self, request)  # type: ignore[misc]  # refusal() said it has one
                except Exception as exc:  # a check we lack costs this request only
                    log.exception("handling %s failed", request.method)
                    self.fail(request, ProtocolError(INTERNAL_ERROR, f"Internal error: {type(exc).__name__}"))
            elif kind is Cancelled:
                self._cancelled(event)
            else:
                future = self._waiting.get(event.id)
                if future is not None and not future.done():
                    future.set_result(event)

    def handle_inline(self, events: list[Any]) -> Coroutine[Any, Any, None] | None:
        """As :meth:`handle`, except that the first ``tools/call`` of a registered tool that
        cannot become a task is not started as a task: its work is returned, to be awaited
        by the caller's own task, which becomes the call's task (``current_task()``, the
        target of cancellation and deadlines; the session's own cancellations of it are
        taken back when the call ends). For Python 3.11, where tasks cannot start eagerly:
        it saves a task and a turn of the event loop per call. ``None`` if there is none."""
        adopted: list[Coroutine[Any, Any, None]] = []
        self._adopting = adopted
        try:
            self.handle(events)
        finally:
            self._adopting = None
        return adopted[0] if adopted else None

    # -- output ----------------------------------------------------------------------------

    def send(self, message: Outgoing | None, related: RequestId | None = None) -> None:
        """Send ``message`` (if any), from the loop's thread or any other; ``related`` is the
        client request it belongs to, if any."""
        if message is None or self._closed:
            return
        if threading.get_ident() != self._loop_thread:
            self._loop.call_soon_threadsafe(self.send, message, related)
        elif self._route is None:
            self._write(message.data)  # type: ignore[misc]
        else:
            self._route(message, related)

    def _send_here(self, message: Outgoing | None, related: RequestId | None) -> None:
        """:meth:`send`, from the loop's own thread (a call's answer, sent by its task)."""
        if message is None or self._closed:
            return
        if self._route is None:
            self._write(message.data)  # type: ignore[misc]
        else:
            self._route(message, related)

    def send_for(self, request: Request, method: str, params: dict[str, Any]) -> None:
        """A notification on behalf of ``request`` (dropped once it is finished or cancelled)."""
        self.send(self.connection.notify(request, method, params), request.id)

    async def request_client(self, method: str, params: dict[str, Any], related: RequestId | None = None) -> Any:
        """Send a request to the client (legacy era) on behalf of request ``related``, and
        wait for its result.

        :class:`ClientRequestFailed` if the client answers with an error or the connection closes.
        """
        if self._closed:
            raise ClientRequestFailed(f"cannot send {method}: the connection is closed")
        asked = self.connection.send_request(method, params)
        id = asked.id
        future: asyncio.Future[Response] = self._loop.create_future()
        self._waiting[id] = future
        self.send(asked, related)
        try:
            response = await future
        finally:
            self._waiting.pop(id, None)
            self.connection.forget_request(id)
        if response.error is not None:
            raise ClientRequestFailed(f"the client refused {method}: {response.error.get('message')}")
        return response.result

    def fail(self, request: Request, error: ProtocolError) -> None:
        """Answer ``request`` with ``error``."""
        self.send(self.connection.respond_error(request, error), request.id)

    # -- running requests ------------------------------------------------------------------------

    def start(
        self,
        request: Request,
        work: Coroutine[Any, Any, Any],
        tool: Tool | None = None,
        finish: Finish | None = None,
    ) -> None:
        """Run ``work`` as a task of its own (its own context, cancellable on its own);
        ``tool``: the registered tool, when ``request`` calls one. ``work`` gives the answer,
        or with ``finish`` (``work`` then being the tool's own coroutine) what
        ``finish(self, request, tool, value, raised)`` makes the answer of, in the same context.

        On Python 3.12 and later the task starts at once (``eager_start``), up to its first
        real wait: most tools finish without waiting, so they answer without a trip around
        the event loop. On 3.11 it starts at the loop's next turn, and the calls started
        until then share one task for as long as each finishes without waiting (see
        :meth:`_run_queued`). Either way the tool runs inside a task that is its own from
        its first wait on, in a context of its own: ``asyncio.timeout``, ``current_task()``
        and libraries built on them work from its first line.
        """
        adopting = self._adopting
        if adopting is not None and not adopting and self._may_run_inline(request, tool):
            adopting.append(self._finish(request, work, tool, finish))
            self._inline_calls[request.id] = False
            # With its loop given, current_task() skips get_running_loop(), which on Python
            # 3.11 makes a getpid() system call: one per request over HTTP.
            self._tasks[request.id] = asyncio.current_task(self._loop)  # type: ignore[assignment]
            return
        if EAGER_TASKS:
            task = asyncio.Task(self._finish(request, work, tool, finish), loop=self._loop, eager_start=True)  # type: ignore[call-arg]
            if not task.done() and request.task is None:
                self._tasks[request.id] = task
        else:
            what = _called(request, tool)
            if type(what) is not str or what in self._waited or request.id in self._queued:
                self._tasks[request.id] = self._loop.create_task(self._finish(request, work, tool, finish))
                return
            if type(work) is not _COROUTINE:  # a tool's invoke may give any awaitable
                work = awaited(work)
            self._queued[request.id] = (request, work, tool, finish)
            self._queue.append(request.id)
            if not self._runner_due:
                self._runner_due = True
                self._loop.create_task(self._run_queued())

    async def _run_queued(self) -> None:
        """Run the queued calls one after another in this one task, each in a context of
        its own, for as long as each finishes without waiting: the first that waits keeps
        the task (it is then its own: its cancellation and deadlines reach it alone), and
        what is still queued moves on to a new one. On Python 3.11, where a task cannot
        start at once, this saves a task and its scheduling per call. The tool (or method)
        of a call that waited gets a task of its own for its later calls (a plain function
        on a worker thread always waits). A call that fails outright is logged and the
        others run on. On a stream, the text answers of the calls that finish at once leave
        together, in one write, before anything else is sent and when the run ends."""
        task = asyncio.current_task(self._loop)
        assert task is not None
        queue, queued = self._queue, self._queued
        # On a stream, the text answers made at once, written together (before anything
        # else is sent, and when the loop ends): it takes several messages in one write.
        texts: list[bytes] | None = [] if self._stream else None
        while queue:
            id = queue.popleft()
            entry = queued.pop(id, None)
            if entry is None:
                continue  # called off before it ran
            request, work, tool, finish = entry
            # A call that can reach the session may look its task up from its first step (a
            # guard's deadline); a tool's own coroutine (finish: ANSWER_CALL) cannot, and is
            # found once it waits.
            known = finish is not ANSWER_CALL
            if known:
                self._tasks[id] = task
            context = _copy_context()
            box: list[Any] = []
            steps = _boxed(box, work)
            try:  # its first step, at once, in its own context; its end raises nothing (see .unraised)
                waiting = context.run(_next, steps, _FINISHED)
            except (Exception, InputRequired) as raised:
                self._write_texts(texts)
                if finish is None:
                    self._failed_outside(request)
                else:
                    self._finished(context, finish, request, tool, None, raised)
                if known:
                    self._tasks.pop(id, None)
                continue
            if waiting is _FINISHED:  # answered without waiting: what _finish does, without its coroutine
                value = box[0]
                if (
                    texts is not None
                    and finish is ANSWER_CALL
                    and type(value) is str
                    and tool.text_results  # type: ignore[union-attr]
                    and request.batch is None
                ):
                    try:  # answer_call's answer of a text, made at once (it needs no context)
                        data = self.connection.text_answer(request, value)
                    except Exception:
                        self._write_texts(texts)
                        self._failed_outside(request)
                    else:
                        if data is not None:
                            texts.append(data)
                else:
                    self._write_texts(texts)
                    if finish is None:
                        self._send_here(value, id)
                    else:  # _finished, inlined
                        try:
                            self._send_here(context.run(finish, self, request, tool, value, None), id)
                        except Exception:
                            self._failed_outside(request)
                if known and request.task is None:
                    self._tasks.pop(id, None)
                if not task.cancelling():
                    continue
                rest: Awaitable[Any] | None = None  # cancelled: the rest go on in another task
            else:
                if not known:  # found from its first wait on (one that could detach, a task, is found already)
                    self._tasks[id] = task
                rest = unboxed(Rest(steps, waiting, context), box)
                if len(self._waited) < MAX_WAITED:
                    self._waited.add(_called(request, tool))
            self._write_texts(texts)
            if queue:
                self._loop.create_task(self._run_queued())  # the rest go on without waiting for this one
            else:
                self._runner_due = False
            if rest is not None:
                await self._finish(request, rest, tool, finish)
            return
        self._write_texts(texts)
        self._runner_due = False

    def _write_texts(self, texts: list[bytes] | None) -> None:
        """Write the text answers :meth:`_run_queued` holds, in one piece (unless the
        session closed meanwhile)."""
        if texts:
            if not self._closed:
                self._write(b"".join(texts))  # type: ignore[misc]
            texts.clear()

    def _may_run_inline(self, request: Request, tool: Tool | None) -> bool:
        """Whether ``request``, a call of ``tool`` (if it is a ``tools/call`` of a registered
        one), can only end with its answer (it cannot detach as a task, which would outlive
        the caller's request)."""
        return tool is not None and tool.task is None and request.id not in self._inline_calls

    def caller(self, request: Request) -> Identity | None:
        """Who sent ``request``, when the transport verified it (HTTP with ``auth=``), which
        then also refused what the caller's scopes do not allow."""
        identity: Identity | None = request.auth
        return identity

    def caller_name(self, request: Request) -> str | None:
        """The name of who sent ``request`` (see :meth:`caller`), or ``None``."""
        caller = self.caller(request)
        return caller.name if caller is not None else None

    def task_of(self, id: RequestId) -> asyncio.Task[None] | None:
        """The task running request ``id``, once its work waited (``None`` before, and after)."""
        return self._tasks.get(id)

    def _finished(
        self,
        context: contextvars.Context,
        finish: Finish,
        request: Request,
        tool: Tool | None,
        value: Any,
        raised: Exception | InputRequired | None,
    ) -> None:
        """Send the answer ``finish`` makes, in ``context``, of a call whose tool's coroutine
        returned ``value`` or raised ``raised`` without waiting; what cannot be answered is
        logged and answered ``-32603`` (see :meth:`_failed_outside`)."""
        try:
            self._send_here(context.run(finish, self, request, tool, value, raised), request.id)
        except Exception:
            self._failed_outside(request)

    async def _finish(
        self, request: Request, work: Awaitable[Any], tool: Tool | None = None, finish: Finish | None = None
    ) -> None:
        try:
            if finish is None:
                answer = await work
            else:  # the tool's own coroutine: its answer made of what it returns or raises
                try:
                    value = await work
                except (Exception, InputRequired) as raised:
                    answer = finish(self, request, tool, None, raised)
                else:
                    answer = finish(self, request, tool, value, None)
            self._send_here(answer, request.id)
        except asyncio.CancelledError:
            # Cancelled by the client or at shutdown: nothing more is sent for it. A call run
            # inline takes back the cancellations this session made; others are its caller's.
            called_off = self._inline_calls.pop(request.id, None)
            if called_off is not None:
                task = asyncio.current_task(self._loop)
                if not called_off or task is None or task.uncancel() > 0:
                    raise
        except Exception:
            self._failed_outside(request)
        finally:
            self._inline_calls.pop(request.id, None)
            # A task's id may serve a newer request by now; so may a cancelled call's (the
            # client may reuse it at once), whose entry is then the newer call's task.
            if request.task is None and (
                not request.cancelled or self._tasks.get(request.id) is asyncio.current_task(self._loop)
            ):
                self._tasks.pop(request.id, None)

    def _failed_outside(self, request: Request) -> None:
        """``request``'s work raised past its own handling (its answer could not be made: a
        result JSON cannot carry, a guard's page...): logged with the traceback, and answered
        ``-32603`` naming the method rather than never. Called in the ``except`` block."""
        log.exception("answering %s failed", request.method)
        failed = ProtocolError(INTERNAL_ERROR, f"Internal error: {request.method} failed (the server's log says why)")
        self._send_here(self.connection.respond_error(request, failed), request.id)

    async def detach(self, request: Request, tool: str, ttl_ms: int | None, runner: str | None = None) -> None:
        """Make the call of ``request`` a task: store it, answer with its handle, and let the
        call run on without the request (no longer this session's to cancel or wait for).
        ``runner``: who runs it, when not this process (a queue's worker)."""
        tasks = self.server.tasks
        if runner is None:
            request.task = await tasks.create(self, request, tool, ttl_ms)
        else:
            request.task = await tasks.create(self, request, tool, ttl_ms, runner)
        self._tasks.pop(request.id, None)
        self.send(self.connection.respond(request, tasks.created(request.task)), request.id)

    # -- subscriptions and change notifications ------------------------------------------------

    def list_changed(self, kind: str, caller: str | None = None) -> None:
        """Tell the client the list of ``kind`` (tools, prompts, resources) changed: legacy
        clients always, modern ones on the subscriptions that asked for it. ``caller``: only
        what that authenticated caller opened (the session, or a subscription)."""
        if caller is not None:
            if self._on_loop(functools.partial(self.list_changed, caller=caller), kind):
                tell_list_changed(self, kind, caller)
        elif self._on_loop(self.list_changed, kind):
            tell_list_changed(self, kind, None)

    def _caller_rules_changed(self, kinds: frozenset[str], caller: str) -> None:
        for kind in sorted(kinds):
            self.list_changed(kind, caller)

    def resource_updated(self, uri: str) -> None:
        """Tell the client resource ``uri`` changed, if it subscribed to it (either era)."""
        if self._on_loop(self.resource_updated, uri):
            tell_resource_updated(self, uri)

    def _on_loop(self, callback: Callable[[str], None], argument: str) -> bool:
        """Whether the caller may go on here; from another thread, ``callback(argument)`` is
        moved onto the session's loop instead (and dropped once the session is gone)."""
        if self._closed or self._loop.is_closed():
            return False
        if threading.get_ident() == self._loop_thread:
            return True
        self._loop.call_soon_threadsafe(callback, argument)
        return False

    def _cancelled(self, event: Cancelled) -> None:
        if event.flush is not None:
            self.send(event.flush, event.request.id)
        id = event.request.id
        self.subscriptions.pop(id, None)
        self.unwatch(id)
        self._call_off(id)

    def watch(self, subscription: RequestId, stop: Callable[[], None]) -> None:
        """Call ``stop`` when ``subscription`` (a ``subscriptions/listen``) ends or the session closes."""
        self._watches.setdefault(subscription, []).append(stop)

    def unwatch(self, subscription: RequestId) -> None:
        """Stop what ``subscription`` watches (see :meth:`watch`)."""
        for stop in self._watches.pop(subscription, ()):
            stop()

    def cancel(self, id: RequestId, reason: str | None = None) -> None:
        """Cancel request ``id`` as the client's ``notifications/cancelled`` would (its
        transport saw the client go away): nothing more is sent for it."""
        event = self.connection.cancel(id, reason)
        if event is not None:
            self._cancelled(event)

    def _call_off(self, id: RequestId) -> None:
        """Cancel the call of request ``id``, if it runs (or drop it, if it has not started)."""
        entry = self._queued.pop(id, None)
        if entry is not None:
            entry[1].close()
            return
        task = self._tasks.get(id)
        if task is not None:
            if id in self._inline_calls:
                self._inline_calls[id] = True
            task.cancel()

    # -- shutdown --------------------------------------------------------------------------

    async def close(self, grace: float = 5.0) -> None:
        """Finish: the calls received, started or still queued (and those they start), get
        ``grace`` seconds to complete, then are cancelled; subscriptions end with their final
        response; waits on the client fail."""
        for stop in self._stop_listening:
            stop()
        for id in list(self._watches):
            self.unwatch(id)
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(ClientRequestFailed("the connection closed"))
        loop, current = self._loop, asyncio.current_task()
        deadline = loop.time() + grace
        while grace > 0 and (remaining := deadline - loop.time()) > 0:  # every call received gets the grace
            if self._queued:
                await asyncio.sleep(0)  # not started yet: the queue's runner starts them
                continue
            running = {task for task in self._tasks.values() if not task.done() and task is not current}
            if not running:
                break
            await asyncio.wait(running, timeout=remaining)
        for id in list(self._queued):
            self._call_off(id)
        pending = {id: task for id, task in self._tasks.items() if not task.done() and task is not current}
        for id in pending:
            self._call_off(id)
        # A call run in its caller's task (handle_inline) is not waited for: that task goes on
        # past the call (an HTTP request, whose stream ends only once this session has closed).
        await asyncio.gather(
            *{task for id, task in pending.items() if id not in self._inline_calls}, return_exceptions=True
        )
        for request, _ in list(self.subscriptions.values()):
            self.send(self.connection.respond(request, {"_meta": {META_SUBSCRIPTION_ID: request.id}}), request.id)
        self.subscriptions.clear()
        self._closed = True
