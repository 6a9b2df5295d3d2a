"""What ``--redis`` costs a 2026-07-28 call, counted in instructions rather than timed.

    python benchmarks/scaling_instructions.py [--calls N] [--functions K]

Timing over sockets (``scaling_run.py``) cannot tell a cost of a few µs from the noise of a
shared machine. This counts the instructions the server's process executes, under
``valgrind --tool=callgrind`` (the same count run after run, whatever else the machine does):
the HTTP benchmark's server (``http_echo_server.build()``), its ASGI application called
directly in this process, answering 2026-07-28 ``tools/call`` requests (JSON answers), with
and without ``use_redis`` (a real ``redis-server`` on 127.0.0.1). Each kind runs twice, with
``N`` and ``2N`` calls; the difference over ``N`` is the count per call, without the start-up.
The 2026-07-28 target of the scaling issue is +0: calls that need no shared state touch no
Redis. With ``--functions K``, the K functions whose counts differ most between the two
kinds are listed (``callgrind_annotate``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import callgrind
import scaling_run

CALL = (
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},'
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":{}}}}'
)
HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"content-type", b"application/json"),
    (b"accept", b"application/json, text/event-stream"),
    (b"mcp-protocol-version", b"2026-07-28"),
    (b"mcp-method", b"tools/call"),
    (b"mcp-name", b"echo"),
    (b"content-length", str(len(CALL)).encode()),
]
SCOPE = {
    "type": "http",
    "asgi": {"version": "3.0"},
    "http_version": "1.1",
    "method": "POST",
    "scheme": "http",
    "path": "/mcp",
    "raw_path": b"/mcp",
    "query_string": b"",
    "root_path": "",
    "headers": HEADERS,
    "client": ("127.0.0.1", 50000),
    "server": ("127.0.0.1", 8000),
}


async def serve(calls: int, redis: str | None) -> None:
    """Answer ``calls`` requests with the benchmark's application (each answer checked)."""
    import http_echo_server

    server = http_echo_server.build()
    if redis is not None:
        server.use_redis(redis)
    app = server.http_app()
    gc.collect()  # as run_http does before serving
    gc.freeze()
    body = {"type": "http.request", "body": CALL, "more_body": False}
    answers: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return body

    async def send(message: dict[str, Any]) -> None:
        answers.append(message)

    for _ in range(calls):
        await app(dict(SCOPE), receive, send)
        assert answers[0]["status"] == 200 and b'"hi"' in answers[-1]["body"], answers
        answers.clear()
    await app.close()


def count(calls: int, redis: str | None, folder: Path) -> tuple[int, Path]:
    """The instructions of a child process answering ``calls`` requests; its callgrind file."""
    out = folder / f"callgrind.{calls}.{'redis' if redis else 'off'}"
    arguments = [__file__, "--child", str(calls)] + (["--redis", redis] if redis else [])
    return callgrind.count(out, arguments), out


def functions(files: dict[str, tuple[Path, Path]], limit: int) -> list[tuple[int, str]]:
    """The ``limit`` functions whose instructions for the last N calls differ most between
    the two kinds (the start-up left out: counts of the N-call runs taken from the 2N)."""
    calls = {kind: callgrind.per_function_difference(small, large) for kind, (small, large) in files.items()}
    off, redis = calls["off"], calls["redis"]
    differences = [(redis.get(name, 0) - off.get(name, 0), name) for name in {*off, *redis}]
    return sorted(differences, key=lambda item: -abs(item[0]))[:limit]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000, help="N: each kind runs N and 2N calls")
    parser.add_argument("--functions", type=int, default=0, help="list the K functions that differ most")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--redis", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        asyncio.run(serve(args.child, args.redis))
        return
    callgrind.prepare()
    with scaling_run.redis_server() as redis, tempfile.TemporaryDirectory() as folder:
        per_call: dict[str, float] = {}
        files: dict[str, tuple[Path, Path]] = {}
        for kind, url in (("off", None), ("redis", redis)):
            small, small_file = count(args.calls, url, Path(folder))
            large, large_file = count(2 * args.calls, url, Path(folder))
            per_call[kind] = (large - small) / args.calls
            files[kind] = (small_file, large_file)
            print(f"{kind:>5}: {per_call[kind]:,.0f} instructions per 2026-07-28 call")
        extra = per_call["redis"] - per_call["off"]
        print(f"--redis: {extra:+,.0f} instructions per call ({extra / per_call['off']:+.2%}); target +0")
        if args.functions:
            print(f"\nthe functions that differ most, instructions over {args.calls} calls:")
            for difference, name in functions(files, args.functions):
                print(f"{difference:+14,} {name.rsplit(' [', 1)[0].split('/')[-1]}")


if __name__ == "__main__":
    main()
