"""toolwire's HTTP/1.1 client (``toolwire.client.http11`` and its neighbours) over real sockets on 127.0.0.1.

Each test serves a small scripted HTTP server (``asyncio.start_server``) that answers as the
test needs: lengths, chunks, streams, connections closed between and during requests, no
answer at all, TLS with a certificate made here. The client is used as the Streamable HTTP
transport uses it: ``httpx.AsyncClient`` on :class:`Http11Transport`, and the direct route.
The last tests put the :class:`Client` before a toolwire server (uvicorn, in this process)
that redirects, sets cookies or compresses its answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import gzip
import ipaddress
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.httpserve import InProcess
from toolwire import Server
from toolwire.client import Client
from toolwire.client.direct_route import DirectRoute
from toolwire.client.http11 import ConnectionPool, Http11Transport
from toolwire.client.http11_connection import Refused, TooLarge
from toolwire.client.http_reply import DECODE_STEP

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def read_request(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
    """One request: its head and its body (by ``Content-Length``, or chunked)."""
    head = await reader.readuntil(b"\r\n\r\n")
    lowered = head.lower()
    if b"transfer-encoding: chunked" in lowered:
        body = b""
        while True:
            size = int((await reader.readline()).strip(), 16)
            chunk = await reader.readexactly(size + 2)
            if size == 0:
                return head, body
            body += chunk[:-2]
    length = 0
    for line in lowered.split(b"\r\n"):
        if line.startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return head, await reader.readexactly(length)


def answer(body: bytes, status: str = "200 OK", extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 %s\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s" % (
        status.encode(),
        extra,
        len(body),
        body,
    )


class Scripted:
    """``handler`` runs for each connection; ``connections`` counts them."""

    def __init__(self, handler: Handler, tls: ssl.SSLContext | None = None) -> None:
        self.handler = handler
        self.tls = tls
        self.connections = 0
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
                await self.handler(reader, writer)
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, ssl.SSLError, asyncio.CancelledError):
                await writer.wait_closed()

    async def __aenter__(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        port = self._server.sockets[0].getsockname()[1]
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{port}/mcp"

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in self._handlers:
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await self._server.wait_closed()


def keep_answering(server_log: list[tuple[bytes, bytes]], body: bytes = b'{"ok":true}') -> Handler:
    """Answer every request on the connection with ``body``, keeping it open."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            request = await read_request(reader)
            server_log.append(request)
            writer.write(answer(body))
            await writer.drain()

    return handler


@contextlib.asynccontextmanager
async def client(**options: Any) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=Http11Transport(**options), timeout=5.0) as http:
        yield http


async def test_connections_are_kept_alive_and_reused() -> None:
    log: list[tuple[bytes, bytes]] = []
    server = Scripted(keep_answering(log))
    async with server as url, client() as http:
        for number in range(5):
            reply = await http.post(url, content=b'{"n":%d}' % number)
            assert reply.status_code == 200 and reply.json() == {"ok": True}
    assert server.connections == 1
    assert [body for _, body in log] == [b'{"n":%d}' % number for number in range(5)]
    assert log[0][0].startswith(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:")


async def test_requests_at_once_open_a_connection_each_and_all_are_answered() -> None:
    log: list[tuple[bytes, bytes]] = []
    server = Scripted(keep_answering(log))
    async with server as url, client() as http:
        replies = await asyncio.gather(*(http.post(url, content=b"x") for _ in range(8)))
        assert all(reply.status_code == 200 for reply in replies)
        await asyncio.gather(*(http.post(url, content=b"x") for _ in range(8)))
    assert server.connections == 8


async def test_chunked_answers_split_anywhere_are_read_whole() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_request(reader)
            wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n"
            for at in range(0, len(wire), 3):  # three bytes at a time
                writer.write(wire[at : at + 3])
                await writer.drain()
                await asyncio.sleep(0)

    server = Scripted(handler)
    async with server as url, client() as http:
        assert (await http.get(url)).content == b"hello, world"
        assert (await http.get(url)).content == b"hello, world"
    assert server.connections == 1


async def test_a_streamed_request_body_is_sent_chunked() -> None:
    log: list[tuple[bytes, bytes]] = []

    async def parts() -> AsyncIterator[bytes]:
        yield b"first "
        yield b""
        yield b"second"

    async with Scripted(keep_answering(log)) as url, client() as http:
        reply = await http.post(url, content=parts())
        assert reply.status_code == 200
    head, body = log[0]
    assert b"transfer-encoding: chunked" in head.lower() and body == b"first second"


async def test_an_event_stream_is_read_as_it_comes() -> None:
    first_read = asyncio.Event()

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        event = b"data: one\r\n\r\n"
        writer.write(b"%x\r\n%s\r\n" % (len(event), event))
        await writer.drain()
        await first_read.wait()  # the second event leaves only once the first was read
        event = b"data: two\n\n"
        writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(event), event))
        await writer.drain()

    lines = []
    async with Scripted(handler) as url, client() as http, http.stream("GET", url) as reply:
        async for line in reply.aiter_lines():
            lines.append(line)
            if line == "data: one":
                first_read.set()
    assert lines == ["data: one", "", "data: two", ""]


