"""toolwire's HTTP/1.1 server against h11, request by request: a corpus of raw requests
(valid, malformed, smuggling-shaped) goes over a real socket to ``wire.serve`` (an
application that echoes what it was given) and through h11's server-side parser, and what
each made of the bytes must agree: the same requests (method, target, headers, body), in the
same number (where one request ends is where the next begins: nothing can be smuggled), and
the same end (refused, waiting for more, or closed).

Where the two differ on purpose, ``KNOWN`` says how and why; an entry there that stops
differing fails too, so the list stays true.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import h11
import orjson

from toolwire.transports.http import wire

Parsed = tuple[list[tuple[str, str, list[tuple[str, str]], str]], str]

R = b"\r\n"
CORPUS: dict[str, bytes] = {
    # -- valid
    "get": b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n",
    "get-query": b"GET /a/b?c=1&d=%20 HTTP/1.1\r\nHost: x\r\n\r\n",
    "post-length": b"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
    "post-empty": b"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
    "chunked": b"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nA\r\n0123456789\r\n0\r\n\r\n",
    "chunk-extension": b"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;x=1\r\nabc\r\n0\r\n\r\n",
    "chunked-trailers": b"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\nX-T: 1\r\n\r\n",
    "pipelined": b"GET /1 HTTP/1.1\r\nHost: x\r\n\r\nPOST /2 HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nokGET /3 HTTP/1.1\r\nHost: x\r\n\r\n",
    "http-1.0": b"GET /old HTTP/1.0\r\n\r\n",
    "connection-close": b"GET /1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n",
    "whitespace-around-value": b"GET / HTTP/1.1\r\nHost: x\r\nX-A:   spaced  \r\nX-B:\tt\t\r\n\r\n",
    "empty-value": b"GET / HTTP/1.1\r\nHost: x\r\nX-Empty:\r\n\r\n",
    "repeated-header": b"GET / HTTP/1.1\r\nHost: x\r\nX-R: 1\r\nX-R: 2\r\n\r\n",
    "absolute-form": b"GET http://x/abs?q=1 HTTP/1.1\r\nHost: x\r\n\r\n",
    "asterisk": b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
    "obs-text-value": b"GET / HTTP/1.1\r\nHost: x\r\nX-U: caf\xc3\xa9\r\n\r\n",
    "percent-path": b"GET /a%2Fb%20c HTTP/1.1\r\nHost: x\r\n\r\n",
    "same-length-twice": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab",
    "incomplete-head": b"GET / HTTP/1.1\r\nHost: x\r\n",
    "incomplete-body": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc",
    # -- malformed
    "garbage": b"NOT HTTP AT ALL\r\n\r\n",
    "no-version": b"GET /\r\n\r\n",
    "http-2.0": b"GET / HTTP/2.0\r\nHost: x\r\n\r\n",
    "http-1.2": b"GET / HTTP/1.2\r\nHost: x\r\n\r\n",
    "space-in-name": b"GET / HTTP/1.1\r\nHost: x\r\nX Y: z\r\n\r\n",
    "space-before-colon": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length : 1\r\n\r\nz",
    "no-colon": b"GET / HTTP/1.1\r\nHost: x\r\nJustAName\r\n\r\n",
    "folded": b"GET / HTTP/1.1\r\nHost: x\r\nX-F: a\r\n folded\r\n\r\n",
    "nul-in-value": b"GET / HTTP/1.1\r\nHost: x\r\nX-N: a\x00b\r\n\r\n",
    "cr-in-value": b"GET / HTTP/1.1\r\nHost: x\r\nX-N: a\rb\r\n\r\n",
    "two-lengths": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
    "length-list": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 2\r\n\r\nab",
    "length-plus": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +2\r\n\r\nab",
    "length-negative": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
    "length-letters": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2a\r\n\r\nab",
    "length-overflow": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n",
    "chunk-size-letters": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n",
    "chunk-size-overflow": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\n",
    "chunk-no-crlf": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX0\r\n\r\n",
    # -- smuggling-shaped
    "cl-te": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
    "te-cl": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n5\r\nGET /\r\n0\r\n\r\n",
    "te-not-last": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
    "te-identity": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\nContent-Length: 3\r\n\r\nabc",
    "te-gzip-chunked": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n",
    "te-twice": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "te-upper": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: CHUNKED\r\n\r\n1\r\na\r\n0\r\n\r\n",
    "te-xchunked": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n1\r\na\r\n0\r\n\r\n",
    "te-tab": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\tchunked\r\n\r\n1\r\na\r\n0\r\n\r\n",
    "te-folded": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding:\r\n chunked\r\n\r\n1\r\na\r\n0\r\n\r\n",
    "te-space-before-colon": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n1\r\na\r\n0\r\n\r\n",
    "te-in-http-1.0": b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n",
    "body-then-request": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nXGET /next HTTP/1.1\r\nHost: x\r\n\r\n",
    "lf-only": b"GET / HTTP/1.1\nHost: x\n\n",
    "cr-only": b"GET / HTTP/1.1\rHost: x\r\r",
    "bare-lf-in-chunk": b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\na\r\n0\r\n\r\n",
    "get-with-body": b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /2 HTTP/1.1\r\nHost: x\r\n\r\n",
}

#: Where toolwire's server (llhttp, strict) parses differently from h11, on purpose. In each,
#: toolwire stops earlier (it refuses what h11 takes): it never reads a request differently.
KNOWN: dict[str, str] = {
    "connection-close": "bytes after a Connection: close request are ignored (h11 calls them an error); "
    "both answer the request and close",
    "same-length-twice": "two Content-Length headers are refused even when equal (RFC 9112 6.3 allows either)",
    "length-list": "a Content-Length list is refused even when its values agree (as above)",
    "http-1.2": "only HTTP/1.0 and HTTP/1.1 are served (h11 takes any 1.x)",
    "folded": "obsolete line folding is refused with 400 (RFC 9112 5.2 allows it; h11 unfolds)",
    "te-folded": "the same, in Transfer-Encoding",
    "cl-te": "Content-Length with Transfer-Encoding is refused (h11 lets chunked win and reads on)",
    "te-cl": "the same, the other way round",
    "chunk-size-overflow": "a chunk size past 64 bits is refused at once (h11 waits for the chunk)",
    "lf-only": "lines end with CRLF: a bare LF is refused (RFC 9112 2.2 allows taking it)",
    "cr-only": "a bare CR is refused (h11 waits for a line's end)",
}


async def echo(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Answers with what it was given, as JSON."""
    if scope["type"] == "lifespan":
        while (message := await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    target = scope["raw_path"] + (b"?" + scope["query_string"] if scope["query_string"] else b"")
    seen = {
        "method": scope["method"],
        "target": target.decode("latin-1"),
        "headers": [[name.decode("latin-1"), value.decode("latin-1")] for name, value in scope["headers"]],
        "body": body.decode("latin-1"),
    }
    answer = orjson.dumps(seen)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": answer})


@contextlib.asynccontextmanager
async def serving() -> AsyncIterator[int]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    stop = asyncio.Event()
    task = asyncio.create_task(wire.serve(echo, listener, stop=stop, header_timeout=0.3, keep_alive=0.3))
    try:
        await asyncio.sleep(0.05)
        yield listener.getsockname()[1]
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)
        listener.close()


