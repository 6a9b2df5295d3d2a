"""A :class:`~toolwire.Server`'s life around serving: its lifespan (entered by
:meth:`Lifecycle.start`, left by :meth:`Lifecycle.stop`, with those of the servers mounted
in it), the state replicas share through Redis, and the task store. :class:`Lifecycle` is
a part of ``Server``.

Errors: :class:`~toolwire.server.lifespan.LifespanFailed` from :meth:`Lifecycle.start` when a
lifespan raises, Redis cannot be reached or the task store cannot serve; ``ValueError`` for
a second lifespan; ``RuntimeError`` for the lifespan's state while it is not running, or a
task store changed once tasks are in use.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

from .lifespan import LifespanFailed, LifespanRunner

if TYPE_CHECKING:
    from ..tasks.manager import TaskManager
    from ..tasks.store import TaskStore
    from .folder import Folder
    from .mount import Mount


class Lifecycle:
    """The lifespan, shared state and task store of :class:`~toolwire.Server` (see the module)."""

    state_keys: list[bytes]
    _lifespan: LifespanRunner | None
    _redis: tuple[str, str] | None
    _task_options: dict[str, Any]
    _tasks: TaskManager | None
    _mounts: dict[str, Mount]
    _folders: list[Folder]

    def use_redis(self, url: str, prefix: str = "toolwire:") -> None:
        """Share what replicas must agree on through the Redis at ``url`` (keys under
        ``prefix``): the task store, the ``requestState`` sealing keys (read at start, made by
        the first replica) and, over HTTP, legacy sessions and their streams' events. Needs
        ``pip install 'toolwire[redis]'``. See docs/scaling.md."""
        self.use_task_store(None)
        from ..stores.redis import RedisTaskStore

        self._task_options["store"] = RedisTaskStore(url, prefix=prefix + "tasks:")
        self._redis = (url, prefix)

    def use_queue(self, url: str, *, max_depth: int = 10_000, lease: float = 30.0, prefix: str = "toolwire:") -> None:
        """Queue mode: calls that run as tasks are put on the task queue at ``url`` (a
        ``redis://`` URL: Docket on that Redis; it may be :meth:`use_redis`'s) for workers
        (:meth:`run_worker`) to run, instead of running here. ``max_depth``: jobs the queue
        holds before calls are refused; ``lease``: seconds before a dead worker's job is
        delivered again. Needs ``pip install 'toolwire[workers]'`` and a shared task store
        (:meth:`use_redis`). See docs/workers.md."""
        from ..tasks.queue import open_queue

        if self._tasks is not None:
            raise RuntimeError("the task queue cannot change once tasks are in use")
        self._task_options["queue"] = open_queue(url, name=prefix + "queue", max_depth=max_depth, lease=lease)

    def run_worker(self, queue: str | None = None, *, concurrency: int = 10, grace: float = 30.0) -> None:
        """Run this server's queued tasks (see :meth:`use_queue`; ``queue``: its URL, when it
        was not given) until SIGTERM or SIGINT (unless ignored, as in a process started in the
        background), ``concurrency`` at once; on either, take no
        more, let those running finish for ``grace`` seconds and hand the rest back to the
        queue. ``RuntimeError`` without a queue or a shared task store."""
        import asyncio
        import signal

        from ..tasks.worker import TaskWorker

        if queue is not None:
            self.use_queue(queue)
        tasks = self.tasks
        if tasks.queue is None or self._task_options["store"] is None:
            raise RuntimeError(
                "a worker needs the task queue and the replicas' task store: use_redis() and use_queue()"
            )

        async def work() -> None:
            stopping = asyncio.Event()
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGTERM, signal.SIGINT):
                if signal.getsignal(signum) is not signal.SIG_IGN:  # started in the background: left ignored
                    loop.add_signal_handler(signum, stopping.set)
            await self.start()
            try:
                await TaskWorker(self, tasks.queue, concurrency, grace).run(stopping)  # type: ignore[arg-type]
            finally:
                await self.stop()
                await self.close_tasks()
                await tasks.queue.close()  # type: ignore[union-attr]

        asyncio.run(work())

    @property
    def redis_url(self) -> str | None:
        """The Redis replicas share state through (:meth:`use_redis`), or ``None``."""
        return self._redis[0] if self._redis is not None else None

    async def _share_state_keys(self) -> None:
        assert self._redis is not None
        url, prefix = self._redis
        from ..stores.redis import shared_state_keys

        try:
            self.state_keys = await shared_state_keys(url, prefix + "state-keys")
        except Exception as exc:
            raise LifespanFailed(
                f"cannot reach Redis at {url} for the shared state: {type(exc).__name__}: {exc}"
            ) from exc

    @property
    def has_lifespan(self) -> bool:
        """Whether :meth:`start` enters a lifespan (this server's or a mounted one's), which may
        change what the server says of itself: transports answer the handshake after it."""
        return self._lifespan is not None or any(mount.child.has_lifespan for mount in self._mounts.values())

    async def start(self) -> None:
        """Enter the lifespan, and those of the servers mounted in this one (transports do
        this before serving; counted, so several may): :class:`~toolwire.server.lifespan.LifespanFailed`
        if one raises."""
        if self._redis is not None:
            await self._share_state_keys()
        if self._task_options["store"] is not None:
            from ..tasks.store import TaskStoreUnusable

            try:
                self.open_task_store()
            except TaskStoreUnusable as exc:
                raise LifespanFailed(str(exc)) from None
        for mount in self._mounts.values():
            await mount.child.start()
        if self._lifespan is not None:
            await self._lifespan.enter()
        for folder in self._folders:
            folder.start()  # watched while served, when reloading

    async def stop(self) -> None:
        """Leave the lifespan; the last to leave closes it (running tasks are stopped first)."""
        for folder in self._folders:
            await folder.stop()
        if self._lifespan is not None:
            await self._lifespan.leave()
        for mount in reversed(self._mounts.values()):
            await mount.child.stop()

    @property
    def lifespan_state(self) -> Any:
        """What the lifespan yielded (``None`` without a lifespan). ``RuntimeError`` when it
        has one that is not running: serve the server, or ``await server.start()``."""
        runner = self._lifespan
        if runner is None:
            return None
        if not runner.started:
            raise RuntimeError("the server's lifespan is not running: serve the server, or await server.start()")
        return runner.state

    @property
    def tasks(self) -> TaskManager:
        """Runs and keeps the tasks of tools declared with ``task=`` (made at first use)."""
        if self._tasks is None:
            from ..tasks.manager import TaskManager

            options = dict(self._task_options)
            where = options.pop("store")
            if isinstance(where, (str, os.PathLike)):  # the store is opened at first use
                from ..stores import open_task_store

                options["open_store"] = functools.partial(open_task_store, where)
            else:
                options["store"] = where
            self._tasks = TaskManager(**options)
        return self._tasks

    def use_task_store(self, store: TaskStore | str | os.PathLike[str] | None) -> None:
        """Keep tasks in ``store`` (a file path: SQLite; a ``redis://`` URL; ``None``: memory)
        instead of what the constructor said. ``RuntimeError`` once the task manager is in use."""
        if self._tasks is not None:
            raise RuntimeError("the task store cannot change once tasks are in use")
        self._task_options["store"] = store

    def open_task_store(self) -> None:
        """Open the task store now when one was chosen (:meth:`start` does): a file that
        cannot serve is refused before anything is served, with
        :class:`~toolwire.tasks.TaskStoreUnusable` saying why in one line."""
        if self._task_options["store"] is not None:
            self.tasks.store  # noqa: B018 (opened at first use)

    async def close_tasks(self) -> None:
        """Stop the tasks running here (stored as interrupted) and close the task store."""
        if self._tasks is not None:
            await self._tasks.close()