async def test_a_large_body_read_slowly_arrives_whole() -> None:
    body = bytes(range(256)) * 8192  # 2 MiB: reading pauses while it waits to be read

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(answer(body))
        await writer.drain()

    async with Scripted(handler) as url, client() as http, http.stream("GET", url) as reply:
        await asyncio.sleep(0.2)
        received = b"".join([chunk async for chunk in reply.aiter_raw()])
    assert received == body


async def test_an_answer_without_length_lasts_until_the_connection_closes() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nall of it")
        await writer.drain()

    server = Scripted(handler)
    async with server as url, client() as http:
        assert (await http.get(url)).text == "all of it"
        assert (await http.get(url)).text == "all of it"  # on a new connection
    assert server.connections == 2


async def test_a_connection_the_server_closes_between_requests_is_replaced() -> None:
    log: list[tuple[bytes, bytes]] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        log.append(await read_request(reader))
        writer.write(answer(b"{}"))  # kept alive as far as the client knows, then closed
        await writer.drain()

    server = Scripted(handler)
    async with server as url, client() as http:
        for _ in range(3):
            assert (await http.post(url, content=b"again")).status_code == 200
            await asyncio.sleep(0.05)
        for _ in range(3):  # at once after the answer: the close may not have been seen yet
            assert (await http.post(url, content=b"again")).status_code == 200
    assert len(log) == 6 and server.connections == 6


async def test_a_server_that_closes_before_answering_is_a_remote_protocol_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)

    async with Scripted(handler) as url, client() as http:
        with pytest.raises(httpx.RemoteProtocolError):
            await http.post(url, content=b"{}")


async def test_a_server_that_closes_in_the_middle_of_a_body_is_a_remote_protocol_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part")
        await writer.drain()

    async with Scripted(handler) as url, client() as http:
        with pytest.raises(httpx.RemoteProtocolError):
            await http.get(url)


async def test_an_answer_that_is_not_http_is_a_remote_protocol_error() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"SSH-2.0-OpenSSH\r\n\r\n")
        await writer.drain()
        await asyncio.sleep(1)

    async with Scripted(handler) as url, client() as http:
        with pytest.raises(httpx.RemoteProtocolError):
            await http.get(url)


async def test_a_server_that_never_answers_is_a_read_timeout() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await asyncio.sleep(10)

    async with Scripted(handler) as url, client() as http:
        with pytest.raises(httpx.ReadTimeout):
            await http.get(url, timeout=0.2)


async def test_a_stream_that_stops_is_a_read_timeout_while_reading() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 1000\r\n\r\ndata: x\n")
        await writer.drain()
        await asyncio.sleep(10)

    async with Scripted(handler) as url, client() as http, http.stream("GET", url, timeout=0.2) as reply:
        lines = reply.aiter_lines()
        assert await anext(lines) == "data: x"
        with pytest.raises(httpx.ReadTimeout):
            await anext(lines)


async def test_a_server_that_stops_reading_a_streamed_body_is_a_write_timeout() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(10)  # reads nothing: the socket's buffers fill up

    async def body() -> AsyncIterator[bytes]:
        for _ in range(256):
            yield b"x" * (1 << 20)

    async with Scripted(handler) as url, client() as http:
        with pytest.raises(httpx.WriteTimeout):
            await http.post(url, content=body(), timeout=httpx.Timeout(5.0, write=0.2))


async def test_no_room_for_another_connection_is_a_pool_timeout() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf")  # the rest never comes
        await writer.drain()
        await asyncio.sleep(10)

    async with Scripted(handler) as url, client(max_connections=1) as http, http.stream("GET", url):
        with pytest.raises(httpx.PoolTimeout):
            await http.get(url, timeout=httpx.Timeout(5.0, pool=0.2))


