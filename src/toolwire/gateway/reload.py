"""Reloading ``gateway.toml`` while serving: on ``SIGHUP`` always, and when the file changes
with ``[gateway].reload`` (the default).

The file is read again every ``POLL_SECONDS`` (polled, as a folder of tool files is: no
dependency, the same on every system) and when the process gets ``SIGHUP`` (where there is
one, in the main thread). A file that changed is loaded and handed to
:meth:`Gateway.reload <toolwire.gateway.Gateway.reload>`; one that cannot be used is logged
(the one line :class:`~.config.ConfigError` says) and the gateway goes on with what it
serves, sessions kept either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..logs import get_logger
from .config import ConfigError, load_config

if TYPE_CHECKING:
    from .gateway import Gateway

log = get_logger("toolwire.gateway")

#: Seconds between two looks at the file.
POLL_SECONDS = 1.0


class ConfigWatcher:
    """Reloads ``gateway``'s configuration file (see the module); :meth:`start` on the running
    loop, :meth:`stop` when the gateway stops."""

    def __init__(self, gateway: Gateway) -> None:
        assert gateway.config.path is not None
        self.gateway = gateway
        self.path: Path = gateway.config.path
        self._text = self._read()
        self._tasks: set[asyncio.Task[None]] = set()
        self._hangup = False

    def start(self) -> None:
        """Poll the file (with ``[gateway].reload``) and take ``SIGHUP`` (in the main thread,
        where there is one) from now on."""
        loop = asyncio.get_running_loop()
        if self.gateway.config.reload:
            self._spawn(self._poll())
        if hasattr(signal, "SIGHUP") and threading.current_thread() is threading.main_thread():
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signal.SIGHUP, lambda: self._spawn(self.check()))
                self._hangup = True

    async def stop(self) -> None:
        """Stop polling and give ``SIGHUP`` back; a reload under way is cancelled."""
        if self._hangup:
            asyncio.get_running_loop().remove_signal_handler(signal.SIGHUP)
            self._hangup = False
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def check(self) -> None:
        """Reload the file if it changed since it was last loaded."""
        text = self._read()
        if text is None or text == self._text:
            return
        self._text = text
        try:
            await self.gateway.reload(load_config(self.path))
        except ConfigError as exc:
            log.error("%s: not reloaded, still serving the configuration loaded before", exc)

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(POLL_SECONDS)  # polling the file, not waiting for an event of ours
            await self.check()

    def _read(self) -> str | None:
        try:
            return self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
