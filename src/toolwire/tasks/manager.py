"""Running tool calls as tasks, for one :class:`~toolwire.Server`, in both protocol eras.

Theory of operation
-------------------
A task is a ``tools/call`` answered early. The session runs the call as usual; when it is to
be a task, :meth:`TaskManager.create` writes a ``working`` record to the store (so that a
``tasks/get`` finds it the moment the client has the id), the session answers the request
with the task handle and lets go of the call, and the call's coroutine runs on in the
background. When it ends, :meth:`TaskManager.finish` (or :meth:`~TaskManager.fail`) stores
its result or its JSON-RPC error. The tool's :class:`~toolwire.Context` notices the task
and routes what it does through this manager: progress becomes the task's status message
(and, in 2025-11-25, ``notifications/progress`` with the task's ``related-task`` tag);
questions (elicitation, sampling, roots) put the task in ``input_required``. In 2025-11-25
a question is a request to the client, sent on the stream of a waiting ``tasks/result``
when there is one; in 2026-07-28 it is listed in ``tasks/get``'s ``inputRequests`` and
answered by ``tasks/update``.

Who may see a task: its owner (the authenticated caller that created it) or, when nothing
authenticated anyone, whoever holds its id (192 random bits). ``tasks/list`` shows an
authenticated caller its own tasks and anyone else the tasks of their own session. A task
of another caller, an unknown or an expired task are all "not found" (``-32602``): nothing
tells them apart.

A task that was running in a process that has since ended (killed, crashed, stopped) reads
as ``failed`` with a message saying it was interrupted, never as lost or forever working.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..logs import get_logger
from ..protocol import tokens
from ..protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, ProtocolError
from ..protocol.versions import META_RELATED_TASK
from .cursors import read_cursor, write_cursor
from .model import (
    CANCELLED,
    COMPLETED,
    FAILED,
    INPUT_REQUIRED,
    INTERRUPTED,
    QUEUED,
    RUNNER,
    WORKING,
    TaskRecord,
)
from .notices import keep_notice
from .store import MemoryTaskStore, TaskStore, TaskStoreBusy

if TYPE_CHECKING:
    from ..protocol.incoming import Request, RequestId
    from ..server.session import ServerSession
    from .queue import TaskQueue

log = get_logger("toolwire.tasks")

#: Told a 2026-07-28 task's whole state on each change of its status.
Watcher = Callable[[dict[str, Any]], None]
#: Asks the client the questions of a task running in another process (see TaskManager.wait).
Relay = Callable[[TaskRecord], Awaitable[None]]

NOT_FOUND = "Failed to retrieve task: Task not found (it never existed, expired, or belongs to another caller)"
#: Seconds between sweeps of expired tasks (done when a task is created).
PURGE_EVERY = 60.0


class LiveTask:
    """A task running in this process: its record as last written, the call it runs and
    what waits on it."""

    __slots__ = (
        "asked",
        "done",
        "inputs",
        "loop",
        "outbox",
        "record",
        "request",
        "runner",
        "sending",
        "session",
        "waiters",
        "watchers",
    )

    def __init__(self, record: TaskRecord, session: ServerSession, request: Request) -> None:
        self.record = record
        self.session = session
        self.request = request
        self.runner: asyncio.Task[Any] | None = asyncio.current_task()
        self.loop = asyncio.get_running_loop()
        self.done = asyncio.Event()
        #: 2026-07-28 questions waiting for ``tasks/update``, by key.
        self.inputs: dict[str, asyncio.Future[Any]] = {}
        self.asked = 0
        #: 2025-11-25 ``tasks/result`` requests waiting on it (their streams carry its questions).
        self.waiters: list[RequestId] = []
        #: 2026-07-28 ``subscriptions/listen`` streams told of its changes: callback(detailed task).
        self.watchers: dict[int, Watcher] = {}
        #: A worker's 2025-11-25 notifications for the client, not yet stored, and what stores them.
        self.outbox: list[dict[str, Any]] = []
        self.sending: asyncio.Task[None] | None = None

    @property
    def id(self) -> str:
        return self.record.id

    def related(self) -> RequestId | None:
        """The request whose stream the task's messages go on (a waiting ``tasks/result``)."""
        return self.waiters[-1] if self.waiters else None


