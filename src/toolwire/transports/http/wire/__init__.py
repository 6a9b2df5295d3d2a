"""A lean HTTP/1.1 server for an ASGI application, on httptools and asyncio: ``run_http``'s own.

It serves what uvicorn serves for toolwire's application with less work per request: a whole
answer leaves in one ``write`` (status line, headers and body together), requests' headers
are not copied through middleware, and each connection keeps one timer for all its deadlines.

What a client gets:

- Keep-alive (for HTTP/1.0 only when it asks with ``Connection: keep-alive``, and answered
  with that header), and pipelined requests answered in order: reading and parsing pause while one
  waits (what was read is parsed ``FEED_SLICE`` bytes at a time), so a connection holds at
  most one slice's worth of requests it has not answered.
- Request bodies as they arrive, chunked or not; reading pauses while more than
  ``BODY_BUFFER`` bytes wait for the application. ``Expect: 100-continue`` is honoured when
  the application first reads the body.
- Answers with ``Content-Length`` when the application gave one or sent the body whole,
  chunked otherwise (close-delimited for HTTP/1.0); nothing but the head for ``HEAD``.
- ``400`` and the connection closed for a request that does not parse, or whose body's
  end is ambiguous (``Content-Length`` with chunked, two lengths, folded headers: nothing
  can be smuggled past it), once the whole requests before it are answered; ``501`` for a
  transfer coding other than chunked, ``505`` for HTTP/0.9; ``431`` for a head, or
  trailers, over ``MAX_HEAD_BYTES`` (also while it is still arriving); ``408`` when a
  request's head takes longer than ``header_timeout``, or its body longer than
  ``body_timeout`` after that (after its head, for a request that was pipelined, from its
  turn), whatever the application does meanwhile (then the connection is closed; only closed, once the answer
  has begun); ``503`` past ``max_connections``, ``429`` past
  ``max_connections_per_client`` from one address (an IPv6 /64; trusted proxies are not
  counted); an idle keep-alive connection is closed after ``keep_alive``
  seconds, and so is one whose request was answered before its body was all in (the rest
  is read and dropped meanwhile). ``500`` when the application fails before any of its answer was written (the
  connection is closed when it fails part-way through).
- The client going away is ``http.disconnect`` from ``receive()``; what the application
  sends after that is dropped.

:func:`serve` runs it; :mod:`.connection` reads and parses a connection's requests and keeps
its deadlines, :mod:`.request` is one request's ASGI ``receive`` and ``send`` and writes its
answer, :mod:`.heads` makes the bytes of status lines and refusals, :mod:`.settings` holds
the limits above and what a server's connections share, :mod:`.lifespan` runs the ASGI
lifespan.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
from collections.abc import Callable
from typing import Any

from ..forwarded import TrustedProxies
from .connection import HttpConnection
from .lifespan import Lifespan
from .settings import Settings


async def serve(
    app: Any,
    listener: socket.socket,
    *,
    header_timeout: float = 10.0,
    body_timeout: float = 10.0,
    keep_alive: float = 5.0,
    max_connections: int = 1000,
    max_connections_per_client: int = 100,
    forwarded_allow_ips: TrustedProxies | str | list[str] | None = None,
    access_log: bool = False,
    grace: float = 10.0,
    lifespan: bool = True,
    on_stop: Callable[[], Any] | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    """Serve the ASGI ``app`` on ``listener`` (bound and listening) until ``stop`` is set,
    or SIGINT/SIGTERM when ``stop`` is not given (either left alone if this process was
    started with it ignored, as Python leaves SIGINT: ``nohup``, ``&`` in a script).

    Runs the app's lifespan first unless ``lifespan`` is false (``RuntimeError`` if its
    startup fails, before anything is served). On stopping: no new connections,
    ``on_stop()`` (which may be a coroutine: e.g. ending long-lived streams), idle
    connections closed, requests being answered given up to ``grace`` seconds and then
    cancelled, then the lifespan's shutdown. Connections from ``forwarded_allow_ips`` (see
    :class:`~toolwire.transports.http.forwarded.TrustedProxies`) are not held to ``max_connections_per_client``.
    """
    loop = asyncio.get_running_loop()
    settings = Settings(
        app,
        header_timeout=header_timeout,
        body_timeout=body_timeout,
        keep_alive=keep_alive,
        max_connections=max_connections,
        max_connections_per_client=max_connections_per_client,
        trusted=forwarded_allow_ips
        if isinstance(forwarded_allow_ips, TrustedProxies)
        else TrustedProxies(forwarded_allow_ips),
        access_log=access_log,
    )
    life = Lifespan(app, settings.state) if lifespan else None
    if life is not None:
        await life.start()
    listening = await loop.create_server(lambda: HttpConnection(settings), sock=listener, backlog=2048)
    signals: list[signal.Signals] = []
    if stop is None:
        stop = asyncio.Event()
        for number in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(number) is signal.SIG_IGN:
                continue  # ignored by whoever started this process (nohup, ``&`` in a script): left so
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(number, stop.set)
                signals.append(number)
    try:
        await stop.wait()
    finally:
        for number in signals:
            loop.remove_signal_handler(number)
        settings.stopping = True
        listening.close()
        if on_stop is not None:
            outcome = on_stop()
            if asyncio.iscoroutine(outcome):
                await outcome
        for connection in list(settings.connections):
            connection.close_if_idle()
        busy = [connection.finish() for connection in settings.connections if connection.busy()]
        if busy:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.gather(*busy, return_exceptions=True), grace)
        for connection in list(settings.connections):
            connection.transport.close()
        if life is not None:
            await life.stop()
