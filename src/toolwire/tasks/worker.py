"""A worker: runs the tasks that replicas in queue mode stored and queued, with the same
server file's tools (``toolwire worker FILE --redis URL --queue URL``,
:meth:`~toolwire.Server.run_worker`).

Theory of operation
-------------------
A replica stores a task whose runner is :data:`~toolwire.tasks.model.QUEUED` and queues a
:class:`~toolwire.tasks.queue.Job` naming it. The worker takes the job, reads the task from
the shared store and runs the tool in a session of its own that has no client: everything
the tool does goes through the task store, as it would from any replica (progress becomes
the status message; in 2025-11-25 its progress and log notifications are kept in the task's
``notices``, which the replica whose ``tasks/result`` waits sends its client; a question, in
either era, an entry of the task's ``inputs`` answered through the store: 2026-07-28
``tasks/update``, 2025-11-25 the replica whose ``tasks/result`` waits asks its client and
stores the answer), and the result or error is stored for whichever replica the client
polls. The job carries the caller's identity and log level: the tool and the guards see
who called, as in the replica.

Delivery is at least once; a task never runs twice to completion:

- a job whose task is unknown (expired) or has ended (its result stored, or cancelled) is
  dropped without running;
- a job whose task a worker had started (its runner names that worker) was delivered again
  because that worker died: it runs again, unless its tool declares ``idempotent=False``
  (the ``idempotentHint`` annotation), when the task fails saying so;
- ``tasks/cancel`` cancels the job through the queue: the tool's coroutine is cancelled;
- on SIGTERM (:meth:`TaskWorker.run`'s ``stopping``) it takes no more jobs, lets those
  running finish for ``grace`` seconds and hands the rest back to the queue (their runner
  is :data:`~toolwire.tasks.model.QUEUED` again, so that the next worker runs them anew).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..auth.identity import Identity
from ..guards.seam import Call, chain, run_guarded
from ..logs import get_logger
from ..protocol.codec import codec_for
from ..protocol.errors import INTERNAL_ERROR, ProtocolError
from ..protocol.incoming import Request
from .extension import TaskClaim
from .model import QUEUED, TaskRecord
from .queue import Job, TaskQueue, job_span

if TYPE_CHECKING:
    from ..server.context import Context
    from ..server.server import Server
    from ..server.session import ServerSession
    from ..tools.tool import Tool

log = get_logger("toolwire.tasks")


class TaskWorker:
    """Runs ``server``'s queued tasks from ``queue``, ``concurrency`` at once."""

    def __init__(self, server: Server, queue: TaskQueue, concurrency: int = 10, grace: float = 30.0) -> None:
        self.server = server
        self.queue = queue
        self.concurrency = concurrency
        self.grace = grace
        self._session: ServerSession | None = None
        self._stopping = asyncio.Event()
        watching = [
            guard
            for guard in server.guards
            if getattr(guard, "outermost", False) or getattr(guard, "applies_tool_limits", False)
        ]
        self._guarded = chain(watching)

    async def run(self, stopping: asyncio.Event) -> None:
        """Take and run jobs until ``stopping`` is set (then as the module says)."""
        self._session = self.server.open_session(lambda data: None)  # no client: all goes through the store
        self._stopping = stopping
        self.server.tasks.asks_through_store = True
        log.info("worker %s takes the tasks of %s", self.queue.name, self.server.name)
        await self.queue.serve(self._run, self.concurrency, stopping, self.grace)

    async def _run(self, job: Job) -> None:
        tasks = self.server.tasks
        record = await tasks.store.get(job.task_id)
        if record is None or record.terminal:
            log.info("task %s is %s: its job is dropped", job.task_id, "gone" if record is None else record.status)
            return
        tool = self.server.registry.by_key.get(job.tool)
        session = self._session
        assert session is not None
        request = _request(job)
        if tool is None:
            await self._fail(record, session, request, f"tool {job.tool!r} is not served by this worker")
            return
        started_by = (record.runner or QUEUED).removeprefix(QUEUED)
        if started_by and (tool.annotations or {}).get("idempotentHint") is False:
            await self._fail(
                record,
                session,
                request,
                f"the worker running it ({started_by}) stopped before it finished, and tool {tool.name!r} "
                "is declared idempotent=False, so it is not run again",
            )
            return
        runner = QUEUED + self.queue.name

        def take(found: TaskRecord) -> bool:
            if found.terminal:
                return False
            found.runner = runner
            return True

        record = await tasks.store.update(job.task_id, take) or record
        if record.terminal:
            return
        live = tasks.adopt(record, session, request)
        request.task = live
        with job_span(job):
            try:
                await self._call(session, request, tool, job.arguments)
            except asyncio.CancelledError:
                if self._stopping.is_set():  # handed back (a task cancelled meanwhile stays so)
                    await self._hand_back(live.id)
                tasks.release(live)  # otherwise cancelled by tasks/cancel, which stored it so
                raise

    async def _call(self, session: ServerSession, request: Request, tool: Tool, arguments: dict[str, Any]) -> None:
        """Run the call of a queued task to its stored end, as a replica would have run it,
        within the server's observing guards (the audit, telemetry: those marked
        ``outermost``) and its tool limits (timeouts, concurrency); the other guards ran in
        the replica when the call was queued."""
        from ..server.calls import run_tool
        from ..tools.validation import ArgumentsInvalid

        claim = _AdoptedClaim(None)
        try:
            arguments = tool.validate_arguments(arguments)
        except ArgumentsInvalid as exc:  # checked by the replica already: a tool that changed since
            await claim.finish(session, request, tool, request.codec.invalid_arguments(str(exc)))
            return
        if self._guarded is None:
            await run_tool(session, request, tool, arguments, claim, answer=True)
            return
        call = Call(
            session, request, tool.name, arguments, lambda: run_tool(session, request, tool, arguments, claim), tool
        )
        try:
            result = await run_guarded(self._guarded, call)
        except ProtocolError as exc:
            await claim.fail(session, request, exc)
            return
        await claim.finish(session, request, tool, result)

    async def _hand_back(self, task_id: str) -> None:
        def queued(found: TaskRecord) -> bool:
            found.runner = QUEUED
            return not found.terminal

        try:
            await self.server.tasks.store.update(task_id, queued)
        except Exception:
            log.exception("handing task %s back to the queue failed", task_id)

    async def _fail(self, record: TaskRecord, session: ServerSession, request: Request, why: str) -> None:
        log.error("task %s failed: %s", record.id, why)
        tasks = self.server.tasks
        live = tasks.adopt(record, session, request)
        await tasks.fail(live, ProtocolError(INTERNAL_ERROR, f"Internal error: {why}"))


class _AdoptedClaim(TaskClaim):
    """A queued task's call in the worker: the task exists already (``begin`` does nothing);
    its result or error is stored as any task's."""

    async def begin(self, session: ServerSession, request: Request, tool: Tool, context: Context | None) -> None:
        return None


def _request(job: Job) -> Request:
    """The ``tools/call`` request a job stands for, as the tool's context and the guards read
    it (its caller too)."""
    meta = {"progressToken": job.progress_token} if job.progress_token is not None else None
    params = {"name": job.tool, "arguments": job.arguments}
    codec = codec_for(job.version)
    request = Request(job.task_id, "tools/call", params, meta, codec, job.capabilities, job.client_info, job.log_level)
    if job.caller is not None:
        request.auth = Identity.from_json(job.caller)
    return request
