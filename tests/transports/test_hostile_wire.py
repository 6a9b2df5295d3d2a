"""The HTTP/1.1 servers under hostile clients, over raw sockets against real server processes
(tests/servers/guarded_http.py: small limits, 1 s timeouts): connections held by answering
before the body came, heads and trailers that never end, pipelining floods, one address
taking every connection, clients behind a trusted reverse proxy, and protocol errors that
must not be answered (or must be). Where uvicorn holds a class too, both runners are tested."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import orjson
import pytest

from tests.support.httpserve import (
    BASE,
    LEGACY,
    free_port,
    initialize,
    meta,
    modern_call,
    modern_headers,
    open_session,
    wait_for_port,
)
from tests.support.rawclient import RawClient, toolwire_command
from toolwire.transports.http.forwarded import TrustedProxies, client_group, forwarded_chain

SERVERS = Path(__file__).resolve().parents[1] / "servers"
GUARDED = str(SERVERS / "guarded_http.py")
LIMITED = str(SERVERS / "limited_echo.py")
LIBRARY = str(SERVERS / "library.py")
PING = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta()}}
POST_HEAD = (
    b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    b"Accept: application/json, text/event-stream\r\n"
)


@contextlib.contextmanager
def guarded(runner: str, *options: str) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    """The guarded server under ``runner`` with ``OPTION=VALUE`` overrides; its port and process."""
    port = free_port()
    command = [sys.executable, GUARDED, str(port), runner, *options]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, process)
        yield port, process
    finally:
        process.kill()
        process.wait(10)


OPENED: list[socket.socket] = []


@pytest.fixture(autouse=True)
def _close_sockets() -> Iterator[None]:
    yield
    while OPENED:
        OPENED.pop().close()


def connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    """A raw connection from ``source`` (any 127.x.y.z is this machine), closed after the test."""
    sock = socket.create_connection(("127.0.0.1", port), source_address=(source, 0))
    OPENED.append(sock)
    return sock


def read_until_closed(sock: socket.socket, timeout: float) -> tuple[bytes, bool]:
    """What the server sends, and whether it closed the connection within ``timeout``."""
    sock.settimeout(timeout)
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except TimeoutError:
        return received, False
    except ConnectionResetError:
        pass
    return received, True


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0


def ping(port: int, source: str = "127.0.0.1") -> int:
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(timeout=10, transport=transport) as http:
        return http.post(
            f"http://127.0.0.1:{port}/mcp", json=PING, headers=modern_headers("server/discover")
        ).status_code


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def in_parallel(work: list[socket.socket], timeout: float) -> list[tuple[bytes, bool]]:
    with ThreadPoolExecutor(len(work)) as pool:
        return list(pool.map(lambda sock: read_until_closed(sock, timeout), work))


# -- 4: an answer before the body must not hold the connection ----------------------------------


@pytest.mark.parametrize("runner", ["toolwire", "uvicorn"])
def test_connections_answered_before_their_body_arrived_are_closed(runner: str) -> None:
    """40 connections (all there are) each send one byte of a 100-byte body: a body timeout
    (408), a declared body over the limit (413) and an early refusal (415) each close the
    connection soon after, and then others are served again."""
    heads = {
        408: POST_HEAD + b"Content-Length: 100\r\n\r\n{",
        413: POST_HEAD + b"Content-Length: 10000000\r\n\r\n{",
        415: POST_HEAD.replace(b"application/json\r\n", b"text/plain\r\n", 1) + b"Content-Length: 100\r\n\r\n{",
    }
    with guarded(runner, "idle_timeout=1") as (port, _):
        kinds = [list(heads)[number % 3] for number in range(40)]
        socks = [connect(port) for _ in kinds]
        for kind, sock in zip(kinds, socks, strict=True):
            sock.sendall(heads[kind])
        started = time.monotonic()
        answers = in_parallel(socks, 6)
        took = time.monotonic() - started
        for sock in socks:
            sock.close()
        assert [status_of(answer) for answer, _ in answers] == kinds
        assert all(closed for _, closed in answers), [
            kind for kind, (_, closed) in zip(kinds, answers, strict=True) if not closed
        ]
        assert took < 4
        assert ping(port) == 200


def test_an_answered_body_that_trickles_on_is_cut_off_after_the_idle_timeout() -> None:
    """Unlike uvicorn, bytes that keep coming do not keep the connection: only a next request does."""
    with guarded("toolwire", "idle_timeout=1") as (port, _):
        sock = connect(port)
        sock.sendall(POST_HEAD + b"Content-Length: 10000000\r\n\r\n{")
        sock.settimeout(5)
        assert sock.recv(65536).startswith(b"HTTP/1.1 413")
        started = time.monotonic()
        with contextlib.suppress(OSError):
            while time.monotonic() - started < 5:
                sock.sendall(b" " * 100)
                time.sleep(0.1)
        assert time.monotonic() - started < 2.5
        sock.close()


def test_a_body_completed_after_an_early_answer_leaves_the_connection_usable() -> None:
    with guarded("toolwire", "idle_timeout=1") as (port, _):
        sock = connect(port)
        sock.sendall(POST_HEAD.replace(b"application/json\r\n", b"text/plain\r\n", 1) + b"Content-Length: 4\r\n\r\n{")
        sock.settimeout(5)
        assert sock.recv(65536).startswith(b"HTTP/1.1 415")
        body = orjson.dumps(PING)
        headers = "".join(f"{name}: {value}\r\n" for name, value in modern_headers("server/discover").items())
        sock.sendall(
            b"}  "
            + f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        sock.close()


# -- 5: heads and trailers are bounded while they arrive -----------------------------------------


@pytest.mark.parametrize(
    ("start", "endless"),
    [
        (b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Value: ", b"a"),
        (b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Nam", b"e"),
        (b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Many: 1\r\n" * 100, b"X-Many: 1\r\n"),
        (POST_HEAD + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nX-Trailer: ", b"t"),
        (POST_HEAD + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n", b"X-Trailer: 1\r\n"),
    ],
    ids=["header-value", "header-name", "many-headers", "trailer-value", "many-trailers"],
)
def test_a_head_or_trailers_that_never_end_get_431_at_the_limit(start: bytes, endless: bytes) -> None:
    """Eight connections each send a head (or trailers) that goes on for 4 MB: each gets 431
    at about 64 KiB, long before the head (or body) timeout, and the server's memory stays put."""
    with guarded("toolwire", "header_timeout=5", "body_timeout=5") as (port, process):
        before = rss_mib(process.pid)
        socks = [connect(port) for _ in range(8)]
        piece = endless * (8192 // len(endless))
        started = time.monotonic()
        for sock in socks:
            sock.sendall(start)
        with contextlib.suppress(OSError):
            for _ in range(4 * 1024 * 1024 // len(piece)):
                for sock in socks:
                    sock.sendall(piece)
        answers = in_parallel(socks, 5)
        took = time.monotonic() - started
        grown = rss_mib(process.pid) - before
        for sock in socks:
            sock.close()
        assert [status_of(answer) for answer, _ in answers] == [431] * 8, answers[0][0][:200]
        assert all(closed for _, closed in answers)
        assert b"head or trailers exceed 65536 bytes" in answers[0][0]
        assert took < 3, took
        assert grown < 10, f"{grown:.1f} MiB"
        assert ping(port) == 200


# -- 6: pipelining floods ------------------------------------------------------------------------


def test_pipelined_floods_that_are_not_read_hold_little_memory() -> None:
    """Ten connections each push up to 2 MB of pipelined requests and read nothing: the server
    parses only what it can answer, its memory stays put, and the answers come in order."""
    request = b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    flood = request * (2 * 1024 * 1024 // len(request))
    with guarded("toolwire", "idle_timeout=30", "header_timeout=30") as (port, process):
        ping(port)
        before = rss_mib(process.pid)
        socks = [connect(port) for _ in range(10)]
        sent = [0] * len(socks)
        deadline = time.monotonic() + 2
        for sock in socks:
            sock.setblocking(False)
        while time.monotonic() < deadline:
            for number, sock in enumerate(socks):
                with contextlib.suppress(BlockingIOError):
                    sent[number] += sock.send(flood[sent[number] : sent[number] + 65536])
            time.sleep(0.01)
        time.sleep(0.5)
        grown = rss_mib(process.pid) - before
        assert min(sent) > 256 * 1024, sent  # the server took more than one read's worth from each
        socks[0].setblocking(True)
        socks[0].settimeout(5)
        received = b""
        while received.count(b"HTTP/1.1 ") < 100:
            received += socks[0].recv(65536)
        answers = received.split(b"HTTP/1.1 ")[1:100]
        assert all(answer.startswith(b"406 ") for answer in answers), answers[0]
        assert ping(port) == 200
        for sock in socks:
            sock.close()
        assert grown < 15, f"{grown:.1f} MiB"


# -- 7: one address cannot take every connection ---------------------------------------------


@pytest.mark.parametrize("runner", ["toolwire", "uvicorn"])
def test_one_address_cannot_take_every_connection(runner: str) -> None:
    """50 half-sent heads from one address: 10 (its cap) are held until the head timeout, the
    rest get 429 at once, and a client from another address is served meanwhile; a trusted
    proxy's connections are not counted."""
    options = ("max_connections_per_client=10", "forwarded_allow_ips=127.0.0.9")
    with guarded(runner, *options) as (port, _):
        socks = [connect(port) for _ in range(50)]
        for sock in socks:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
        time.sleep(0.2)
        assert ping(port, "127.0.0.2") == 200
        proxied = [connect(port, "127.0.0.9") for _ in range(15)]
        time.sleep(0.1)
        assert ping(port, "127.0.0.9") == 200
        answers = in_parallel(socks, 5)
        for sock in socks + proxied:
            sock.close()
        statuses = sorted(status_of(answer) for answer, _ in answers)
        assert statuses == [408] * 10 + [429] * 40, statuses
        refused = next(answer for answer, _ in answers if status_of(answer) == 429)
        assert b"this client already has 10 connections open" in refused


def test_an_ipv6_client_is_its_64() -> None:
    assert client_group("2001:db8:1:2:aaaa::1") == client_group("2001:db8:1:2:bbbb::2") == "2001:db8:1:2::/64"
    assert client_group("2001:db8:1:3::1") != client_group("2001:db8:1:2::1")
    assert client_group("::ffff:192.0.2.7") == "192.0.2.7"
    assert client_group("192.0.2.7") == "192.0.2.7"


# -- 8: behind a trusted reverse proxy --------------------------------------------------------


def test_forwarding_headers_name_the_client_only_from_trusted_proxies() -> None:
    proxies = TrustedProxies("127.0.0.1, 10.0.0.0/8")

    def scope(peer: str, *headers: tuple[bytes, bytes]) -> dict[str, object]:
        return {"client": (peer, 4000), "headers": list(headers)}

    xff = b"x-forwarded-for"
    assert proxies.client(scope("127.0.0.1", (xff, b"203.0.113.5"))) == "203.0.113.5"
    # the client's own header comes first: the proxy's entry, last, is believed
    assert proxies.client(scope("127.0.0.1", (xff, b"198.51.100.1, 203.0.113.5"))) == "203.0.113.5"
    assert proxies.client(scope("127.0.0.1", (xff, b"198.51.100.1"), (xff, b"203.0.113.5, 10.1.2.3"))) == "203.0.113.5"
    assert proxies.client(scope("192.0.2.1", (xff, b"203.0.113.5"))) == "192.0.2.1"  # not a proxy of ours
    assert proxies.client(scope("127.0.0.1")) == "127.0.0.1"
    assert proxies.client(scope("127.0.0.1", (xff, b"10.0.0.1"))) == "10.0.0.1"  # all trusted: the first
    forwarded = b"forwarded"
    assert proxies.client(scope("127.0.0.1", (forwarded, b'for="[2001:db8::7]:4711";proto=https'))) == "2001:db8::7"
    assert proxies.client(scope("127.0.0.1", (forwarded, b"for=192.0.2.60:80, for=10.0.0.2"))) == "192.0.2.60"
    # X-Forwarded-For is the one read when both are there
    assert proxies.client(scope("127.0.0.1", (forwarded, b"for=192.0.2.60"), (xff, b"203.0.113.5"))) == "203.0.113.5"
    assert forwarded_chain([(xff, b" , 192.0.2.1:8080")]) == ["192.0.2.1"]
    assert TrustedProxies("*").client(scope("192.0.2.1", (xff, b"203.0.113.5"))) == "203.0.113.5"
    assert TrustedProxies().client(scope("127.0.0.1", (xff, b"203.0.113.5"))) == "127.0.0.1"
    with pytest.raises(ValueError, match="a trusted proxy is an address, a network or"):
        TrustedProxies("10.0.0.0/33")


@pytest.mark.parametrize("runner", ["toolwire", "uvicorn"])
async def test_sessions_are_capped_per_client_behind_a_trusted_proxy(runner: str) -> None:
    """Through the proxy at 127.0.0.1, one client opening more sessions than its cap (5) ends
    only its own; a peer that is not a trusted proxy cannot choose who it is."""
    with guarded(runner, "forwarded_allow_ips=127.0.0.1") as (port, _):
        url = f"http://127.0.0.1:{port}/mcp"
        ping_body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        async with httpx.AsyncClient(timeout=10) as proxy:
            proxy.headers["X-Forwarded-For"] = "203.0.113.2"
            theirs = await open_session(proxy, url)
            proxy.headers["X-Forwarded-For"] = "203.0.113.1"
            opened = [await open_session(proxy, url) for _ in range(6)]
            gone = await proxy.post(url, json=ping_body, headers=opened[0])
            proxy.headers["X-Forwarded-For"] = "203.0.113.2"
            kept = await proxy.post(url, json=ping_body, headers=theirs)
        assert (gone.status_code, kept.status_code) == (404, 200)
        transport = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
        async with httpx.AsyncClient(timeout=10, transport=transport) as stranger:
            stranger.headers["X-Forwarded-For"] = "203.0.113.4"
            first = await open_session(stranger, url)
            stranger.headers["X-Forwarded-For"] = "203.0.113.3"
            for _ in range(5):
                await open_session(stranger, url)
            stranger.headers["X-Forwarded-For"] = "203.0.113.4"
            assert (await stranger.post(url, json=ping_body, headers=first)).status_code == 404


async def test_anonymous_rate_limits_are_per_client_behind_a_trusted_proxy() -> None:
    """``toolwire run --forwarded-allow-ips``: each client behind the proxy has its own bucket
    (2 calls a minute), in either protocol era."""
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "toolwire",
        "run",
        LIMITED,
        "--http",
        str(port),
        "--forwarded-allow-ips",
        "127.0.0.1",
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        await asyncio.to_thread(wait_for_port, port, process)
        url = f"http://127.0.0.1:{port}/mcp"
        async with httpx.AsyncClient(timeout=10) as http:

            async def modern(client: str) -> bool:
                headers = modern_headers("tools/call", "echo", **{"X-Forwarded-For": client})
                reply = await http.post(url, json=modern_call("echo", {"text": "hi"}), headers=headers)
                return not reply.json()["result"].get("isError", False)

            assert [await modern("203.0.113.1") for _ in range(3)] == [True, True, False]
            assert [await modern("203.0.113.2") for _ in range(3)] == [True, True, False]
            http.headers["X-Forwarded-For"] = "203.0.113.3"
            sessions = [await open_session(http, url) for _ in range(2)]
            call = {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "x"}},
            }
            refused = []
            for number in range(3):
                reply = await http.post(url, json=call, headers=sessions[number % 2])
                refused.append(reply.json()["result"].get("isError", False))
            assert refused == [False, False, True]  # a new session is not a new bucket
    finally:
        process.kill()
        process.wait(10)


# -- 9: protocol --------------------------------------------------------------------------------


async def test_a_notification_with_params_that_are_not_an_object_is_not_answered() -> None:
    with guarded("toolwire") as (port, _):
        url = f"http://127.0.0.1:{port}/mcp"
        async with httpx.AsyncClient(timeout=10) as http:
            session = await open_session(http, url)
            for params in ([1, 2], "x", 3):
                body = {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}
                reply = await http.post(url, json=body, headers=session)
                assert (reply.status_code, reply.content) == (202, b"")
                modern = await http.post(url, json=body, headers=modern_headers("notifications/progress"))
                assert (modern.status_code, modern.content) == (202, b"")
    with RawClient(toolwire_command(LIBRARY)) as raw:
        raw.initialize()
        raw.send({"jsonrpc": "2.0", "method": "notifications/progress", "params": [1, 2]})
        raw.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"})
        raw.send({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": []})  # a request: answered
        answer = raw.receive()
        assert answer["id"] == 7 and answer["error"]["code"] == -32602, answer
        assert raw.request("ping")["result"] == {}


async def test_a_protocol_version_header_other_than_the_sessions_gets_400() -> None:
    with guarded("toolwire") as (port, _):
        url = f"http://127.0.0.1:{port}/mcp"
        async with httpx.AsyncClient(timeout=10) as http:
            session = await open_session(http, url)  # 2025-11-25
            body = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
            assert (await http.post(url, json=body, headers=session)).status_code == 200
            other = {**session, "MCP-Protocol-Version": "2025-06-18"}
            refused = await http.post(url, json=body, headers=other)
            assert refused.status_code == 400 and refused.json()["id"] == 3
            message = refused.json()["error"]["message"]
            assert "MCP-Protocol-Version '2025-06-18' is not this session's protocol version 2025-11-25" in message
            stream = await http.get(url, headers={**other, "Accept": "text/event-stream"})
            assert stream.status_code == 400
            assert (await http.delete(url, headers=other)).status_code == 400
            without = {name: value for name, value in session.items() if name != "MCP-Protocol-Version"}
            assert (await http.post(url, json=body, headers=without)).status_code == 200  # absent: allowed
            assert (await http.delete(url, headers=session)).status_code == 200
            opened = await http.post(
                url, json=initialize("2025-06-18"), headers={**BASE, "MCP-Protocol-Version": LEGACY}
            )
            assert opened.status_code == 200  # the initialize request negotiates: it is not checked


def test_the_new_options_of_toolwire_run_are_checked() -> None:
    from tests.support.clirun import toolwire

    for options, said in (
        (["--http", "8", "--forwarded-allow-ips", "10.0.0.0/33"], "--forwarded-allow-ips: a trusted proxy is an"),
        (
            ["--http", "8", "--max-connections-per-client", "0"],
            "--max-connections-per-client: expected a number above 0",
        ),
        (["--forwarded-allow-ips", "127.0.0.1"], "go with --http"),
    ):
        done = toolwire("run", LIBRARY, *options)
        assert done.returncode == 2 and said in done.stderr, done.stderr


# -- 10: Host and Origin, once each and well formed, before anything else ------------------------

PING_BODY = orjson.dumps(PING)
PING_HEADERS = "".join(f"{name}: {value}\r\n" for name, value in modern_headers("server/discover").items())


def asked(path: str, *lines: str) -> bytes:
    """A ``server/discover`` POST to ``path`` with the head ``lines`` (Host among them)."""
    head = f"POST {path} HTTP/1.1\r\n" + "".join(line + "\r\n" for line in lines) + PING_HEADERS
    return (head + f"Content-Length: {len(PING_BODY)}\r\nConnection: close\r\n\r\n").encode() + PING_BODY


#: Requests that pass DNS-rebinding checks only if a server reads the wrong Host or Origin.
TWO_FACED = {
    "two hosts": ("/mcp", "Host: evil.example", "Host: 127.0.0.1"),
    "two origins": ("/mcp", "Host: 127.0.0.1", "Origin: http://evil.example", "Origin: http://127.0.0.1"),
    "two hosts elsewhere": ("/elsewhere", "Host: evil.example", "Host: localhost"),
    "user info in the host": ("/mcp", "Host: localhost:x@evil.example"),
    "a port that is a name": ("/mcp", "Host: localhost:evil.example"),
    "a path in the host": ("/mcp", "Host: localhost:80/evil-path"),
    "a fragment in the host": ("/mcp", "Host: localhost#@evil.example"),
}


def serving_pings(port: int) -> None:
    """Wait until the server answers (granian binds its own socket after the port was seen)."""
    deadline = time.monotonic() + 20
    while True:
        try:
            if ping(port) == 200:
                return
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise


@pytest.mark.parametrize("runner", ["toolwire", "uvicorn", "granian"])
def test_two_hosts_or_origins_and_malformed_hosts_get_400_first(runner: str) -> None:
    with guarded(runner) as (port, _):
        serving_pings(port)
        for what, (path, *lines) in TWO_FACED.items():
            sock = connect(port)
            sock.sendall(asked(path, *lines))
            answer, _ = read_until_closed(sock, 10)
            assert status_of(answer) == 400, (what, answer[:300])
            assert b"Bad Request" in answer, (what, answer[:300])
        sock = connect(port)
        sock.sendall(asked("/mcp", "Host: 127.0.0.1", "Origin: http://localhost:x@evil.example"))
        answer, _ = read_until_closed(sock, 10)
        assert status_of(answer) == 403, answer[:300]
        sock = connect(port)
        sock.sendall(asked("/mcp", "Host: 127.0.0.1:8000", "Origin: http://localhost:3000"))
        assert status_of(read_until_closed(sock, 10)[0]) == 200
        assert ping(port) == 200
