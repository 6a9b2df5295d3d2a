"""Running the Streamable HTTP application: toolwire's own HTTP/1.1 server by default
(:mod:`.wire`), uvicorn or granian when asked for."""

from __future__ import annotations

import gc
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...errors import ToolwireError
from .app import StreamableHTTP
from .forwarded import TrustedProxies, client_group

if TYPE_CHECKING:
    from ...server.server import Server


def run_http(
    server: Server,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    runner: str = "toolwire",
    log_level: str = "warning",
    header_timeout: float = 10.0,
    idle_timeout: float = 5.0,
    max_connections: int = 1000,
    max_connections_per_client: int = 100,
    forwarded_allow_ips: str | list[str] | None = None,
    on_ready: Callable[[], Any] | None = None,
    **options: Any,
) -> None:
    """Serve ``server`` over Streamable HTTP at ``http://host:port/mcp`` until interrupted.

    Binds to 127.0.0.1 unless told otherwise; a public ``host`` also needs ``allowed_hosts``
    for the names clients will use (DNS rebinding protection refuses others). ``options``
    go to :class:`StreamableHTTP`. ``runner`` is ``"toolwire"`` (the lean server of
    :mod:`toolwire.transports.http.wire`, on uvloop when installed), ``"uvicorn"`` or
    ``"granian"`` (which must be installed); ``ValueError`` for another. SIGINT and SIGTERM
    stop it: streams end, requests being answered get 10 s to finish.

    Slow or idle clients cannot hold the server: a request's headers must arrive within
    ``header_timeout`` seconds (then 408 and the connection is closed), its body within the
    app's ``body_timeout`` (toolwire's own server gives it that long after the head's time,
    whatever the application does meanwhile), and at most ``max_connections`` connections are open at once
    (more are answered 503 and closed; the limit is lowered to fit the process's file
    descriptors, whose soft limit is first raised to the hard one), of which at most
    ``max_connections_per_client`` from one address (more get 429; an IPv6 client is its
    /64). A keep-alive connection is closed after ``idle_timeout`` seconds without a request,
    and so is one whose answer went out before its request's body was all in.

    Behind reverse proxies, ``forwarded_allow_ips`` lists them (addresses, networks, or
    ``"*"``; a comma-separated string or a list): the client of a request from one of them
    is the one its ``X-Forwarded-For`` (or ``Forwarded``) names, for the per-client caps and
    anonymous callers' rate limits, and the proxies' connections are not held to
    ``max_connections_per_client``. Nobody's headers are believed by default.

    Objects made before serving are frozen out of garbage collection (``gc.freeze()``).
    ``on_ready()`` is called once the port is bound. :class:`CannotListen` (one line: the
    address and why) when it cannot be, before anything is served.
    """
    proxies = TrustedProxies(forwarded_allow_ips)
    app = StreamableHTTP(server, forwarded_allow_ips=proxies, **options)
    listener = _bind(host, port)
    max_connections = _fit_descriptors(max_connections)
    access_log = log_level in ("debug", "trace", "info")
    if runner == "toolwire":
        from ..stdio import event_loop_runner
        from .wire import serve

        _log_to_stderr(log_level)
        if on_ready is not None:
            on_ready()
        _freeze_startup_objects()
        serving = serve(
            app,
            listener,
            header_timeout=header_timeout,
            body_timeout=app.body_timeout,
            keep_alive=idle_timeout,
            max_connections=max_connections,
            max_connections_per_client=max_connections_per_client,
            forwarded_allow_ips=proxies,
            access_log=access_log,
            on_stop=app.close,
        )
        event_loop_runner()(serving)
    elif runner == "uvicorn":
        import uvicorn

        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level=log_level,
            lifespan="on",
            access_log=access_log,
            timeout_keep_alive=idle_timeout,  # type: ignore[arg-type]  # uvicorn annotates it int
            proxy_headers=False,  # the application reads them, from forwarded_allow_ips only
            http=guarded_protocol(header_timeout, max_connections, max_connections_per_client, proxies),
        )
        if on_ready is not None:
            on_ready()  # the socket is bound and listening: connections wait for the server
        _freeze_startup_objects()
        _Uvicorn(config, app).run(sockets=[listener])
    elif runner == "granian":
        from ...extras import needs

        with needs("granian", "Serving with granian"):
            from granian.constants import Interfaces
            from granian.http import HTTP1Settings
            from granian.server.embed import Server as Granian
        from ..stdio import event_loop_runner

        listener.close()  # granian binds its own; this one only showed the port was free
        if on_ready is not None:
            _when_listening(host, port, on_ready)
        granian = Granian(
            app,
            address=host,
            port=port,
            interface=Interfaces.ASGI,
            log_level=log_level,  # type: ignore[arg-type]
            http1_settings=HTTP1Settings(header_read_timeout=int(header_timeout * 1000)),
            backpressure=max_connections,
        )
        _freeze_startup_objects()
        event_loop_runner()(granian.serve())
    else:
        raise ValueError(f"unknown runner {runner!r}: use 'toolwire', 'uvicorn' or 'granian'")


