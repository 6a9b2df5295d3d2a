"""A stand-in for the system browser, for ``$BROWSER``: ``python scripted_browser.py URL``
logs in at oidc-provider as a person would (scripted) and follows the redirect back to the
client's loopback address, as the browser would. It appends each URL it was given to the
file named by ``$BROWSER_LOG``."""

import asyncio
import os
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout, for tests.support

from tests.support.oidcserve import scripted_login


async def main(url: str) -> None:
    with open(os.environ["BROWSER_LOG"], "a") as log:
        log.write(url + "\n")
    redirected = await scripted_login(url, "http://127.0.0.1:53682/")  # the default redirect
    async with httpx.AsyncClient() as browser:
        await browser.get(redirected)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
