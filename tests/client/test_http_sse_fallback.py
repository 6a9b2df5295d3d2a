"""toolwire's Client against a server that speaks only the 2024-11-05 HTTP+SSE transport
(the official Python SDK's ``sse`` transport), reached through the fallback the
specification describes: a POST refused without a modern error, then a GET stream whose
first event names the endpoint to POST to."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolwire.client import Client

SERVER = Path(__file__).resolve().parents[1] / "interop" / "sdk_sse_server.py"


@pytest.fixture(scope="module")
def sse_url() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, str(SERVER), str(port)], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert process.poll() is None and time.monotonic() < deadline, "the SSE server did not start"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/sse"
    finally:
        process.terminate()
        process.wait(10)


async def test_client_falls_back_to_http_sse(sse_url: str) -> None:
    progress: list[tuple[Any, ...]] = []
    async with Client(sse_url, timeout=10, probe_timeout=5) as client:
        assert not client.modern and client.version == "2025-11-25"
        assert client.server_info["name"] == "sdk-sse"
        assert {tool.name for tool in await client.list_tools()} == {"add", "count"}
        assert (await client.call_tool("add", {"a": 2, "b": 40})).structured == {"result": 42}
        counted = await client.call_tool("count", {"steps": 3}, progress=lambda *a: progress.append(a))
        assert counted.text == "counted 3"
    assert [p[:2] for p in progress] == [(1, 3), (2, 3), (3, 3)]
