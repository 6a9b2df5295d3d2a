"""HTTP under hostile clients, against a real server process with small limits
(tests/servers/guarded_http.py): slow headers and bodies, too many connections, a client
flooding the session table or the subscription streams, and malformed numbers in headers."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.httpserve import (
    BASE,
    LEGACY,
    free_port,
    initialize,
    meta,
    modern_headers,
    open_session,
    wait_for_port,
)

GUARDED = str(Path(__file__).resolve().parents[1] / "servers" / "guarded_http.py")
SSE_ACCEPT = {"Accept": "text/event-stream"}


@pytest.fixture
def guarded() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, GUARDED, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        process.kill()
        process.wait(10)


@pytest.fixture
def url(guarded: tuple[str, subprocess.Popen[bytes]]) -> str:
    return guarded[0]


def address(url: str) -> tuple[str, int]:
    port = int(url.split(":")[2].split("/")[0])
    return "127.0.0.1", port


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def client_from(source: str) -> httpx.AsyncClient:
    """A client whose connections come from ``source`` (any 127.x.y.z is this machine)."""
    return httpx.AsyncClient(timeout=10, transport=httpx.AsyncHTTPTransport(local_address=source))


async def ping(http: httpx.AsyncClient, url: str) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta()}}
    return await http.post(url, json=body, headers=modern_headers("server/discover"))


def read_some(sock: socket.socket, timeout: float) -> bytes:
    """What the server sends until it closes the connection (or ``timeout`` passes)."""
    sock.settimeout(timeout)
    received = b""
    try:
        while chunk := sock.recv(4096):
            received += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return received


async def test_half_sent_headers_time_out_and_extra_connections_are_refused(url: str) -> None:
    host = address(url)
    started = time.monotonic()
    sockets = []
    for _ in range(60):  # more than the 40 connections allowed
        sock = socket.create_connection(host)
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
        sockets.append(sock)
    answers = await asyncio.gather(*(asyncio.to_thread(read_some, sock, 5) for sock in sockets))
    took = time.monotonic() - started
    for sock in sockets:
        sock.close()
    statuses = sorted(answer.split(b" ")[1].decode() for answer in answers)
    assert set(statuses) == {"408", "503"} and statuses.count("503") >= 20, statuses
    assert all(b"408" not in answer or b"did not arrive within 1 s" in answer for answer in answers)
    assert took < 4
    async with httpx.AsyncClient(timeout=10) as http:
        assert (await ping(http, url)).status_code == 200  # and everyone else is served


async def test_granian_closes_connections_whose_headers_are_slow() -> None:
    port = free_port()
    command = [sys.executable, GUARDED, str(port), "granian"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, process)
        sockets = []
        for _ in range(30):
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
            sockets.append(sock)
        started = time.monotonic()
        answers = await asyncio.gather(*(asyncio.to_thread(read_some, sock, 5) for sock in sockets))
        took = time.monotonic() - started
        for sock in sockets:
            sock.close()
        assert answers == [b""] * 30 and took < 4  # each closed by granian's header_read_timeout
        async with httpx.AsyncClient(timeout=10) as http:
            assert (await ping(http, f"http://127.0.0.1:{port}/mcp")).status_code == 200
    finally:
        process.kill()
        process.wait(10)


async def test_a_stalled_body_times_out(url: str) -> None:
    sock = socket.create_connection(address(url))
    head = (
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n"
    )
    sock.sendall(head.encode() + b'{"jsonrpc":')
    answer = await asyncio.to_thread(read_some, sock, 5)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 408") and b"did not arrive within 1 s" in answer


async def test_a_body_sent_after_a_pause_is_timed_and_served(url: str) -> None:
    """The headers alone first, then (within the body's deadline) the body in two pieces."""
    body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",' + (
        b'"capabilities":{},"clientInfo":{"name":"late","version":"1"}}}'
    )
    head = (
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    sock = socket.create_connection(address(url))
    sock.sendall(head.encode())
    await asyncio.sleep(0.3)
    sock.sendall(body[:20])
    await asyncio.sleep(0.3)
    sock.sendall(body[20:])
    answer = await asyncio.to_thread(read_some, sock, 5)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 200") and b'"protocolVersion":"2025-11-25"' in answer


async def test_one_client_flooding_sessions_evicts_only_its_own_idle_ones(url: str) -> None:
    async with client_from("127.0.0.2") as flood, client_from("127.0.0.3") as other:
        theirs = await open_session(other, url)
        opened = [await open_session(flood, url) for _ in range(40)]
        # only the flooder's five most recent sessions are left; the other client is untouched
        ok = await flood.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=opened[-1])
        gone = await flood.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=opened[0])
        mine = await other.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=theirs)
    assert (ok.status_code, gone.status_code, mine.status_code) == (200, 404, 200)


async def test_a_client_whose_sessions_are_all_busy_is_told_to_end_one(url: str) -> None:
    async with client_from("127.0.0.4") as http:
        sessions = [await open_session(http, url) for _ in range(5)]
        streams = [http.stream("GET", url, headers={**headers, **SSE_ACCEPT}) for headers in sessions]
        opened = [await stream.__aenter__() for stream in streams]
        assert all(reply.status_code == 200 for reply in opened)
        refused = await http.post(url, json=initialize(), headers={**BASE, "MCP-Protocol-Version": LEGACY})
        for stream in streams:
            await stream.__aexit__(None, None, None)
    assert refused.status_code == 429
    assert "all in use" in refused.json()["error"]["message"]


async def test_session_floods_do_not_grow_memory(guarded: tuple[str, subprocess.Popen[bytes]]) -> None:
    url, process = guarded
    async with client_from("127.0.0.6") as http:
        for _ in range(50):
            await open_session(http, url)
        before = rss_mib(process.pid)
        for _ in range(1000):
            await open_session(http, url)
        after = rss_mib(process.pid)
    assert after - before < 10, f"{before:.1f} MiB before, {after:.1f} MiB after 1,000 more sessions"


async def test_listen_streams_are_capped_per_client(url: str) -> None:
    body = {
        "jsonrpc": "2.0",
        "id": "sub",
        "method": "subscriptions/listen",
        "params": {"_meta": meta(), "notifications": {"toolsListChanged": True}},
    }
    headers = modern_headers("subscriptions/listen")
    async with client_from("127.0.0.5") as http:
        streams = [http.stream("POST", url, json=body, headers=headers) for _ in range(2)]
        opened = [await stream.__aenter__() for stream in streams]
        third = await http.post(url, json=body, headers=headers)
        for stream in streams:
            await stream.__aexit__(None, None, None)
        await asyncio.sleep(0.2)
        again = http.stream("POST", url, json=body, headers=headers)
        reopened = await again.__aenter__()
        await again.__aexit__(None, None, None)
    assert [reply.status_code for reply in opened] == [200, 200]
    assert third.status_code == 429 and "listen streams are at their maximum" in third.json()["error"]["message"]
    assert reopened.status_code == 200


async def test_non_ascii_digits_in_headers_are_bad_requests_not_crashes(url: str) -> None:
    async with httpx.AsyncClient(timeout=10) as http:
        session = await open_session(http, url)
        resumed = await http.get(url, headers={**session, **SSE_ACCEPT, "Last-Event-ID": "abc:²".encode()})
    assert resumed.status_code == 400 and "Last-Event-ID" in resumed.json()["error"]["message"]
    sock = socket.create_connection(address(url))
    sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\xc2\xb2\r\n\r\n")
    answer = await asyncio.to_thread(read_some, sock, 5)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 4"), answer[:100]
