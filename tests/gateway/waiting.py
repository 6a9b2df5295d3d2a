"""Waiting, in the gateway's tests, for an event rather than for time: tools that appear (or
disappear) with the gateway's ``list_changed``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from toolwire.client import Client


class ListChanges:
    """Counts a client's ``notifications/tools/list_changed`` (pass :meth:`changed` as its
    ``on_tools_changed``) and waits for the tool list to become what a test expects."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def changed(self) -> None:
        self._event.set()

    async def until(self, client: Client, wanted: Callable[[set[str]], bool]) -> set[str]:
        """The names of the tools once ``wanted(names)`` holds, listed again at each change."""
        while True:
            self._event.clear()
            names = {tool.name for tool in await client.list_tools(refresh=True)}
            if wanted(names):
                return names
            await self._event.wait()
