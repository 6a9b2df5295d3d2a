"""The audit trail: a structured record of every request that runs your code.

    server = Server("files", guards=[Audit("audit.jsonl")])

Each call gets two JSON records sharing an ``id``: ``"phase": "start"`` written *before* the
tool runs (time, method, tool, session, caller, client, protocol version, an argument
summary), and ``"phase": "end"`` after it (time, outcome, error kind, duration in ms). A server killed in
the middle of calls, even with SIGKILL, has the start record of every call that began, in
every durability of :class:`FileSink`; one without its end record was cut short (or, with
``durability="batched"``, may have finished: end records are held and written together).

Arguments are recorded by *shape* by default: types, lengths and keys, never values
(``{"path": "string(12)", "lines": "array(3)"}``). ``values=True`` records the values,
through :func:`~toolwire.redaction.redact` (and long strings cut to 200 characters).

Outcomes: ``ok``; ``tool_error`` (an ``isError`` result; ``error`` says why: ``"execution"``
when the tool failed, or what a guard refused it for: ``"timeout"``, ``"busy"``,
``"too_large"``, ``"rate_limited"``, ``"refused"``); ``error`` (a JSON-RPC error: ``error`` is
its code, or the exception's type); ``cancelled``.

Sinks: a path (JSON lines, see :class:`FileSink` for durability and rotation), ``"stderr"``,
or any callable taking the record (a dict).

The trail fails closed: when the start record cannot be written (a full disk), the call is
not run and its caller gets ``-32603`` saying the audit trail cannot be written; when the end
record cannot, the call ran but its result is withheld the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from ..logs import get_logger
from ..protocol.errors import INTERNAL_ERROR, ProtocolError
from ..redaction import redact
from .seam import Call, Next, Refusal, Result

Sink = Callable[[dict[str, Any]], Any]

log = get_logger("toolwire.audit")


class FileSink:
    """Appends records to ``path`` as JSON lines.

    ``durability``: ``"flush"`` (default) hands each record to the operating system before
    the call goes on, so it survives the process being killed; ``"fsync"`` also waits until
    it is on disk, so it survives the machine stopping (this costs a disk round trip per
    record); ``"batched"`` holds end records (up to 64) and writes them with the next start
    record, which, as in every mode, reaches the operating system before the tool runs: one
    write per call instead of two, and a killed process keeps the start of every call that
    began but loses the end records held (a call without one may have finished).
    ``max_bytes``: when the file would pass it, it becomes ``path.1`` (``path.1`` becomes
    ``path.2``... up to ``backups``) and a new file starts. ``OSError`` if the file cannot
    be opened. A sink dropped without :meth:`close` (a gateway's old policy, once the last
    call under it ended) writes what it holds and closes its file when it is collected.
    """

    BATCH = 64

    def __init__(
        self, path: str | Path, durability: str = "flush", max_bytes: int | None = None, backups: int = 5
    ) -> None:
        if durability not in ("flush", "fsync", "batched"):
            raise ValueError('durability must be "flush", "fsync" or "batched"')
        self.path = Path(path)
        self.durability = durability
        self.max_bytes = max_bytes
        self.backups = backups
        self._pending: list[bytes] = []
        self._fd = self._open()

    def _open(self) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._size = os.fstat(fd).st_size
        return fd

    def __call__(self, record: dict[str, Any]) -> None:
        line = orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)
        if self.durability == "batched":
            if record.get("phase") != "start":
                self._pending.append(line)
                if len(self._pending) >= self.BATCH:
                    self.flush()
                return
            if self._pending:  # the end records held go out with it, in one write
                self._pending.append(line)
                line, self._pending = b"".join(self._pending), []
        self._write(line)

    def _write(self, data: bytes) -> None:
        if self.max_bytes is not None and self._size and self._size + len(data) > self.max_bytes:
            self._rotate()
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]
        self._size += len(data)
        if self.durability == "fsync":
            os.fsync(self._fd)

    def flush(self) -> None:
        """Write what a ``"batched"`` sink holds."""
        if self._pending:
            data, self._pending = b"".join(self._pending), []
            self._write(data)

    def _rotate(self) -> None:
        os.close(self._fd)
        for number in range(self.backups - 1, 0, -1):
            older = self.path.with_name(f"{self.path.name}.{number}")
            if older.exists():
                older.replace(self.path.with_name(f"{self.path.name}.{number + 1}"))
        if self.backups > 0:
            self.path.replace(self.path.with_name(f"{self.path.name}.1"))
        else:
            self.path.unlink()
        self._fd = self._open()

    def close(self) -> None:
        """Write what is held, and close the file (once; later records are refused with ``OSError``)."""
        if self._fd < 0:
            return
        try:
            self.flush()
        finally:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        if getattr(self, "_fd", -1) >= 0:  # not when the file never opened
            with contextlib.suppress(OSError):
                self.close()


def stderr_sink(record: dict[str, Any]) -> None:
    sys.stderr.write(orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE).decode())


class Audit:
    """The audit guard (see the module's description). ``sink``: a path, ``"stderr"``, or a
    callable; ``values``: record argument values (redacted) instead of their shapes;
    ``redactor``: what values go through. It runs outside every other guard, so that calls
    refused or timed out by them are recorded too."""

    outermost = True

    def __init__(
        self, sink: str | Path | Sink = "stderr", *, values: bool = False, redactor: Callable[[Any], Any] = redact
    ) -> None:
        if sink == "stderr":
            self.sink: Sink = stderr_sink
        elif isinstance(sink, str | Path):
            self.sink = FileSink(sink)
        else:
            self.sink = sink
        self.values = values
        self.redactor = redactor
        self._count = itertools.count(1).__next__
        self._prefix = f"{os.getpid():x}-"

    async def __call__(self, call: Call, next: Next) -> Result:
        id = f"{self._prefix}{self._count()}"
        client = call.client
        self._write(
            {
                "time": _now(),
                "phase": "start",
                "id": id,
                "method": call.method,
                "name": call.name,
                "session": call.session_id,
                "caller": call.caller,
                "client": f"{client.get('name')}/{client.get('version')}" if client else None,
                "version": call.version,
                "arguments": self._arguments(call.arguments),
            },
            "the call was not run",
        )
        began = time.monotonic()
        outcome: str = "error"
        error: str | int | None = None
        try:
            result = await next(call)
            if result.get("isError"):
                outcome, error = "tool_error", result.kind if isinstance(result, Refusal) else "execution"
            else:
                outcome = "ok"
            return result
        except ProtocolError as exc:
            error = exc.code
            raise
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        except Exception as other:
            error = type(other).__name__
            raise
        finally:
            took = round((time.monotonic() - began) * 1000, 3)
            end = {"time": _now(), "phase": "end", "id": id, "outcome": outcome, "error": error, "ms": took}
            if outcome == "cancelled":
                with contextlib.suppress(ProtocolError):  # nobody waits for an answer
                    self._write(end, "")
            else:
                self._write(end, "the call ran but its result is withheld")

    def _write(self, record: dict[str, Any], consequence: str) -> None:
        """Hand ``record`` to the sink; ``ProtocolError`` ``-32603`` saying ``consequence`` when
        it fails (a full disk): the trail fails closed, and says why without naming the file."""
        try:
            self.sink(record)
        except Exception as exc:
            log.error("the audit trail cannot be written: %s", exc)
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
            raise ProtocolError(
                INTERNAL_ERROR, f"Internal error: the audit trail cannot be written ({reason}); {consequence}"
            ) from None

    def _arguments(self, arguments: dict[str, Any] | None) -> Any:
        if arguments is None:
            return None
        if self.values:
            return _cut(self.redactor(arguments))
        return shape(arguments)


def shape(value: Any, depth: int = 0) -> Any:
    """What ``value`` looks like without what it says: types, lengths and keys."""
    kind = type(value)
    if kind is str:
        return f"string({len(value)})"
    if kind is dict:
        if depth >= 3:
            return f"object({len(value)})"
        if len(value) <= _SHOWN_KEYS:  # a loop: a comprehension is one more call per dict
            shaped: dict[str, Any] = {}
            for key, item in value.items():
                shaped[key if type(key) is str else str(key)] = shape(item, depth + 1)
            return shaped
        shown = dict(itertools.islice(value.items(), _SHOWN_KEYS))
        out = {str(key): shape(item, depth + 1) for key, item in shown.items()}
        out["..."] = f"{len(value) - _SHOWN_KEYS} more keys"
        return out
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return f"string({len(value)})"
    if isinstance(value, list):
        return f"array({len(value)})"
    if isinstance(value, dict):
        return shape(dict(value), depth)
    return type(value).__name__


_SHOWN_KEYS = 50


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > 200:
        return f"{value[:200]}... ({len(value)} characters)"
    if isinstance(value, dict):
        return {key: _cut(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut(item) for item in value]
    return value


_second: list[Any] = [-1, ""]  # the second last formatted, and its text
_MILLISECONDS = tuple(f".{milliseconds:03d}Z" for milliseconds in range(1000))


def _now() -> str:
    """The time as ``2026-11-25T05:33:00.120Z`` (the seconds part formatted once a second,
    the milliseconds' text looked up)."""
    now = time.time()
    second = int(now)
    if second != _second[0]:
        _second[0], _second[1] = second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
    formatted: str = _second[1]
    return formatted + _MILLISECONDS[int((now - second) * 1000)]
