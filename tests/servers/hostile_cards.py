"""An HTTP "server" on raw sockets that misbehaves on purpose, for the hostile-server tests
of what toolwire fetches of its own (server cards, signing keys, introspection).

    python hostile_cards.py PORT

By path: ``/trickle/...`` declares 1,000 bytes of JSON and sends one every 0.2 s; ``/huge/...``
declares 100 MB of JSON and sends them;
``/redirect/server-card`` is a 307 to ``http://localhost:PORT/caught/server-card`` (another
origin: another host name), which records the request's headers and serves a valid card;
``/control/server-card`` answers with a ``Content-Type`` holding a C1 control (CSI) and
terminal escapes. ``GET /stats`` answers the headers of the requests that reached ``/caught``.
"""

import asyncio
import sys

import orjson

PORT = int(sys.argv[1])
CAUGHT: list[dict[str, str]] = []
CARD = {
    "$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
    "name": "com.example/caught",
    "version": "1.0.0",
    "description": "A card served after a redirect.",
}


def answer(status: str, headers: dict[str, str], body: bytes) -> bytes:
    head = f"HTTP/1.1 {status}\r\n" + "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    return (head + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode("latin-1") + body


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        path = head.split(" ", 2)[1]
        headers = dict(line.partition(":")[::2] for line in head.split("\r\n")[1:] if line)
        if path.startswith("/huge/"):
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n")
            for _ in range(100):
                writer.write(b" " * 1_000_000)
                await writer.drain()
        elif path.startswith("/trickle/"):
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
            for _ in range(1000):
                writer.write(b" ")
                await writer.drain()
                await asyncio.sleep(0.2)
        elif path == "/redirect/server-card":
            location = f"http://localhost:{PORT}/caught/server-card"
            writer.write(answer("307 Temporary Redirect", {"Location": location}, b""))
        elif path == "/caught/server-card":
            CAUGHT.append({name.strip().lower(): value.strip() for name, value in headers.items()})
            writer.write(answer("200 OK", {"Content-Type": "application/json"}, orjson.dumps(CARD)))
        elif path == "/control/server-card":
            writer.write(answer("200 OK", {"Content-Type": "text/html\x9b2J\x1b]0;owned\x07"}, b"<html>"))
        elif path == "/stats":
            writer.write(answer("200 OK", {"Content-Type": "application/json"}, orjson.dumps(CAUGHT)))
        else:
            writer.write(answer("404 Not Found", {}, b""))
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def main() -> None:
    server = await asyncio.start_server(serve, "127.0.0.1", PORT)
    async with server:
        await server.serve_forever()


asyncio.run(main())