def _log_to_stderr(level: str) -> None:
    """toolwire's HTTP log (failures; requests at ``info``) on stderr at ``level``, unless
    logging is already set up."""
    import logging

    logger = logging.getLogger("toolwire.http")
    logger.setLevel(getattr(logging, level.upper(), logging.WARNING) if level != "trace" else logging.DEBUG)
    if not logging.getLogger().handlers and not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
        logger.addHandler(handler)


def _freeze_startup_objects() -> None:
    """Leave what exists before serving (modules, the server, its tools) out of garbage
    collection: it lives as long as the process, and full collections would otherwise walk
    it again and again while serving."""
    gc.collect()
    gc.freeze()


class CannotListen(ToolwireError, OSError):
    """The address cannot be listened on (in use, not this machine's, not allowed)."""


def _bind(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port``; :class:`CannotListen` saying why not."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(2048)
    except OSError as exc:
        listener.close()
        raise CannotListen(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return listener


def _when_listening(host: str, port: int, then: Callable[[], Any], timeout: float = 30.0) -> None:
    """Call ``then()`` from a thread once ``host:port`` accepts connections."""

    def watch() -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
                if probe.connect_ex((host, port)) == 0:
                    then()
                    return
            time.sleep(0.05)

    threading.Thread(target=watch, daemon=True).start()


def _Uvicorn(config: Any, app: StreamableHTTP) -> Any:
    """uvicorn's server, which also ends the app's streams as soon as it is told to stop:
    uvicorn waits for open connections before the app's own shutdown, and subscriptions and
    ``GET`` streams would hold it forever."""
    import asyncio

    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            try:
                loop = asyncio.get_running_loop()  # signal handlers run on the loop's thread
            except RuntimeError:
                pass
            else:
                loop.call_soon_threadsafe(lambda: asyncio.ensure_future(app.close()))
            super().handle_exit(sig, frame)

    return Server(config)


def _fit_descriptors(wanted: int) -> int:
    """``wanted`` connections, or fewer if the file descriptors would not suffice (a margin is
    kept for the server's own files, pipes and sockets)."""
    try:
        import resource
    except ImportError:  # not on POSIX
        return wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = 65536 if hard == resource.RLIM_INFINITY else hard
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return max(1, min(wanted, soft - 128))


def guarded_protocol(
    header_timeout: float,
    max_connections: int,
    max_connections_per_client: int | None = None,
    proxies: TrustedProxies | None = None,
) -> type[Any]:
    """uvicorn's HTTP protocol (httptools), with a deadline for each request's headers, a cap
    on open connections (503 past it) and on those of one client (429; ``proxies`` are not
    counted). uvicorn has none: a client that sends half a request would hold its connection
    (and a file descriptor) forever."""
    by_client: dict[str, int] = {}
    trusted = proxies if proxies is not None else TrustedProxies()
    import asyncio

    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class GuardedProtocol(HttpToolsProtocol):
        # The headers being read must be complete by _deadline (None: none being read). One
        # timer per connection checks it and re-arms itself while requests keep coming, so a
        # request costs a clock reading, not a timer of its own.
        _deadline: float | None = None
        _timer: asyncio.TimerHandle | None = None
        _group: str | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                transport.write(_refusal(503, "Service Unavailable", "the server has too many connections open"))
                transport.close()
                return
            host = self.client[0] if self.client else ""
            if max_connections_per_client is not None and not trusted.trusts(host):
                self._group = group = client_group(host)
                by_client[group] = mine = by_client.get(group, 0) + 1
                if mine > max_connections_per_client:
                    why = f"this client already has {max_connections_per_client} connections open, its most"
                    transport.write(_refusal(429, "Too Many Requests", why))
                    transport.close()
                    return
            self._arm()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            if self._deadline is None:
                self._arm()

        def on_headers_complete(self) -> None:
            self._deadline = None
            super().on_headers_complete()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._group is not None:
                left = by_client.pop(self._group) - 1
                if left:
                    by_client[self._group] = left
                self._group = None
            self._deadline = None
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            super().connection_lost(exc)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._deadline = None  # between requests, uvicorn's keep-alive timeout applies

        def _arm(self) -> None:
            self._deadline = self.loop.time() + header_timeout
            if self._timer is None:
                self._timer = self.loop.call_at(self._deadline, self._check)

        def _check(self) -> None:
            self._timer = None
            deadline = self._deadline
            if deadline is None:
                return
            if self.loop.time() < deadline:  # a later request's headers: wait for its deadline
                self._timer = self.loop.call_at(deadline, self._check)
            elif not self.transport.is_closing():
                why = f"the request headers did not arrive within {header_timeout:g} s"
                self.transport.write(_refusal(408, "Request Timeout", why))
                self.transport.close()

    return GuardedProtocol


def _refusal(status: int, reason: str, why: str) -> bytes:
    body = f"{status} {reason}: {why}\n".encode()
    return (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode() + body
