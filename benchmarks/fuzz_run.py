"""A million fuzzed messages: what the test command's fuzzing does, a hundred times longer.

    python benchmarks/fuzz_run.py [--count N] [--http-count N] [--seed S]

The messages come from ``tests/support/fuzzing.py`` (valid, mutated, deeply nested, huge, corrupted
and badly framed). They go, in turn, to the sans-IO core (``ServerConnection``, fed in
random chunks), to a stdio server process (``python -m toolwire run
tests/servers/fuzz_target.py``) and to the same server over HTTP. For each it reports:
crashes (an exception out of the core; a server process that died; an HTTP 5xx), answers
that are not JSON-RPC, whether a normal call is still answered at the end, and the server's
resident memory after the first tenth of the messages and at the end.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.fuzzing import check_answers, fuzz_message, fuzz_stream  # noqa: E402
from tests.support.httpserve import BASE, MODERN, free_port, meta, wait_for_port  # noqa: E402
from toolwire.protocol.connection import ServerConnection  # noqa: E402
from toolwire.protocol.identity import ServerIdentity  # noqa: E402
from toolwire.protocol.outgoing import Answer  # noqa: E402

TARGET = str(ROOT / "tests" / "servers" / "fuzz_target.py")
FINAL_CALL = {"name": "echo", "arguments": {"text": "still here"}}


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def fuzz_core(count: int, seed: int) -> dict[str, Any]:
    connection = ServerConnection(ServerIdentity({"name": "fuzz", "version": "1"}, {"tools": {}}, None))
    rng = random.Random(seed)
    crashes = invalid = answers = 0
    for line in fuzz_stream(seed, count):
        position = 0
        while position < len(line):
            size = rng.choice([1, 64, 4096, 1 << 20])
            try:
                events = connection.receive_data(line[position : position + size])
            except Exception:
                crashes += 1
                events = []
            for event in events:
                if isinstance(event, Answer):
                    lines = event.data.splitlines()
                    answers += len(lines)
                    invalid += len(check_answers(lines))
            position += size
        connection.in_flight.clear()  # requests the application would have answered
    final = connection.receive_data(b'\n{"jsonrpc":"2.0","id":"final","method":"ping"}\n')
    still = any(isinstance(event, Answer) and b'"id":"final"' in event.data for event in final)
    return {"messages": count, "crashes": crashes, "invalid": invalid, "answers": answers, "still answers": still}


def fuzz_stdio(count: int, seed: int) -> dict[str, Any]:
    command = [sys.executable, "-m", "toolwire", "run", TARGET]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None
    lines: list[bytes] = []
    final = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if b'"id":"final"' in line:
                final.set()
        final.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    opening = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "1"}}
    process.stdin.write(
        orjson.dumps({"jsonrpc": "2.0", "id": "open", "method": "initialize", "params": opening}) + b"\n"
    )
    early = float("nan")
    batch: list[bytes] = []
    for number, line in enumerate(fuzz_stream(seed, count), start=1):
        batch.append(line)
        if len(batch) == 500:
            process.stdin.write(b"".join(batch))
            batch = []
        if number == count // 10:
            early = rss_mib(process.pid)
    process.stdin.write(b"".join(batch))
    process.stdin.write(
        b"\n" + orjson.dumps({"jsonrpc": "2.0", "id": "final", "method": "tools/call", "params": FINAL_CALL}) + b"\n"
    )
    process.stdin.flush()
    final.wait(600)
    late = rss_mib(process.pid)
    alive = process.poll() is None
    process.stdin.close()
    process.wait(30)
    last = next((orjson.loads(line) for line in reversed(lines) if b'"id":"final"' in line), None)
    still = last is not None and last.get("result", {}).get("content", [{}])[0].get("text") == "still here"
    return {
        "messages": count,
        "crashes": 0 if alive else 1,
        "invalid": len(check_answers(lines)),
        "answers": len(lines),
        "still answers": still,
        "RSS MiB (a tenth in, end)": f"{early:.1f}, {late:.1f}",
    }


def fuzz_http(count: int, seed: int) -> dict[str, Any]:
    port = free_port()
    command = [sys.executable, "-m", "toolwire", "run", TARGET, "--http", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    rng = random.Random(seed)
    crashes = invalid = 0
    early = float("nan")
    headers = {**BASE, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "echo"}
    try:
        wait_for_port(port, process)
        url = f"http://127.0.0.1:{port}/mcp"
        with httpx.Client(timeout=30) as http:
            for number in range(1, count + 1):
                reply = http.post(url, content=fuzz_message(rng), headers=headers)
                if reply.status_code >= 500:
                    crashes += 1
                elif reply.headers.get("content-type", "").startswith("application/json"):
                    invalid += len(check_answers([reply.content]))
                if number == count // 10:
                    early = rss_mib(process.pid)
            body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**FINAL_CALL, "_meta": meta()}}
            final = http.post(url, json=body, headers=headers)
        late = rss_mib(process.pid)
        still = final.status_code == 200 and final.json()["result"]["content"][0]["text"] == "still here"
        return {
            "messages": count,
            "crashes": crashes + (process.poll() is not None),
            "invalid": invalid,
            "still answers": still,
            "RSS MiB (a tenth in, end)": f"{early:.1f}, {late:.1f}",
        }
    finally:
        process.kill()
        process.wait(10)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=1_000_000, help="messages for the core and for stdio")
    parser.add_argument("--http-count", type=int, default=100_000, help="messages over HTTP (one POST each)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    failed = False
    for name, run, count in (
        ("sans-IO core", fuzz_core, args.count),
        ("stdio server", fuzz_stdio, args.count),
        ("HTTP server", fuzz_http, args.http_count),
    ):
        started = time.monotonic()
        result = run(count, args.seed)
        took = time.monotonic() - started
        print(f"{name}: " + ", ".join(f"{key} {value}" for key, value in result.items()) + f" ({took:.0f} s)")
        failed = failed or result["crashes"] > 0 or result["invalid"] > 0 or not result["still answers"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