class TaskManager:
    """Creates, runs, finds and ends the tasks of one server.

    ``store``: a :class:`~toolwire.tasks.TaskStore` (``None``: memory), or ``open_store``: a
    function that opens one at first use (and again after :meth:`close`, which closes what it
    opened; the server makes it from a ``redis://`` URL or a file path). ``ttl``: seconds a task is kept from its
    creation (a 2025-11-25 client may ask for less, not more; ``None``: until deleted).
    ``poll_interval``: seconds suggested between polls. ``max_active``: tasks one caller may
    have running at once here (more are refused with ``-32600``). ``queue``: a
    :class:`~toolwire.tasks.queue.TaskQueue` whose workers run the tasks (queue mode: see
    :mod:`toolwire.tasks.queue`), or ``None`` to run them here.
    """

    def __init__(
        self,
        store: TaskStore | None = None,
        *,
        open_store: Callable[[], TaskStore] | None = None,
        ttl: float | None = 3600.0,
        poll_interval: float = 1.0,
        max_active: int = 100,
        page_size: int = 50,
        queue: TaskQueue | None = None,
    ) -> None:
        if ttl is not None and not ttl > 0:
            raise ValueError("task ttl must be a number of seconds above 0, or None")
        if not poll_interval > 0:
            raise ValueError("task poll_interval must be a number of seconds above 0")
        self._store_option = store
        self._open_store = open_store
        self._store: TaskStore | None = None
        self.ttl_ms = None if ttl is None else int(ttl * 1000)
        self.poll_ms = max(1, int(poll_interval * 1000))
        self.max_active = max_active
        self.page_size = page_size
        self.queue = queue
        #: A worker's: questions of either era, and 2025-11-25 notifications, go through the
        #: store (its session has no client), for the replica whose ``tasks/result`` waits to
        #: relay (2025-11-25).
        self.asks_through_store = False
        self._live: dict[str, LiveTask] = {}
        self._purged = time.monotonic()
        self._notes: set[asyncio.Task[None]] = set()  # status messages being stored

    @property
    def store(self) -> TaskStore:
        """The store, opened at first use."""
        if self._store is None:
            if self._open_store is not None:
                self._store = self._open_store()
            else:
                self._store = self._store_option if self._store_option is not None else MemoryTaskStore()
        return self._store

    # -- creating and ending -------------------------------------------------------------------

    async def create(
        self, session: ServerSession, request: Request, tool: str, ttl_ms: int | None, runner: str = RUNNER
    ) -> LiveTask:
        """Store a new ``working`` task for ``request`` (durably, before it is announced) and
        tie it to the running call; ``runner``: who runs it (this process, or
        :data:`~toolwire.tasks.model.QUEUED`). ``ProtocolError`` ``-32600`` when the caller
        has ``max_active`` tasks running already, ``-32603`` when the store fails."""
        owner = session.caller_name(request)
        legacy = not request.codec.modern
        mine = owner if owner is not None else session.id
        active = sum(1 for live in self._live.values() if _key(live) == mine)
        if active >= self.max_active:
            raise ProtocolError(
                INVALID_REQUEST,
                f"Too many tasks: {active} of yours are running here already (at most {self.max_active}); "
                "wait for one to finish or cancel one",
            )
        if self.ttl_ms is not None:
            ttl_ms = self.ttl_ms if ttl_ms is None else min(ttl_ms, self.ttl_ms)
        record = TaskRecord(
            tokens.new_id(),
            tool,
            request.codec.version,
            owner=owner,
            session=session.id if legacy else None,
            ttl_ms=ttl_ms,
            poll_ms=self.poll_ms,
            runner=runner,
        )
        store = self.store
        try:
            if time.monotonic() - self._purged > PURGE_EVERY:
                self._purged = time.monotonic()
                await store.purge()
            await store.create(record)
        except Exception as exc:
            log.exception("storing a new task failed")
            raise ProtocolError(INTERNAL_ERROR, f"{_store_failed(exc)} (the call did not start)") from None
        live = LiveTask(record, session, request)
        self._live[record.id] = live
        return live

    def adopt(self, record: TaskRecord, session: ServerSession, request: Request) -> LiveTask:
        """Tie a stored task to the call that runs it here (a worker's, for a task that a
        replica stored and queued)."""
        live = LiveTask(record, session, request)
        self._live[record.id] = live
        return live

    def release(self, live: LiveTask) -> None:
        """Let go of a task that runs elsewhere from now on (queued, or handed back to the
        queue), leaving its record as it is."""
        self._live.pop(live.id, None)
        live.done.set()

    def created(self, live: LiveTask) -> dict[str, Any]:
        """The answer to the call that created it: the era's ``CreateTaskResult``."""
        codec = live.request.codec
        task = codec.task(live.record)
        return {"resultType": "task", **task} if codec.modern else {"task": task}

    async def finish(self, live: LiveTask, result: dict[str, Any]) -> None:
        """The call returned ``result`` (rendered for its version): ``completed``, or in
        2025-11-25 ``failed`` when it is an ``isError`` result. A task cancelled meanwhile
        stays cancelled."""
        failed = bool(result.get("isError")) and not live.request.codec.modern
        message = _text_of(result) if failed else None
        await self._end(live, FAILED if failed else COMPLETED, message, result=result)

    async def fail(self, live: LiveTask, error: ProtocolError) -> None:
        """The call ended with a JSON-RPC error: ``failed``, the error kept for the client."""
        await self._end(live, FAILED, error.message, error=error.to_dict())

    async def _end(
        self,
        live: LiveTask,
        status: str,
        message: str | None,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        if live.sending is not None:
            await live.sending  # its notifications are stored before its end, which relays them last

        def end(record: TaskRecord) -> bool:
            if record.terminal:
                return False
            record.status, record.message, record.result, record.error = status, message, result, error
            record.inputs = {}
            return True

        try:
            record = await self.store.update(live.id, end)
        except Exception:
            log.exception("could not store how task %s ended", live.id)
            record = live.record.copy()  # what waits on it here still learns it ended
            record.status, record.message, record.result = FAILED, "the task store failed", None
            record.error = {"code": INTERNAL_ERROR, "message": "Internal error: the task's end could not be stored"}
        self._forget(live, record)

    def _forget(self, live: LiveTask, record: TaskRecord | None) -> None:
        if record is not None:
            changed = record.status != live.record.status
            live.record = record
            if changed:
                self._announce(live)
        self._live.pop(live.id, None)
        for future in live.inputs.values():
            if not future.done():
                future.cancel()
        live.done.set()

    # -- finding -----------------------------------------------------------------------------

    async def find(self, session: ServerSession, request: Request) -> TaskRecord:
        """The task ``request`` names (``params.taskId``), if its caller may see it;
        ``-32602`` otherwise. A task whose process has died reads as failed."""
        task_id = request.params.get("taskId")
        if type(task_id) is not str:
            raise ProtocolError(INVALID_PARAMS, 'Invalid params: "taskId" must be a string')
        if not tokens.is_id(task_id):  # not one of ours: the store is not asked
            raise ProtocolError(INVALID_PARAMS, NOT_FOUND)
        try:
            record = await self.store.get(task_id)
        except Exception as exc:
            log.exception("reading task %s failed", task_id)
            raise ProtocolError(INTERNAL_ERROR, _store_failed(exc)) from None
        if record is None or (record.owner is not None and record.owner != session.caller_name(request)):
            raise ProtocolError(INVALID_PARAMS, NOT_FOUND)
        live = self._live.get(task_id)
        if live is not None:
            return record
        if not record.terminal and await self._runner_gone(record):
            record = await self._interrupted(record)
        return record

    async def _runner_gone(self, record: TaskRecord) -> bool:
        """Whether the process running ``record`` has ended (a store that cannot tell, or
        fails to: it has not)."""
        try:
            return await self.store.runner_gone(record.runner)
        except Exception:
            log.exception("checking the process of task %s failed", record.id)
            return False

    async def _interrupted(self, record: TaskRecord) -> TaskRecord:
        def interrupt(found: TaskRecord) -> bool:
            if found.terminal:
                return False
            found.status, found.message, found.inputs = FAILED, INTERRUPTED, {}
            found.error = {"code": INTERNAL_ERROR, "message": f"Internal error: the task was {INTERRUPTED}"}
            return True

        return await self.store.update(record.id, interrupt) or record

    async def page(self, session: ServerSession, request: Request) -> tuple[list[TaskRecord], str | None]:
        """A page of the caller's tasks (see the module) and the cursor of the next one."""
        cursor = request.params.get("cursor")
        after = None
        if cursor is not None:
            after = read_cursor(cursor)
        owner = session.caller_name(request)
        records = await self.store.page(owner, session.id if owner is None else None, after, self.page_size + 1)
        more = len(records) > self.page_size
        records = records[: self.page_size]
        listed = []
        for record in records:
            if not record.terminal and record.id not in self._live and await self._runner_gone(record):
                record = await self._interrupted(record)
            listed.append(record)
        next_cursor = write_cursor(records[-1]) if more else None
        return listed, next_cursor

    async def wait(self, record: TaskRecord, relay: Relay | None = None) -> TaskRecord:
        """The task once it has ended (2025-11-25 ``tasks/result``): at once when this process
        runs it, by polling the store when another one does (a worker), then handing each
        poll's record that has questions or notifications to ``relay``, which asks the client
        the questions and sends it the notifications."""
        live = self._live.get(record.id)
        if live is not None:
            await live.done.wait()
            return live.record
        while not record.terminal:
            if relay is not None and (record.inputs or record.notices):
                await relay(record)
            await asyncio.sleep(record.poll_ms / 1000)
            found = await self.store.get(record.id)
            if found is None:
                raise ProtocolError(INVALID_PARAMS, "Failed to retrieve task: Task has expired")
            gone = not found.terminal and await self._runner_gone(found)
            record = await self._interrupted(found) if gone else found
        if relay is not None and record.notices:
            await relay(record)  # the last ones, stored before its end
        return record

    def live(self, task_id: str) -> LiveTask | None:
        """The task ``task_id`` when it runs in this process."""
        return self._live.get(task_id)

    # -- cancelling and answering --------------------------------------------------------------

    async def cancel(self, record: TaskRecord) -> TaskRecord:
        """Move the task to ``cancelled`` (it stays so) and stop its work; the record after.
        A task that has ended already is left as it is."""

        def cancel(found: TaskRecord) -> bool:
            if found.terminal:
                return False
            found.status, found.message, found.inputs = CANCELLED, "The task was cancelled by request.", {}
            return True

        updated = await self.store.update(record.id, cancel) or record
        if self.queue is not None and (record.runner or "").startswith(QUEUED):
            try:
                await self.queue.cancel(record.id)  # removed if it waits; stopped where it runs
            except Exception:
                log.exception("telling the queue that task %s is cancelled failed", record.id)
        live = self._live.get(record.id)
        if live is not None:
            runner = live.runner
            self._forget(live, updated)
            if runner is not None and runner is not asyncio.current_task():
                runner.cancel()
        return updated

    async def answer(self, record: TaskRecord, responses: dict[str, Any]) -> None:
        """2026-07-28 ``tasks/update``: hand the answers to the questions they name; answers
        to anything not outstanding are ignored, as the extension says."""
        live = self._live.get(record.id)
        outstanding = {key for key in responses if key in record.inputs}
        if not outstanding:
            return

        def take(found: TaskRecord) -> bool:
            for key in outstanding:
                if found.inputs.pop(key, None) is not None:
                    found.answers[key] = responses[key]  # for a runner in another process
            if not found.inputs and found.status == INPUT_REQUIRED:
                found.status = WORKING
            return True

        updated = await self.store.update(record.id, take)
        if live is None:
            return
        if updated is not None:
            live.record = updated
        for key in outstanding:
            future = live.inputs.pop(key, None)
            if future is not None and not future.done():
                future.set_result(responses[key])

    # -- what a running task does --------------------------------------------------------------

    async def ask(
        self, live: LiveTask, kind: str, method: str, params: dict[str, Any], check: Callable[[Any], str | None]
    ) -> Any:
        """Ask the client ``method`` on the task's behalf and return its valid answer; the task
        is ``input_required`` meanwhile. 2025-11-25: a request to the client (``ClientRequestFailed``
        if it refuses or is gone). 2026-07-28: a question in ``tasks/get`` answered by
        ``tasks/update`` (an invalid answer is asked again under a new key)."""
        if not live.request.codec.modern and not self.asks_through_store:
            await self._set_status(live, INPUT_REQUIRED)
            tagged = {**params, "_meta": {META_RELATED_TASK: {"taskId": live.id}}}
            try:
                answer = await live.session.request_client(method, tagged, live.related())
            finally:
                if not live.record.terminal:
                    await self._set_status(live, WORKING)
            return answer
        while True:
            key = f"{kind}-{live.asked}"
            live.asked += 1
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            live.inputs[key] = future
            question = {"method": method, "params": params}

            def ask(found: TaskRecord, key: str = key, question: dict[str, Any] = question) -> bool:
                if found.terminal:
                    return False
                found.inputs[key] = question
                found.status = INPUT_REQUIRED
                return True

            updated = await self.store.update(live.id, ask)
            if updated is not None:
                live.record = updated
                self._announce(live)
            try:
                answer = await self._answer_to(live, key, future)
            finally:
                live.inputs.pop(key, None)
            if check(answer) is None:
                return answer

    def progressed(self, live: LiveTask, token: Any, progress: float, total: float | None, message: str | None) -> None:
        """The tool reported progress (from any thread): kept as the status message and, in
        2025-11-25 when the call asked for progress, sent as ``notifications/progress``."""
        codec = live.request.codec
        if token is not None and not codec.modern:
            self.notify(live, "notifications/progress", codec.progress(token, progress, total, message))
        text = message or (f"{progress:g} of {total:g}" if total else f"{progress:g}")
        live.loop.call_soon_threadsafe(self._note, live, text)

    def _note(self, live: LiveTask, text: str) -> None:
        note = live.loop.create_task(self.progress(live, text))
        self._notes.add(note)
        note.add_done_callback(self._notes.discard)

    async def _answer_to(self, live: LiveTask, key: str, future: asyncio.Future[Any]) -> Any:
        """The answer to question ``key``: given here (``future``) or, when ``tasks/update``
        reached another process sharing the store, found in the store at the poll interval.
        ``CancelledError`` when the task was cancelled (or is gone) meanwhile."""
        while True:
            try:
                return await asyncio.wait_for(asyncio.shield(future), live.record.poll_ms / 1000)
            except TimeoutError:
                pass
            found = await self.store.get(live.id)
            if found is None or found.terminal:
                if found is not None:
                    self._forget(live, found)
                raise asyncio.CancelledError
            if key in found.answers:
                return found.answers[key]

    async def progress(self, live: LiveTask, text: str) -> None:
        """Keep ``text`` as the task's status message."""

        def note(found: TaskRecord) -> bool:
            if found.terminal:
                return False
            found.message = text
            return True

        updated = await self.store.update(live.id, note)
        if updated is not None:
            live.record = updated
            self._stop_if_cancelled(live, updated)

    def _stop_if_cancelled(self, live: LiveTask, record: TaskRecord) -> None:
        """A task cancelled through another process sharing the store: stop its work here."""
        if record.status == CANCELLED and live.id in self._live:
            runner = live.runner
            self._forget(live, record)
            if runner is not None and runner is not asyncio.current_task():
                runner.cancel()

    def notify(self, live: LiveTask, method: str, params: dict[str, Any]) -> None:
        """2025-11-25: a notification about the task to its client, tagged with the task (from
        any thread). A worker's is kept in the task's ``notices`` for the replica that relays
        them (see :mod:`.notices`)."""
        if self.asks_through_store:
            keep_notice(self.store, live, method, params)
            return
        session = live.session
        tagged = {**params, "_meta": {**params.get("_meta", {}), META_RELATED_TASK: {"taskId": live.id}}}
        session.send(session.connection.notify(None, method, tagged), live.related())

    async def _set_status(self, live: LiveTask, status: str) -> None:
        def move(found: TaskRecord) -> bool:
            if found.terminal or found.status == status:
                return False
            found.status = status
            return True

        updated = await self.store.update(live.id, move)
        if updated is not None and updated.status != live.record.status:
            live.record = updated
            self._announce(live)

    def _announce(self, live: LiveTask) -> None:
        """A status change: 2025-11-25 ``notifications/tasks/status`` to the session that
        created it; 2026-07-28 the whole task to the streams that listen for it."""
        codec = live.request.codec
        if codec.modern:
            if live.watchers:
                detailed = codec.task(live.record, detailed=True)
                for watcher in list(live.watchers.values()):
                    watcher(detailed)
            return
        session = live.session
        params = codec.task(live.record)
        session.send(session.connection.notify(None, "notifications/tasks/status", params), live.related())

    def tell(self, task_id: str) -> None:
        """Tell the listeners of ``task_id`` where it stands now (a new listener's first news)."""
        live = self._live.get(task_id)
        if live is not None:
            self._announce(live)

    def watch(
        self, task_id: str, owner: str | None, callback: Callable[[dict[str, Any]], None]
    ) -> Callable[[], None] | None:
        """2026-07-28: call ``callback(task)`` on each status change of ``task_id`` while it runs
        here; its remover, or ``None`` when it does not run here or is not ``owner``'s."""
        live = self._live.get(task_id)
        if live is None or not live.request.codec.modern or live.record.owner not in (None, owner):
            return None
        key = id(callback)
        live.watchers[key] = callback

        def stop() -> None:
            live.watchers.pop(key, None)

        return stop

    # -- shutdown ------------------------------------------------------------------------------

    async def close(self, grace: float = 0.0) -> None:
        """Stop: tasks still running after ``grace`` seconds are cancelled and stored as
        interrupted; a store it opened is closed."""
        running = [live.runner for live in self._live.values() if live.runner is not None]
        if running and grace > 0:
            await asyncio.wait(running, timeout=grace)
        for live in list(self._live.values()):
            if live.runner is not None:
                live.runner.cancel()
            error = ProtocolError(INTERNAL_ERROR, f"Internal error: the task was {INTERRUPTED}")
            await self._end(live, FAILED, INTERRUPTED, error=error.to_dict())
        if running:
            await asyncio.gather(*running, return_exceptions=True)
        if self._store is not None and self._open_store is not None:
            await self._store.close()  # opened here: closed here (and opened again if used)
            self._store = None


def _store_failed(exc: Exception) -> str:
    """What the client is told of a store's failure: a busy store's own words, or the kind
    of error (its text may name files or hosts)."""
    if isinstance(exc, TaskStoreBusy):
        return f"Internal error: {exc}; try again"
    return f"Internal error: the task store failed ({type(exc).__name__})"


def _key(live: LiveTask) -> str:
    return live.record.owner if live.record.owner is not None else live.session.id


def _text_of(result: dict[str, Any]) -> str | None:
    for block in result.get("content") or ():
        if isinstance(block, dict) and block.get("type") == "text":
            return str(block.get("text"))
    return None
