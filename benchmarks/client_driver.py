"""toolwire's Client as a benchmark driver: calls/s against the echo server over stdio.

    python benchmarks/client_driver.py --seconds 1 [--in-flight 64] [--protocol VERSION]

Connects with ``Client`` to ``toolwire run benchmarks/echo_server.py`` and calls ``echo`` for
the given time, one call at a time or with N calls in flight (N tasks, each calling in a
loop). Prints one line of JSON: ``{"calls_per_second": ...}``. ``run.py`` runs it beside its
own raw client, so that what the Client adds to a round trip can be read off. It runs on the
event loop toolwire's stdio server uses (uvloop when installed; ``TOOLWIRE_UVLOOP=0`` for
asyncio's), as an application using the Client would choose.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

from toolwire.client import Client

HERE = Path(__file__).resolve().parent


async def drive(seconds: float, in_flight: int, protocol: str | None) -> float:
    command = [sys.executable, "-m", "toolwire", "run", str(HERE / "echo_server.py")]
    async with Client(command, protocol=protocol) as client:
        await client.list_tools()
        for _ in range(200):  # warm-up
            await client.call_tool("echo", {"text": "hello"})
        calls = 0
        deadline = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal calls
            while time.perf_counter() < deadline:
                await client.call_tool("echo", {"text": "hello"})
                calls += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(in_flight)))
        return calls / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--in-flight", type=int, default=1)
    parser.add_argument("--protocol", default=None)
    args = parser.parse_args()
    from toolwire.transports.stdio import event_loop_runner

    rate = event_loop_runner()(drive(args.seconds, args.in_flight, args.protocol))
    print(json.dumps({"calls_per_second": rate}))


if __name__ == "__main__":
    main()
