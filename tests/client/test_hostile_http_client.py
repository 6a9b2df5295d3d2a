"""The client over HTTP against a hostile server (``servers/hostile_http.py``, a real process on
raw sockets): heads and bodies past every limit, compression bombs, SSE events without end,
an answer still coming after the request timed out, a redirect to another origin.

Each hostile answer is whole and only tens of MB past the limit, so that a client without
limits reads it all (and fails the test) in bounded time and memory. The client's resident
memory is sampled while it reads; after each refusal the same client is used again.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.httpserve import process_http
from toolwire.client import Client, ClientError, RequestTimeout

HOSTILE = str(Path(__file__).resolve().parents[1] / "servers" / "hostile_http.py")
LIMIT = 4 * 1024 * 1024


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    import sys

    with process_http(sys.executable, HOSTILE, path="") as url:
        yield url


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


class PeakMemory:
    """The most this process's resident memory grew while the block ran (MiB), sampled every 5 ms."""

    def __enter__(self) -> PeakMemory:
        self.before = rss_mib()
        self.grew = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self.grew = max(self.grew, rss_mib() - self.before)

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


async def stats(base: str, until_closed: bool = False, after: int = 0) -> dict[str, Any]:
    """What the server's last hostile answer came to; ``until_closed``: once the server saw
    the client close it (one begun after the first ``after``), or as things are after 60 s."""
    query = f"?closed&after={after}" if until_closed else ""
    async with httpx.AsyncClient(timeout=90) as http:
        found: dict[str, Any] = (await http.get(f"{base}/stats{query}")).json()
    return found


class Logged(logging.Handler):
    """An :class:`asyncio.Event` set once a record whose message holds ``text`` is logged
    (on the event loop's thread), for a test to wait for."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.seen = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.text in record.getMessage():
            self.seen.set()


ERA = {"modern": None, "legacy": "2025-11-25"}
BODIES = [
    ("json", "modern"),
    ("chunked", "legacy"),
    ("gzip", "modern"),
    ("deflate", "legacy"),
    ("sse-line", "modern"),
    ("sse-lines", "legacy"),
]


@pytest.mark.parametrize(("mode", "era"), BODIES)
async def test_an_answer_past_max_message_bytes_is_refused_saying_which_option_raises_it(
    base: str, mode: str, era: str
) -> None:
    async with Client(f"{base}/{mode}/{era}", protocol=ERA[era], timeout=30) as client:
        await client.list_tools()
        refusal = r"max_message_bytes \(4194304 bytes\): raise it with Client\(\.\.\., max_message_bytes="
        with PeakMemory() as memory, pytest.raises(ClientError, match=refusal):
            await asyncio.wait_for(client.call_tool("echo", {}), 20)
        assert memory.grew < 20, f"the client grew by {memory.grew:.0f} MiB"
        assert len(await client.list_tools()) == 1  # still usable
    if mode not in ("gzip", "deflate"):  # a bomb is small: it may all have been sent
        sent = await stats(base, until_closed=True)
        assert sent["closed"] and sent["sent"] < LIMIT + 20_000_000


@pytest.mark.parametrize(("mode", "era"), [("headers", "modern"), ("header-value", "legacy")])
async def test_a_head_without_end_is_refused(base: str, mode: str, era: str) -> None:
    async with Client(f"{base}/{mode}/{era}", protocol=ERA[era], timeout=30) as client:
        with PeakMemory() as memory, pytest.raises(ClientError, match=r"head \(or trailers\) of more than 65536 bytes"):
            await asyncio.wait_for(client.call_tool("echo", {}), 20)
        assert memory.grew < 20, f"the client grew by {memory.grew:.0f} MiB"
        assert len(await client.list_tools()) == 1
    sent = await stats(base, until_closed=True)
    assert sent["closed"] and sent["sent"] < 20_000_000


async def test_a_large_tool_list_names_the_option_that_lets_it_in(base: str) -> None:
    async with Client(f"{base}/big-list/modern", timeout=30) as client:
        with pytest.raises(ClientError, match="to tools/list is larger than max_message_bytes"):
            await client.list_tools()
    async with Client(f"{base}/big-list/modern", timeout=30, max_message_bytes=16 * 1024 * 1024) as client:
        assert len(await client.list_tools()) == 1000


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("end", ["timed out", "cancelled"])
async def test_a_request_that_timed_out_or_was_cancelled_stops_reading_its_answer(
    base: str, era: str, end: str
) -> None:
    async with Client(f"{base}/slow/{era}", protocol=ERA[era], timeout=1) as client:
        await client.list_tools()
        started = time.monotonic()
        with pytest.raises(RequestTimeout if end == "timed out" else TimeoutError):
            await asyncio.wait_for(client.call_tool("echo", {}), None if end == "timed out" else 0.5)
        sent = await stats(base, until_closed=True)
        assert sent["closed"], f"still reading {time.monotonic() - started:.1f} s on: {sent}"
        assert sent["sent"] < 10_000_000


@pytest.mark.parametrize(
    ("mode", "era"), [("redirect", "modern"), ("redirect", "legacy"), ("redirect-scheme", "modern")]
)
async def test_a_redirect_to_another_origin_is_refused_and_no_header_goes_there(base: str, mode: str, era: str) -> None:
    caught = len((await stats(base))["caught"])
    headers = {"X-Api-Key": "secret"}
    async with Client(f"{base}/{mode}/{era}", protocol=ERA[era], headers=headers, timeout=10) as client:
        with pytest.raises(ClientError, match=r"redirected POST .* to another origin"):
            await client.call_tool("echo", {})
        assert len(await client.list_tools()) == 1
    assert len((await stats(base))["caught"]) == caught


async def test_an_http_sse_endpoint_at_another_origin_is_refused(base: str) -> None:
    caught = len((await stats(base))["caught"])
    with pytest.raises(ClientError, match=r"endpoint http://localhost:.* is at another origin"):
        async with Client(f"{base}/sse-endpoint/legacy", headers={"X-Api-Key": "secret"}, timeout=10):
            pass
    assert len((await stats(base))["caught"]) == caught


async def test_an_event_past_max_message_bytes_on_the_session_stream_closes_that_stream_alone(base: str) -> None:
    begun = (await stats(base))["answers"]  # the session stream's answer is the next one
    logged = Logged("the server's event stream is closed: a message on it is larger than max_message_bytes")
    logger = logging.getLogger("toolwire.client")
    logger.addHandler(logged)
    try:
        with PeakMemory() as memory:
            async with Client(f"{base}/get-sse-line/legacy", protocol="2025-11-25", timeout=10) as client:
                sent = await stats(base, until_closed=True, after=begun)
                assert sent["closed"] and sent["sent"] < LIMIT + 20_000_000
                await asyncio.wait_for(logged.seen.wait(), 60)
                assert (await client.call_tool("echo", {})).text == "ok"
    finally:
        logger.removeHandler(logged)
    assert memory.grew < 20, f"the client grew by {memory.grew:.0f} MiB"


@pytest.mark.parametrize("mode", ["json", "gzip", "sse-lines"])
async def test_through_httpx_own_transport_the_limits_hold_too(
    base: str, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # a proxy configured: httpx's own transport
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    async with Client(f"{base}/{mode}/modern", timeout=30) as client:
        assert client.transport._direct is None  # type: ignore[attr-defined]
        with PeakMemory() as memory, pytest.raises(ClientError, match="larger than max_message_bytes"):
            await asyncio.wait_for(client.call_tool("echo", {}), 20)
        assert memory.grew < 20, f"the client grew by {memory.grew:.0f} MiB"
        assert len(await client.list_tools()) == 1
