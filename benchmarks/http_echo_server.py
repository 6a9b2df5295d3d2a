"""The toolwire server of the HTTP benchmark: ``echo_server.py``'s server over Streamable HTTP.

    python benchmarks/http_echo_server.py PORT [--runner toolwire|uvicorn|granian]
                                           [--auth cached|every --jwks FILE] [--redis URL]

Adds ``echo_progress``, which reports one progress step before it answers: a call that
carries a ``progressToken`` then gets its answer as an SSE stream (progress, then result).
With toolwire's own HTTP server (the default) or uvicorn it is served by ``Server.run_http``
at ``http://127.0.0.1:PORT/mcp``. ``run_http(runner="granian")`` hands granian the application
object, which granian's worker processes cannot load (they import a ``module:attr`` string),
so granian is given :func:`app` by name instead, with the settings ``run_http`` uses.
``--auth`` protects it (``benchmarks/auth_run.py``): every request needs a JWT signed by a key
of ``--jwks``, whose verification is cached per token or (``every``) done each time.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from toolwire import Context

HERE = Path(__file__).resolve().parent


async def echo_progress(text: str, ctx: Context) -> str:
    """Echo the text back after one progress step."""
    ctx.report_progress(1, 1)
    return text


def build() -> Any:
    """``echo_server.py``'s server, with ``echo_progress`` added (imported only here: granian's
    parent process never loads it)."""
    sys.path.insert(0, str(HERE))
    from echo_server import server

    if server.registry.get("echo_progress") is None:
        server.tool(echo_progress)
    return server


def app() -> Any:
    """The ASGI application (a factory, for granian)."""
    return build().http_app()


def protection(port: int, jwks_file: str, cache: bool) -> Any:
    """JWT access tokens from the benchmark's issuer (keys in ``jwks_file``), for this server;
    verified tokens cached, or (``cache=False``) verified on every request."""
    import orjson

    from toolwire.auth import ProtectedResource

    return ProtectedResource.for_issuer(
        "https://issuer.bench",
        f"http://127.0.0.1:{port}/mcp",
        jwks=orjson.loads(Path(jwks_file).read_bytes()),
        cache_seconds=300.0 if cache else 0.0,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("port", type=int)
    parser.add_argument("--runner", choices=("toolwire", "uvicorn", "granian"), default="toolwire")
    parser.add_argument("--auth", choices=("cached", "every"), help="ask for tokens (not with granian)")
    parser.add_argument("--jwks", help="the issuer's keys, for --auth")
    parser.add_argument("--redis", help="share state with other replicas through this Redis (not with granian)")
    args = parser.parse_args()
    if args.runner != "granian":
        auth = protection(args.port, args.jwks, args.auth == "cached") if args.auth else None
        server = build()
        if args.redis:
            server.use_redis(args.redis)
        server.run_http("127.0.0.1", args.port, auth=auth, runner=args.runner)
        return
    from granian.constants import Interfaces
    from granian.server import Server as Granian

    Granian(
        "http_echo_server:app",
        address="127.0.0.1",
        port=args.port,
        interface=Interfaces.ASGI,
        log_level="warning",
        working_dir=HERE,
        factory=True,
    ).serve()


if __name__ == "__main__":
    main()
