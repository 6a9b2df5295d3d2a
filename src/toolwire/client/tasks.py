"""Tasks seen from the client: a tool call that answered with a handle to poll.

:meth:`Client.start_task <toolwire.client.Client.start_task>` starts one and
:meth:`Client.task <toolwire.client.Client.task>` takes one up again by its id (after the
client restarted, say); both give a :class:`TaskHandle`. Its :meth:`~TaskHandle.result`
waits for the end the way the era wants it: 2025-11-25 with ``tasks/result`` (the server's
questions arrive on it and go to the client's elicitation and sampling handlers), 2026-07-28
by polling ``tasks/get`` at the server's interval and answering its ``inputRequests`` with
``tasks/update``. :meth:`Client.call_tool <toolwire.client.Client.call_tool>` does all
this by itself when a call has to be a task.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol

from ..protocol.errors import INTERNAL_ERROR
from .errors import ClientError, ServerError
from .types import CallToolResult

TERMINAL = frozenset({"completed", "failed", "cancelled"})
#: Seconds between polls when the server suggests none.
DEFAULT_POLL = 1.0


class TaskPeer(Protocol):
    """What a :class:`TaskHandle` asks of its :class:`~toolwire.client.Client`."""

    @property
    def modern(self) -> bool: ...

    async def request_task(self, method: str, params: dict[str, Any], *, forever: bool = False) -> Any: ...

    def watch_task(self, task_id: str, callback: Callable[[TaskInfo], Any]) -> None: ...

    def forget_task(self, task_id: str | None, progress_token: str | None) -> None: ...

    async def serve_request(self, method: str, params: dict[str, Any]) -> Any: ...


class TaskCancelled(ClientError):
    """The task was cancelled (by this client, another one, or the server) before it ended."""


class TaskInfo:
    """A task's state as the server last told it (either era's spelling)."""

    __slots__ = ("raw",)

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw

    @property
    def id(self) -> str:
        return str(self.raw.get("taskId"))

    @property
    def status(self) -> str:
        """``working``, ``input_required``, ``completed``, ``failed`` or ``cancelled``."""
        return str(self.raw.get("status"))

    @property
    def message(self) -> str | None:
        """The server's ``statusMessage`` (progress, what it waits for, why it failed)."""
        message = self.raw.get("statusMessage")
        return message if isinstance(message, str) else None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def created_at(self) -> str | None:
        return self.raw.get("createdAt")

    @property
    def updated_at(self) -> str | None:
        return self.raw.get("lastUpdatedAt")

    @property
    def ttl_ms(self) -> int | None:
        """How long the server keeps it from its creation (``None``: until deleted)."""
        ttl = self.raw.get("ttlMs", self.raw.get("ttl"))
        return ttl if isinstance(ttl, int) else None

    @property
    def poll_interval(self) -> float:
        """Seconds the server suggests between polls (bounded to 10 ms … 60 s)."""
        interval = self.raw.get("pollIntervalMs", self.raw.get("pollInterval"))
        if not isinstance(interval, (int, float)) or isinstance(interval, bool):
            return DEFAULT_POLL
        return min(60.0, max(0.01, interval / 1000))

    @property
    def input_requests(self) -> dict[str, Any]:
        """2026-07-28: the questions it waits on, by key."""
        requests = self.raw.get("inputRequests")
        return requests if isinstance(requests, dict) else {}

    def __repr__(self) -> str:
        return f"TaskInfo({self.id!r}, {self.status!r})"


