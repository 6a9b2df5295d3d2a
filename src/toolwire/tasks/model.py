"""What a task is, independent of any store or protocol era.

A :class:`TaskRecord` holds everything a task store keeps of one task: who may see it, its
status and the times that matter, and, once it ended, the result or the JSON-RPC error of
the call it ran. It turns into JSON and back (every store keeps that JSON), and knows
nothing of how either era spells a task on the wire: that is the codec's.

Statuses move ``working`` ⇄ ``input_required`` → one of the terminal ``completed``,
``failed``, ``cancelled``, never out of a terminal one.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any

WORKING = "working"
INPUT_REQUIRED = "input_required"
COMPLETED = "completed"
FAILED = "failed"
CANCELLED = "cancelled"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED})

#: What a task that was running in a process that died says.
INTERRUPTED = "interrupted: the server stopped while this task was running; its work did not finish"


def _process_started() -> str:
    """When this process started, as the kernel says (Linux), so that a reused process id
    is not taken for the process that ran a task; elsewhere the time of this import."""
    try:
        with open(f"/proc/{os.getpid()}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return str(time.time())


#: This process, as a task's runner: host, process id and start time.
RUNNER = f"{socket.gethostname()}/{os.getpid()}/{_process_started()}"


#: The runner of a task on a queue: this alone while it waits, then followed by the name of
#: the worker that took it. Such a task is never taken for interrupted: the queue delivers
#: it again when its worker dies (see :mod:`toolwire.tasks.queue`).
QUEUED = "queue:"

#: The notifications a task keeps for its client while no replica relays them.
MAX_NOTICES = 100


def runner_gone(runner: str | None) -> bool:
    """Whether the process ``runner`` (a :data:`RUNNER` value) has certainly ended: it ran on
    this host and no process with its id and start time exists. Another host's runner, and
    a queued task's, is never taken for gone (nothing here can tell)."""
    if runner is None or runner == RUNNER or runner.startswith(QUEUED):
        return False
    host, _, rest = runner.partition("/")
    pid_text, _, started = rest.partition("/")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return bool(stat.read().rsplit(b")", 1)[1].split()[19].decode() != started)
    except FileNotFoundError:
        return True
    except (OSError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


class TaskRecord:
    """One task as stored.

    ``owner``: the caller it belongs to (an authenticated caller's name), or ``None`` when
    nothing authenticated the caller (then the id alone gives access). ``session``: the
    legacy session that created it (what ``tasks/list`` shows to callers without identity).
    ``version``: the protocol version the call spoke (its result is rendered for it).
    ``ttl_ms`` (``None``: kept until deleted) counts from ``created``; ``inputs`` are the
    questions a 2026-07-28 task waits on, by key, and ``answers`` the answers given to them
    (through the store, so that the process running it gets them wherever they arrived);
    ``notices``: 2025-11-25 notifications (progress, log messages) that a task running on a
    worker sent its client, ``{"method", "params"}`` each in order, kept until a replica
    relays them (at most :data:`MAX_NOTICES`, the oldest dropped first); ``result`` or
    ``error`` hold how it ended.
    """

    __slots__ = (
        "answers",
        "created",
        "error",
        "id",
        "inputs",
        "message",
        "notices",
        "owner",
        "poll_ms",
        "result",
        "runner",
        "session",
        "status",
        "tool",
        "ttl_ms",
        "updated",
        "version",
    )

    def __init__(
        self,
        id: str,
        tool: str,
        version: str,
        *,
        owner: str | None = None,
        session: str | None = None,
        status: str = WORKING,
        message: str | None = None,
        created: float | None = None,
        updated: float | None = None,
        ttl_ms: int | None = None,
        poll_ms: int = 1000,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        answers: dict[str, Any] | None = None,
        runner: str | None = RUNNER,
        notices: list[dict[str, Any]] | None = None,
    ) -> None:
        now = time.time()
        self.id = id
        self.tool = tool
        self.version = version
        self.owner = owner
        self.session = session
        self.status = status
        self.message = message
        self.created = created if created is not None else now
        self.updated = updated if updated is not None else self.created
        self.ttl_ms = ttl_ms
        self.poll_ms = poll_ms
        self.result = result
        self.error = error
        self.inputs = inputs if inputs is not None else {}
        self.answers = answers if answers is not None else {}
        self.runner = runner
        self.notices = notices if notices is not None else []

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def expires(self) -> float | None:
        """When it may be deleted (seconds since the epoch), or ``None`` for never."""
        return None if self.ttl_ms is None else self.created + self.ttl_ms / 1000

    def expired(self, now: float | None = None) -> bool:
        expires = self.expires
        return expires is not None and (now if now is not None else time.time()) >= expires

    def copy(self) -> TaskRecord:
        """A copy whose status, message, questions and outcome change apart from this one's."""
        twin = TaskRecord.__new__(TaskRecord)
        twin.id, twin.tool, twin.version, twin.owner, twin.session = (
            self.id,
            self.tool,
            self.version,
            self.owner,
            self.session,
        )
        twin.status, twin.message, twin.created, twin.updated = self.status, self.message, self.created, self.updated
        twin.ttl_ms, twin.poll_ms, twin.result, twin.error = self.ttl_ms, self.poll_ms, self.result, self.error
        twin.inputs, twin.answers, twin.runner = dict(self.inputs), dict(self.answers), self.runner
        twin.notices = list(self.notices)
        return twin

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TaskRecord:
        """A record from :meth:`to_json`'s output; ``KeyError``/``TypeError`` if it is not one."""
        fields = dict(data)
        return cls(fields.pop("id"), fields.pop("tool"), fields.pop("version"), **fields)

    def __repr__(self) -> str:
        return f"TaskRecord({self.id!r}, {self.tool!r}, {self.status!r})"
