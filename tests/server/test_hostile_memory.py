"""Memory is bounded by configuration, never by what a peer sends: made-up list cursors over
stdio and HTTP, measured as the server's resident memory before and after."""

from __future__ import annotations

import base64
import itertools
from pathlib import Path

import httpx
import orjson

from tests.support.httpserve import BASE, MODERN, meta, toolwire_http
from tests.support.rawclient import RawClient, toolwire_command

PAGED = str(Path(__file__).resolve().parents[1] / "servers" / "paged.py")
CANONICAL = base64.urlsafe_b64encode(b"tools:5").decode().rstrip("=")
JUNK = "!#$%&*.,;~"  # not in the base64 alphabet: a lenient decoder skips them


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def spellings(count: int) -> list[str]:
    """``count`` different strings that a lenient base64 decoder reads as the same cursor."""
    found = []
    for length in itertools.count(1):
        for junk in itertools.product(JUNK, repeat=length):
            found.append(CANONICAL.rstrip("=") + "".join(junk) + "==")
            if len(found) == count:
                return found
    return found


def test_made_up_cursors_over_stdio_are_refused_and_cost_no_memory() -> None:
    variants = spellings(20_000)
    with RawClient(toolwire_command(PAGED)) as client:
        client.initialize()
        first = client.request("tools/list")["result"]
        assert first["nextCursor"] == CANONICAL
        assert client.request("tools/list", {"cursor": CANONICAL})["result"]["tools"][0]["name"] == "tool_05"
        before = rss_mib(client.process.pid)
        codes = set()
        for start in range(0, len(variants), 1000):
            chunk = variants[start : start + 1000]
            lines = [
                orjson.dumps({"jsonrpc": "2.0", "id": index, "method": "tools/list", "params": {"cursor": cursor}})
                for index, cursor in enumerate(chunk, start)
            ]
            client.send_raw(b"\n".join(lines) + b"\n")
            for _ in chunk:
                answer = client.receive()
                codes.add(answer["error"]["code"])
        after = rss_mib(client.process.pid)
    assert codes == {-32602}
    assert after - before < 8, f"{before:.1f} MiB before, {after:.1f} MiB after 20,000 made-up cursors"


async def test_huge_cursors_over_http_are_refused_and_cost_no_memory() -> None:
    headers = {**BASE, "MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/list"}
    with toolwire_http(PAGED) as (url, process):
        async with httpx.AsyncClient(timeout=30) as http:

            async def ask(cursor: str) -> httpx.Response:
                body = {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/list",
                    "params": {"cursor": cursor, "_meta": meta()},
                }
                return await http.post(url, json=body, headers=headers)

            assert (await ask(CANONICAL)).json()["result"]["tools"][0]["name"] == "tool_05"
            before = rss_mib(process.pid)
            for number in range(200):
                junk = "!" * (1024 * 1024 - number) + "#" * number  # each one different
                reply = await ask(CANONICAL.rstrip("=") + junk + "==")
                error = reply.json()["error"]
                assert error["code"] == -32602 and len(error["message"]) < 200, error["message"][:300]
            after = rss_mib(process.pid)
    assert after - before < 16, f"{before:.1f} MiB before, {after:.1f} MiB after 200 one-megabyte cursors"