async def test_a_connection_is_freed_for_the_next_request_when_an_answer_ends() -> None:
    log: list[tuple[bytes, bytes]] = []
    server = Scripted(keep_answering(log))
    async with server as url, client(max_connections=1) as http:
        replies = await asyncio.gather(*(http.post(url, content=b"%d" % n) for n in range(5)))
    assert [reply.status_code for reply in replies] == [200] * 5
    assert server.connections == 1


def endless(start: bytes, filler: bytes, end: bytes, size: int = 20_000_000) -> Handler:
    """Answer one request with ``start``, ``size`` bytes of ``filler``, ``end``; note in
    ``written`` how much went out before the client closed the connection."""

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(start)
        for _ in range(size // len(filler)):
            writer.write(filler)
            await writer.drain()
            handler.written += len(filler)  # type: ignore[attr-defined]
        writer.write(end)
        await writer.drain()

    handler.written = 0  # type: ignore[attr-defined]
    return handler


@pytest.mark.parametrize(
    ("start", "filler", "end"),
    [
        (b"HTTP/1.1 200 OK\r\n", b"X-Junk: " + b"x" * 1000 + b"\r\n", b"Content-Length: 0\r\n\r\n"),
        (b"HTTP/1.1 200 OK\r\nX-Junk: ", b"x" * 65536, b"\r\nContent-Length: 0\r\n\r\n"),
        (b"HTTP/1.1 100 Continue\r\n\r\n", b"HTTP/1.1 100 Continue\r\n\r\n" * 100, b"HTTP/1.1 204 No\r\n\r\n"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\nX-Trailer: ", b"x" * 65536, b"\r\n\r\n"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;ext=", b"x" * 65536, b"\r\nx\r\n0\r\n\r\n"),
    ],
    ids=["headers", "header-value", "informational", "trailer", "chunk-extension"],
)
async def test_an_answer_without_body_past_64_kb_is_refused_and_its_connection_closed(
    start: bytes, filler: bytes, end: bytes
) -> None:
    handler = endless(start, filler, end)
    async with Scripted(handler) as url, client() as http:
        with pytest.raises(Refused, match=r"head \(or trailers\) of more than 65536 bytes"):
            await http.get(url)
    assert handler.written < 10_000_000  # type: ignore[attr-defined]


async def test_a_reply_past_its_limit_is_too_large_whole_by_line_or_decompressed() -> None:
    bomb = gzip.compress(b"x" * 50_000_000)  # 50 kB

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head, _ = await read_request(reader)
            if b"/bomb" in head:
                writer.write(answer(bomb, extra=b"Content-Encoding: gzip\r\n"))
            else:
                writer.write(answer(b"x" * 200_000 + b"\n" + b"y" * 10))
            await writer.drain()

    async with Scripted(handler) as url:
        transport = Http11Transport()
        http = httpx.AsyncClient(transport=transport, timeout=5.0)
        direct = DirectRoute(http, transport, url)
        bombed = DirectRoute(http, transport, url.replace("/mcp", "/bomb"))
        for limit, fits in ((300_000, True), (100_000, False)):
            reply = await direct.send("GET", {})
            assert reply is not None
            if fits:
                assert len(await reply.aread(limit)) == 200_011
            else:
                with pytest.raises(TooLarge):
                    await reply.aread(limit)
            reply = await direct.send("GET", {})
            assert reply is not None
            if fits:
                assert [len(line) async for line in reply.aiter_lines(limit)] == [200_000, 10]
            else:
                with pytest.raises(TooLarge):
                    [line async for line in reply.aiter_lines(limit)]
            await reply.aclose()
        reply = await bombed.send("GET", {})
        assert reply is not None
        sizes = [len(chunk) async for chunk in reply.aiter_bytes()]
        assert sum(sizes) == 50_000_000 and max(sizes) <= DECODE_STEP
        reply = await bombed.send("GET", {})
        assert reply is not None
        with pytest.raises(TooLarge):
            await reply.aread(4 * 1024 * 1024)
        await http.aclose()


async def test_a_refused_connection_is_a_connect_error() -> None:
    async with Scripted(keep_answering([])) as url:
        pass  # closed: nothing listens there any more
    async with client() as http:
        with pytest.raises(httpx.ConnectError):
            await http.get(url)


async def test_a_header_with_a_line_break_is_refused_before_anything_is_sent() -> None:
    server = Scripted(keep_answering([]))
    async with server as url, client() as http:
        with pytest.raises(httpx.LocalProtocolError):
            await http.get(url, headers={"X-Evil": "a\r\nInjected: yes"})
    assert server.connections == 0


async def test_head_requests_go_through_httpx_own_transport() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n")  # a HEAD answer has no body
        await writer.drain()

    async with Scripted(handler) as url, client() as http:
        reply = await http.head(url)
    assert reply.status_code == 200 and reply.headers["content-length"] == "1234"


def certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, as PEM files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


async def test_https_with_a_trusted_certificate_and_refused_with_an_unknown_one(tmp_path: Path) -> None:
    cert_file, key_file = certificate(tmp_path)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert_file, key_file)
    log: list[tuple[bytes, bytes]] = []
    server = Scripted(keep_answering(log), tls=tls)
    async with server as url:
        async with client(verify=ssl.create_default_context(cafile=cert_file)) as http:
            for _ in range(3):
                reply = await http.post(url, content=b"secret")
                assert reply.json() == {"ok": True}
        assert server.connections == 1 and [body for _, body in log] == [b"secret"] * 3
        async with client() as http:  # the default trust does not know this certificate
            with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
                await http.get(url)


