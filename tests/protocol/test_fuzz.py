"""The structure-aware fuzzer (tests/support/fuzzing.py), a CI-sized run: tens of thousands of
valid, mutated, corrupted and badly framed messages against the sans-IO core, a stdio
server process and an HTTP server process. No crash, every answer JSON-RPC, a normal call
still answered afterwards, memory bounded. ``benchmarks/fuzz_run.py`` runs a million."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import httpx
import orjson

from tests.support.fuzzing import check_answers, fuzz_message, fuzz_stream
from tests.support.httpserve import BASE, MODERN, meta, open_session, toolwire_http
from tests.support.rawclient import RawClient, toolwire_command
from toolwire.protocol.connection import ServerConnection
from toolwire.protocol.identity import ServerIdentity
from toolwire.protocol.outgoing import Answer

TARGET = str(Path(__file__).resolve().parents[1] / "servers" / "fuzz_target.py")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_the_core_takes_thirty_thousand_fuzzed_messages_in_random_chunks() -> None:
    connection = ServerConnection(ServerIdentity({"name": "t", "version": "1"}, {"tools": {}}, None))
    rng = random.Random(7)
    stream = b"".join(fuzz_stream(1, 30_000))
    answers: list[bytes] = []
    position = 0
    while position < len(stream):
        size = rng.choice([1, 7, 100, 4096, 65536, 1 << 20])
        for event in connection.receive_data(stream[position : position + size]):
            if isinstance(event, Answer):
                answers += event.data.splitlines()
        position += size
    assert check_answers(answers) == []
    assert len(answers) > 10_000
    after = connection.receive_data(b'\n{"jsonrpc":"2.0","id":"final","method":"ping"}\n')
    assert any(isinstance(event, Answer) and b'"id":"final"' in event.data for event in after)


def test_a_stdio_server_takes_ten_thousand_and_goes_on() -> None:
    with RawClient(toolwire_command(TARGET)) as client:
        client.initialize()
        before = rss_mib(client.process.pid)
        lines = list(fuzz_stream(2, 10_000))
        for start in range(0, len(lines), 200):
            client.send_raw(b"".join(lines[start : start + 200]))
        client.send(
            {
                "jsonrpc": "2.0",
                "id": "final",
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "still here"}},
            }
        )
        seen: list[bytes] = []
        deadline = time.monotonic() + 120
        while True:
            line = client._lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, "".join(client.stderr_lines)[-2000:]
            seen.append(line)
            if b'"id":"final"' in line:
                break
        grown = rss_mib(client.process.pid) - before
        assert client.process.poll() is None
    assert check_answers(seen) == []
    assert orjson.loads(seen[-1])["result"]["content"][0]["text"] == "still here"
    assert grown < 60, f"the server grew by {grown:.1f} MiB"


def test_an_http_server_takes_two_thousand_and_goes_on() -> None:
    rng = random.Random(3)
    problems: list[str] = []
    with toolwire_http(TARGET) as (url, process), httpx.Client(timeout=30) as http:
        session = _legacy_session(http, url)
        modern = {**BASE, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "echo"}
        for number in range(2_000):
            body = fuzz_message(rng)
            reply = http.post(url, content=body, headers=session if number % 2 else modern)
            if reply.status_code >= 500:
                problems.append(f"{reply.status_code} for {body[:100]!r}: {reply.text[:200]}")
            elif reply.headers.get("content-type", "").startswith("application/json"):
                problems += check_answers([reply.content])
        final = http.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "still here"}, "_meta": meta()},
            },
            headers=modern,
        )
        assert process.poll() is None
    assert problems == []
    assert final.json()["result"]["content"][0]["text"] == "still here"


def _legacy_session(http: httpx.Client, url: str) -> dict[str, str]:
    result: dict[str, str] = {}

    def opened() -> None:
        import asyncio

        async def run() -> None:
            async with httpx.AsyncClient(timeout=10) as client:
                result.update(await open_session(client, url))

        asyncio.run(run())

    thread = threading.Thread(target=opened)
    thread.start()
    thread.join()
    return result
