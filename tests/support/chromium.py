"""Debian's Chromium for the browser tests, driven by Playwright (never a downloaded browser)."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import AsyncIterator
from typing import Any

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@contextlib.asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    """A headless Chromium (a Playwright ``Browser``), closed on leaving."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            yield launched
        finally:
            await launched.close()
