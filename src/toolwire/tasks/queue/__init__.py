"""The seam between tasks and the queue engine their worker processes take them from.

A replica in queue mode (``toolwire run FILE --http ... --redis URL --queue URL``) stores a
new task as usual, then :meth:`TaskQueue.enqueue` puts a :class:`Job` naming it on the
queue instead of running the tool; a worker (``toolwire worker FILE ...``,
:meth:`~toolwire.Server.run_worker`) takes jobs with :meth:`TaskQueue.serve` and runs them
(:mod:`toolwire.tasks.worker`). Everything a client sees of the task goes through the task
store, so that any replica answers for it.

What an engine owes (each is one module here; :func:`open_queue` picks one by URL):

- at-least-once delivery, one job per task id (enqueueing an id twice enqueues it once);
- a lease per running job, renewed while it runs: a job whose worker died is delivered
  again, to another worker, once its lease ran out;
- :meth:`TaskQueue.cancel` stops the job: removed if it waits, its coroutine cancelled in
  the worker that runs it;
- :meth:`TaskQueue.serve` stops taking jobs when its ``stopping`` event is set, lets the
  running ones finish for ``grace`` seconds and hands back the rest (delivered again).

Engines: :mod:`.docket` (Docket on Redis, ``pip install 'toolwire[workers]'``).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Protocol

from ...errors import ToolwireError


class QueueFull(ToolwireError):
    """The queue holds as many jobs as it may (``max_depth``): the call is refused, not queued."""


class Job:
    """What a worker needs to run a task that a replica stored: the task's id, the tool and
    its arguments, and what the tool's context reads of the request (its protocol version,
    the client's capabilities and info, its progress token); ``trace``: the caller's trace
    context (W3C ``traceparent`` and ``tracestate``), so that the worker's spans join it;
    ``log_level``: the least level of log message the client takes for the call (``None``:
    none); ``caller``: the caller's :class:`~toolwire.auth.Identity` as JSON, when the
    replica verified one, so that the tool and the guards see who called."""

    __slots__ = (
        "arguments",
        "caller",
        "capabilities",
        "client_info",
        "log_level",
        "progress_token",
        "task_id",
        "tool",
        "trace",
        "version",
    )

    def __init__(
        self,
        task_id: str,
        tool: str,
        arguments: dict[str, Any],
        version: str,
        capabilities: dict[str, Any] | None = None,
        client_info: Any = None,
        progress_token: Any = None,
        trace: dict[str, str] | None = None,
        log_level: str | None = None,
        caller: dict[str, Any] | None = None,
    ) -> None:
        self.task_id = task_id
        self.tool = tool
        self.arguments = arguments
        self.version = version
        self.capabilities = capabilities if capabilities is not None else {}
        self.client_info = client_info
        self.progress_token = progress_token
        self.trace = trace if trace is not None else {}
        self.log_level = log_level
        self.caller = caller

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Job:
        """A job from :meth:`to_json`'s output; ``KeyError``/``TypeError`` if it is not one."""
        fields = dict(data)
        return cls(fields.pop("task_id"), fields.pop("tool"), fields.pop("arguments"), fields.pop("version"), **fields)

    def __repr__(self) -> str:
        return f"Job({self.task_id!r}, {self.tool!r})"


#: Runs one job in a worker; its cancellation is the job's (cancelled, or handed back).
Runner = Callable[[Job], Awaitable[None]]


class TaskQueue(Protocol):
    """A queue of :class:`Job` objects (see the module for what an engine owes)."""

    #: This worker's name, as :meth:`running` shows it.
    name: str

    async def check_room(self) -> None:
        """:class:`QueueFull` when the queue holds ``max_depth`` jobs (asked before a task is
        stored, so that the call is refused rather than its task failed)."""
        ...

    async def enqueue(self, job: Job) -> None:
        """Put ``job`` on the queue (once per task id)."""
        ...

    async def cancel(self, task_id: str) -> None:
        """Stop the job of ``task_id``, waiting or running (nothing if it ended)."""
        ...

    async def depth(self) -> int:
        """How many jobs wait (not yet taken by a worker)."""
        ...

    async def running(self) -> dict[str, str]:
        """The jobs being run now: the worker's name by task id."""
        ...

    async def serve(self, run: Runner, concurrency: int, stopping: asyncio.Event, grace: float) -> None:
        """Take jobs and ``run`` each (up to ``concurrency`` at once) until ``stopping`` is
        set; then wait up to ``grace`` seconds for those running, and hand back the rest."""
        ...

    async def close(self) -> None: ...


def trace_context() -> dict[str, str]:
    """The current OpenTelemetry trace context as W3C headers (empty without OpenTelemetry, or
    outside a span), for :attr:`Job.trace`."""
    if "opentelemetry" not in sys.modules:  # never imported here: no span to continue
        return {}
    from opentelemetry import propagate

    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return carrier


@contextlib.contextmanager
def job_span(job: Job) -> Iterator[None]:
    """Around a worker's run of ``job``: an OpenTelemetry ``CONSUMER`` span named ``tools/call
    TOOL`` whose parent is the caller's span (:attr:`Job.trace`), so that one trace goes from
    the call to the worker; nothing without OpenTelemetry or a trace context."""
    if not job.trace or importlib.util.find_spec("opentelemetry") is None:
        yield
        return
    from opentelemetry import propagate, trace

    from ...semconv import SCOPE, request_attributes, span_name

    attributes = {**request_attributes("tools/call", job.tool), "mcp.task.id": job.task_id}
    tracer = trace.get_tracer(SCOPE)
    with tracer.start_as_current_span(
        span_name("tools/call", job.tool),
        context=propagate.extract(carrier=job.trace),
        kind=trace.SpanKind.CONSUMER,
        attributes=attributes,
    ):
        yield


def open_queue(url: str, *, name: str = "toolwire", max_depth: int = 10_000, lease: float = 30.0) -> TaskQueue:
    """The queue at ``url``: ``redis://`` (``rediss://``, ``unix://``) is Docket on that Redis.
    ``name``: the queue's (replicas and workers of one server share it); ``max_depth``: jobs
    it holds before :meth:`TaskQueue.enqueue` refuses more; ``lease``: seconds a running
    job's worker may stay silent before its job is delivered again. ``ValueError`` for a URL
    no engine takes; :class:`~toolwire.extras.ExtraMissing` when the engine is not installed."""
    if url.startswith(("redis://", "rediss://", "unix://")):
        from .docket import DocketQueue

        return DocketQueue(url, name=name, max_depth=max_depth, lease=lease)
    raise ValueError(f"no queue engine takes {url!r}: give a redis:// URL (Docket on Redis)")


__all__ = ["Job", "QueueFull", "Runner", "TaskQueue", "job_span", "open_queue", "trace_context"]