def request(
    method: str, target: str, headers: list[tuple[str, str]], body: str
) -> tuple[str, str, list[tuple[str, str]], str]:
    """A request as both sides give it: the absolute form's target as its path (as the ASGI
    scope has it), a transfer coding in lower case (h11 lowers it)."""
    if target.startswith(("http://", "https://")):
        target = "/" + target.split("/", 3)[3]
    headers = [(name, value.lower() if name == "transfer-encoding" else value) for name, value in headers]
    return method, target, headers, body


async def by_wire(port: int, data: bytes) -> Parsed:
    """The requests toolwire's server made of ``data``, and ``refused`` if it answered one
    with an error (``ok`` if it waited for more or closed the connection)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    requests = []
    end = "ok"
    try:
        while True:
            try:
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 1)
            except (asyncio.IncompleteReadError, ConnectionResetError):
                break
            except TimeoutError:
                break
            status = int(head.split(b" ", 2)[1])
            length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            body = await reader.readexactly(length)
            if status == 408:
                break
            if status != 200:
                end = "refused"
                break
            seen = orjson.loads(body)
            headers = [(name, value) for name, value in seen["headers"]]
            requests.append(request(seen["method"], seen["target"], headers, seen["body"]))
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    return requests, end


def by_h11(data: bytes) -> Parsed:
    """The requests h11 makes of ``data`` (answering each, as a server would), and
    ``refused`` if it found an error (``ok`` if it waits for more or would close)."""
    connection = h11.Connection(h11.SERVER)
    connection.receive_data(data)
    requests = []
    current: list[Any] = []
    try:
        while True:
            event = connection.next_event()
            if event is h11.NEED_DATA:
                return requests, "ok"
            if event is h11.PAUSED:
                connection.send(h11.Response(status_code=200, headers=[("content-length", "0")]))
                connection.send(h11.EndOfMessage())
                if connection.our_state is h11.MUST_CLOSE:
                    return requests, "ok"
                connection.start_next_cycle()
            elif isinstance(event, h11.Request):
                headers = [(name.decode("latin-1"), value.decode("latin-1")) for name, value in event.headers]
                current = [event.method.decode(), event.target.decode("latin-1"), headers, ""]
            elif isinstance(event, h11.Data):
                current[3] += bytes(event.data).decode("latin-1")
            elif isinstance(event, h11.EndOfMessage):
                requests.append(request(*current))
            elif isinstance(event, h11.ConnectionClosed):
                return requests, "ok"
    except h11.RemoteProtocolError:
        return requests, "refused"


async def test_toolwire_parses_the_corpus_as_h11_does() -> None:
    differences = {}
    async with serving() as port:
        for name, data in CORPUS.items():
            ours, theirs = await by_wire(port, data), by_h11(data)
            if ours != theirs:
                differences[name] = (ours, theirs)
    unexplained = {name: found for name, found in differences.items() if name not in KNOWN}
    shown = "\n".join(
        f"{name}:\n  toolwire {ours}\n  h11      {theirs}" for name, (ours, theirs) in unexplained.items()
    )
    assert not unexplained, shown
    assert set(differences) == set(KNOWN), f"no longer different: {set(KNOWN) - set(differences)}"
    for ours, theirs in differences.values():
        assert ours[0] == theirs[0][: len(ours[0])]  # the requests toolwire read, h11 read the same
