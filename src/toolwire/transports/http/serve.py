"""Running the Streamable HTTP application: uvicorn by default, granian when asked for."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .app import StreamableHTTP

if TYPE_CHECKING:
    from ...server.server import Server


def run_http(
    server: Server,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    runner: str = "uvicorn",
    log_level: str = "warning",
    **options: Any,
) -> None:
    """Serve ``server`` over Streamable HTTP at ``http://host:port/mcp`` until interrupted.

    Binds to 127.0.0.1 unless told otherwise; a public ``host`` also needs ``allowed_hosts``
    for the names clients will use (DNS rebinding protection refuses others). ``options``
    go to :class:`StreamableHTTP`. ``runner`` is ``"uvicorn"`` or ``"granian"`` (which must be
    installed); ``ValueError`` for another.
    """
    app = StreamableHTTP(server, **options)
    if runner == "uvicorn":
        import uvicorn

        access_log = log_level in ("debug", "trace", "info")
        config = uvicorn.Config(app, host=host, port=port, log_level=log_level, lifespan="on", access_log=access_log)
        _Uvicorn(config, app).run()
    elif runner == "granian":
        from granian.constants import Interfaces
        from granian.server.embed import Server as Granian

        from ..stdio import event_loop_runner

        granian = Granian(app, address=host, port=port, interface=Interfaces.ASGI, log_level=log_level)  # type: ignore[arg-type]
        event_loop_runner()(granian.serve())
    else:
        raise ValueError(f"unknown runner {runner!r}: use 'uvicorn' or 'granian'")


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
