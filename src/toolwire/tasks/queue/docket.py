"""Jobs on Docket (``pydocket``), an asyncio task queue on Redis streams
(``pip install 'toolwire[workers]'``).

Each job is a Docket task named ``toolwire_task`` whose key is the task's id: Docket adds a
key once (at-least-once delivery, never two copies), cancels it by key (removed while it
waits; its coroutine cancelled, through Redis pub/sub, while it runs), and keeps a lease on
each running job, renewed by its worker: a job whose worker died is claimed by another one
``lease`` seconds after the last renewal. A job cancelled while its worker shuts down is
left pending, and so handed back. Which worker runs what is kept in one Redis hash beside
Docket's keys (``toolwire tasks`` reads it).

Errors reaching Redis are ``redis`` exceptions.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
from datetime import timedelta
from typing import Any

from . import Job, QueueFull, Runner

TASK = "toolwire_task"


class DocketQueue:
    """A :class:`~toolwire.tasks.queue.TaskQueue` on Docket (arguments: see
    :func:`~toolwire.tasks.queue.open_queue`)."""

    def __init__(self, url: str, *, name: str = "toolwire", max_depth: int = 10_000, lease: float = 30.0) -> None:
        from ...extras import needs

        with needs("workers", "the task queue"):
            from docket import Docket
        self.url = url
        self.max_depth = max_depth
        self.lease = lease
        self.name = f"{socket.gethostname()}#{os.getpid()}"
        self._docket = Docket(name=name, url=url)
        self._run: Runner | None = None
        self._jobs: set[asyncio.Task[Any]] = set()  # the asyncio tasks running jobs here
        self._open = False
        self._opening = asyncio.Lock()

    def __repr__(self) -> str:
        return f"DocketQueue({self._docket.name!r})"

    async def _opened(self) -> Any:
        """The Docket, connected at first use."""
        async with self._opening:
            if not self._open:
                await self._docket.__aenter__()
                self._docket.register(self._task_function())
                self._open = True
        return self._docket

    def _task_function(self) -> Any:
        queue = self

        async def toolwire_task(job: dict[str, Any]) -> None:
            run = queue._run
            if run is None:
                raise RuntimeError("a toolwire job reached a process that runs no jobs")
            found = Job.from_json(job)
            this = asyncio.current_task()
            assert this is not None
            queue._jobs.add(this)
            await queue._mark(found.task_id, queue.name)
            try:
                await run(found)
            finally:
                queue._jobs.discard(this)
                with contextlib.suppress(Exception):
                    await queue._mark(found.task_id, None)

        return toolwire_task

    @property
    def _running_key(self) -> str:
        return self._docket.key("toolwire:running")

    async def _mark(self, task_id: str, worker: str | None) -> None:
        async with self._docket.redis() as redis:
            if worker is None:
                await redis.hdel(self._running_key, task_id)
            else:
                await redis.hset(self._running_key, task_id, worker)

    async def _held(self) -> int:
        """Jobs on the queue, waiting or running."""
        docket = await self._opened()
        async with docket.redis() as redis, redis.pipeline(transaction=False) as pipe:
            pipe.xlen(docket.stream_key)
            pipe.zcard(docket.queue_key)
            stream, scheduled = await pipe.execute()
        return int(stream) + int(scheduled)

    async def check_room(self) -> None:
        held = await self._held()
        if held >= self.max_depth:
            raise QueueFull(
                f"the task queue is full ({held} jobs waiting or running, at most {self.max_depth}); "
                "try again once some have finished"
            )

    async def enqueue(self, job: Job) -> None:
        docket = await self._opened()
        await docket.add(TASK, key=job.task_id)(job.to_json())

    async def cancel(self, task_id: str) -> None:
        docket = await self._opened()
        await docket.cancel(task_id)

    async def depth(self) -> int:
        return max(0, await self._held() - len(await self.running()))

    async def running(self) -> dict[str, str]:
        docket = await self._opened()
        async with docket.redis() as redis:
            found = await redis.hgetall(self._running_key)
        return {task_id.decode(): worker.decode() for task_id, worker in found.items()}

    async def serve(self, run: Runner, concurrency: int, stopping: asyncio.Event, grace: float) -> None:
        from docket import Worker

        docket = await self._opened()
        self._run = run
        worker = Worker(
            docket,
            name=self.name,
            concurrency=concurrency,
            redelivery_timeout=timedelta(seconds=self.lease),
            minimum_check_interval=timedelta(milliseconds=20),
            schedule_automatic_tasks=False,
        )
        async with worker:
            loop = asyncio.ensure_future(worker.run_forever())
            stop = asyncio.ensure_future(stopping.wait())
            await asyncio.wait([loop, stop], return_when=asyncio.FIRST_COMPLETED)
            stop.cancel()
            if loop.done():
                loop.result()  # the worker's loop ended by itself: say why
                return
            loop.cancel()  # takes no more jobs; those running go on
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(loop), grace)
            if not loop.done():
                await self._hand_back(loop)

    async def _hand_back(self, loop: asyncio.Future[None]) -> None:
        """Cancel the jobs still running after the grace period: Docket leaves each pending,
        to be delivered again once its lease runs out."""
        for job in list(self._jobs):
            job.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await loop

    async def close(self) -> None:
        if self._open:
            self._open = False
            await self._docket.__aexit__(None, None, None)