async def test_the_pool_alone_sends_a_request_and_reads_its_answer() -> None:
    log: list[tuple[bytes, bytes]] = []
    async with Scripted(keep_answering(log, b"pong")) as url:
        port = int(url.split(":")[2].split("/")[0])
        pool = ConnectionPool()
        headers = [(b"Host", b"127.0.0.1"), (b"Content-Length", b"4")]
        reply = await pool.request(b"POST", ("http", "127.0.0.1", port), b"/mcp", headers, b"ping")
        assert (reply.status, await reply.read()) == (200, b"pong")
        await pool.aclose()
    assert log == [(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\n\r\n", b"ping")]


# -- the direct route ----------------------------------------------------------------------


async def direct_route(url: str) -> tuple[httpx.AsyncClient, DirectRoute]:
    transport = Http11Transport()
    http = httpx.AsyncClient(transport=transport, timeout=5.0, follow_redirects=True)
    return http, DirectRoute(http, transport, url)


async def test_the_direct_route_sends_what_httpx_would_send() -> None:
    log: list[tuple[bytes, bytes]] = []
    async with Scripted(keep_answering(log)) as url:
        http, direct = await direct_route(url)
        reply = await direct.send("POST", {"Accept": "application/json", "X-Custom": "1"}, b"{}")
        assert reply is not None and reply.status_code == 200 and await reply.aread() == b'{"ok":true}'
        await http.post(url, content=b"{}", headers={"Accept": "application/json", "X-Custom": "1"})
        await http.aclose()

    def header_set(head: bytes) -> set[bytes]:
        return {line.lower() for line in head.split(b"\r\n")[1:] if line}

    assert header_set(log[0][0]) == header_set(log[1][0]) and log[0][1] == log[1][1]


async def test_the_direct_route_hands_cookies_to_httpx_and_stops() -> None:
    log: list[tuple[bytes, bytes]] = []

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            log.append(await read_request(reader))
            writer.write(answer(b"{}", extra=b"Set-Cookie: sticky=replica-2; Path=/\r\n"))
            await writer.drain()

    async with Scripted(handler) as url:
        http, direct = await direct_route(url)
        assert direct.usable
        assert await direct.send("POST", {}, b"{}") is not None
        assert not direct.usable and http.cookies["sticky"] == "replica-2"
        await http.post(url, content=b"{}")
        await http.aclose()
    assert b"cookie: sticky=replica-2" in log[1][0].lower()


async def test_the_direct_route_leaves_a_redirect_to_httpx() -> None:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head, _ = await read_request(reader)
            if head.startswith(b"POST /mcp "):
                writer.write(b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /moved\r\nContent-Length: 0\r\n\r\n")
            else:
                writer.write(answer(b'{"moved":true}'))
            await writer.drain()

    async with Scripted(handler) as url:
        http, direct = await direct_route(url)
        assert await direct.send("POST", {}, b"{}") is None
        assert not direct.usable
        assert (await http.post(url, content=b"{}")).json() == {"moved": True}
        await http.aclose()


async def test_the_direct_route_decodes_gzip_and_splits_lines_like_httpx() -> None:
    text = "data: é\r\n\r\ndata: two\rdata: three\n\n"
    body = gzip.compress(text.encode())

    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            await read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n")
            for at in range(0, len(body), 7):
                part = body[at : at + 7]
                writer.write(b"%x\r\n%s\r\n" % (len(part), part))
                await writer.drain()
                await asyncio.sleep(0)
            writer.write(b"0\r\n\r\n")

    async with Scripted(handler) as url:
        http, direct = await direct_route(url)
        reply = await direct.send("GET", {})
        assert reply is not None
        lines = [line async for line in reply.aiter_lines()]
        async with http.stream("GET", url) as expected:
            assert lines == [line async for line in expected.aiter_lines()]
        reply = await direct.send("GET", {})
        assert reply is not None and await reply.aread() == text.encode()
        await http.aclose()
    assert lines == ["data: é", "", "data: two", "data: three", ""]


async def test_the_direct_route_refuses_codings_it_cannot_decode() -> None:
    async with Scripted(keep_answering([])) as url:
        http, direct = await direct_route(url)
        assert direct.allows({"Authorization": "Bearer x"})
        assert not direct.allows({"Accept-Encoding": "br"})
        await http.aclose()


# -- the Client --------------------------------------------------------------------------------

PROTOCOLS = ["2026-07-28", "2025-11-25"]
App = Callable[[dict[str, Any], Any, Any], Awaitable[None]]


def echo_app() -> Any:
    server = Server("echo", "1.0.0")

    @server.tool
    async def echo(text: str) -> str:
        """Echo the text."""
        return text

    return server.http_app()


async def calls(client: Client) -> list[str]:
    return [(await client.call_tool("echo", {"text": f"call {n}"})).text for n in range(3)]


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_client_follows_a_server_that_redirects(protocol: str) -> None:
    app, redirected = echo_app(), []

    async def moved(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/old":
            redirected.append(scope["method"])
            await send({"type": "http.response.start", "status": 307, "headers": [(b"location", b"/mcp")]})
            await send({"type": "http.response.body", "body": b""})
            return
        await app(scope, receive, send)

    async with InProcess(moved) as url, Client(url.replace("/mcp", "/old"), protocol=protocol) as client:
        assert await calls(client) == ["call 0", "call 1", "call 2"]
    assert "POST" in redirected


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_client_sends_back_the_cookie_a_server_sets(protocol: str) -> None:
    app, cookies = echo_app(), []

    async def sticky(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        cookies.append(dict(scope["headers"]).get(b"cookie"))

        async def with_cookie(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message["headers"], (b"set-cookie", b"replica=2; Path=/")]}
            await send(message)

        await app(scope, receive, with_cookie)

    async with InProcess(sticky) as url, Client(url, protocol=protocol) as client:
        assert await calls(client) == ["call 0", "call 1", "call 2"]
    assert cookies[0] is None and cookies[-1] == b"replica=2"


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_the_client_reads_answers_a_server_compresses(protocol: str) -> None:
    app, compressed = echo_app(), []

    async def gzipping(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or b"gzip" not in dict(scope["headers"]).get(b"accept-encoding", b""):
            await app(scope, receive, send)
            return
        held: list[dict[str, Any]] = []
        passing = False

        async def compress(message: dict[str, Any]) -> None:
            nonlocal passing
            start = message if message["type"] == "http.response.start" else held[0] if held else None
            passing = passing or (start is not None and (b"content-type", b"application/json") not in start["headers"])
            if passing:
                await send(message)  # streams and empty answers go as they are
                return
            held.append(message)
            if message["type"] != "http.response.body" or message.get("more_body"):
                return
            start, body = held[0], b"".join(part.get("body", b"") for part in held[1:])
            headers = [(name, value) for name, value in start["headers"] if name.lower() != b"content-length"]
            if body:
                body = gzip.compress(body)
                headers.append((b"content-encoding", b"gzip"))
                compressed.append(len(body))
            headers.append((b"content-length", b"%d" % len(body)))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body})

        await app(scope, receive, compress)

    async with InProcess(gzipping) as url, Client(url, protocol=protocol) as client:
        assert await calls(client) == ["call 0", "call 1", "call 2"]
        assert client.transport._direct.usable  # type: ignore[attr-defined]
    assert compressed


async def test_with_a_proxy_in_the_environment_the_client_takes_httpx_own_transport(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    async with InProcess(echo_app()) as url, Client(url) as client:
        assert await calls(client) == ["call 0", "call 1", "call 2"]
        assert client.transport._direct is None  # type: ignore[attr-defined]