class TaskHandle:
    """A task on the server: its ``id``, its state as last seen (``info``), and the means
    to refresh, wait for and cancel it. A call the server chose to answer at once (2026-07-28
    allows that) gives a handle with ``id`` ``None`` whose result is already there."""

    def __init__(
        self,
        client: TaskPeer,
        info: TaskInfo | None,
        task_id: str | None = None,
        result: dict[str, Any] | None = None,
        progress_token: str | None = None,
    ) -> None:
        self._client = client
        self.info = info
        self.id = info.id if info is not None else task_id
        self._result = result
        self._token = progress_token

    def __repr__(self) -> str:
        return f"TaskHandle({self.id!r}, {self.info.status if self.info else 'unknown'!r})"

    async def refresh(self) -> TaskInfo:
        """``tasks/get``: the task's state now. :class:`ServerError` ``-32602`` when the
        server does not know it (any more) or it is another caller's."""
        if self.id is None:
            raise ClientError("the server answered this call at once: there is no task to ask about")
        raw = await self._client.request_task("tasks/get", {"taskId": self.id})
        self.info = TaskInfo(raw)
        return self.info

    async def result(
        self, *, on_status: Callable[[TaskInfo], Any] | None = None, timeout: float | None = None
    ) -> CallToolResult:
        """Wait for the end and return the tool's result (an ``isError`` one included).

        ``on_status(info)`` is called whenever the status or its message changes;
        ``timeout``: seconds to wait in all (``None``: as long as it takes). Questions the
        task asks go to the client's elicitation and sampling handlers. Raises
        :class:`TaskCancelled`, :class:`ServerError` for the JSON-RPC error a failed task
        ended with, and :class:`~toolwire.client.RequestTimeout`.
        """
        if self._result is not None:
            return CallToolResult.from_dict(self._result)
        try:
            async with asyncio.timeout(timeout):
                if self._client.modern:
                    raw = await self._poll(on_status)
                else:
                    raw = await self._wait_legacy(on_status)
        except TimeoutError:
            from .errors import RequestTimeout

            raise RequestTimeout(f"task {self.id} did not end within {timeout} s") from None
        finally:
            self._client.forget_task(self.id, self._token)
        self._result = raw
        return CallToolResult.from_dict(raw)

    async def _wait_legacy(self, on_status: Callable[[TaskInfo], Any] | None) -> dict[str, Any]:
        """2025-11-25: ``tasks/result`` blocks until the end; the server's questions come on
        it, and status notifications reach ``on_status`` meanwhile."""
        assert self.id is not None
        if on_status is not None:
            self._client.watch_task(self.id, on_status)
        try:
            result: dict[str, Any] = await self._client.request_task("tasks/result", {"taskId": self.id}, forever=True)
        except ServerError:
            info = await self.refresh()
            if info.status == "cancelled":
                raise TaskCancelled(f"task {self.id} was cancelled: {info.message or 'no reason given'}") from None
            raise
        return result

    async def _poll(self, on_status: Callable[[TaskInfo], Any] | None) -> dict[str, Any]:
        """2026-07-28: poll ``tasks/get`` at the server's interval, answering each question
        once (``tasks/update``), until the task ends."""
        answered: set[str] = set()
        seen: tuple[str, str | None] | None = None
        info = self.info
        while True:
            if info is None or not info.terminal:
                if info is not None:
                    await asyncio.sleep(info.poll_interval)
                info = await self.refresh()
            if on_status is not None and (info.status, info.message) != seen:
                seen = (info.status, info.message)
                on_status(info)
            if info.status == "completed":
                result = info.raw.get("result")
                if not isinstance(result, dict):
                    from .errors import ProtocolViolation

                    raise ProtocolViolation(f"task {self.id} completed without a result")
                return result
            if info.status == "failed":
                error = info.raw.get("error")
                error = error if isinstance(error, dict) else {}
                raise ServerError(
                    int(error.get("code", INTERNAL_ERROR)), str(error.get("message", info.message)), error.get("data")
                )
            if info.status == "cancelled":
                raise TaskCancelled(f"task {self.id} was cancelled: {info.message or 'no reason given'}")
            if info.status == "input_required":
                await self._answer(info, answered)

    async def _answer(self, info: TaskInfo, answered: set[str]) -> None:
        responses = {}
        for key, request in info.input_requests.items():
            if key in answered or not isinstance(request, dict):
                continue
            answered.add(key)
            responses[key] = await self._client.serve_request(request.get("method", ""), request.get("params") or {})
        if responses:
            await self._client.request_task("tasks/update", {"taskId": self.id, "inputResponses": responses})

    async def cancel(self) -> None:
        """``tasks/cancel``. 2025-11-25 refuses to cancel a task that has ended (``ServerError``
        ``-32602``); 2026-07-28 acknowledges it either way."""
        if self.id is None:
            return
        raw = await self._client.request_task("tasks/cancel", {"taskId": self.id})
        if "taskId" in raw:
            self.info = TaskInfo(raw)
