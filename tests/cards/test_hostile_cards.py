"""The card reader (``fetch_card``, ``toolwire card``) against a hostile server
(``servers/hostile_cards.py``, a real process on raw sockets): a body trickled past the
timeout, credentials across a redirect to another origin, terminal controls in what the
server says."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.httpserve import process_http
from toolwire.client.cards import CardUnavailable, fetch_card

HOSTILE = str(Path(__file__).resolve().parents[1] / "servers" / "hostile_cards.py")


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with process_http(sys.executable, HOSTILE, path="") as url:
        yield url


async def test_a_body_trickled_past_the_timeout_is_given_up_at_the_timeout(base: str) -> None:
    started = time.monotonic()
    with pytest.raises(CardUnavailable, match="within 1 s"):
        await fetch_card(f"{base}/trickle/server-card", timeout=1)
    assert time.monotonic() - started < 3


async def test_credentials_do_not_follow_a_redirect_to_another_origin(base: str) -> None:
    card = await fetch_card(f"{base}/redirect/server-card", headers={"X-Api-Key": "secret", "Authorization": "k"})
    assert card.name == "com.example/caught"
    async with httpx.AsyncClient() as http:
        caught = (await http.get(f"{base}/stats")).json()
    assert caught and "x-api-key" not in caught[-1] and "authorization" not in caught[-1]
    assert caught[-1]["accept"].startswith("application/mcp-server-card+json")


def test_what_the_server_says_reaches_the_terminal_without_its_controls(base: str) -> None:
    command = [sys.executable, "-m", "toolwire", "card", f"{base}/control/server-card"]
    done = subprocess.run(command, capture_output=True, timeout=60)
    said = done.stderr.decode()
    assert done.returncode == 1 and "not JSON" in said, said
    assert not any(0x80 <= ord(char) <= 0x9F or char in "\x1b\x07" for char in said), repr(said)
