"""The audit trail, size caps and redaction: records of every outcome in both eras, a server
killed with SIGKILL mid-call keeping the start of every call, and secrets kept out of records
and logs."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.helpers import LEGACY, MODERN, open_peer
from tests.support.httpserve import modern_call, modern_headers, toolwire_http
from tests.support.rawclient import RawClient, toolwire_command
from toolwire import Server, ToolError
from toolwire.guards import Audit, FileSink, Limits, SizeCaps, redact
from toolwire.redaction import REDACTED, redact_text

AUDITED = str(Path(__file__).resolve().parents[1] / "servers" / "audited.py")


def audited_server(records: list[dict[str, Any]], **audit: Any) -> Server:
    server = Server("audit", guards=[Audit(records.append, **audit), SizeCaps(max_argument_bytes=200)], timeout=0.3)

    @server.tool
    async def lookup(city: str, days: int = 3, tags: list[str] | None = None) -> str:
        """Look up."""
        if city == "Atlantis":
            raise ToolError("no such city")
        return city

    @server.tool
    async def stall() -> str:
        """Never ends."""
        await asyncio.sleep(60)
        return "never"

    return server


@pytest.mark.parametrize("version", [LEGACY[-1], MODERN])
async def test_every_outcome_is_recorded_before_and_after(version: str) -> None:
    records: list[dict[str, Any]] = []
    peer = await open_peer(audited_server(records), version)
    await peer.call("lookup", {"city": "Paris", "tags": ["a", "b"]})
    await peer.call("lookup", {"city": "Atlantis"})
    await peer.call("lookup", {"city": "x" * 500})
    await peer.call("stall")
    await peer.call("nope", {})
    starts = [record for record in records if record["phase"] == "start"]
    ends = {record["id"]: record for record in records if record["phase"] == "end"}
    assert [start["name"] for start in starts] == ["lookup", "lookup", "lookup", "stall", "nope"]
    assert starts[0]["arguments"] == {"city": "string(5)", "tags": "array(2)"}  # shapes, not values
    assert starts[0]["version"] == version and starts[0]["session"]
    assert starts[0]["client"] == ("t/1" if version != MODERN else None)  # modern requests here send no clientInfo
    outcomes = [(ends[start["id"]]["outcome"], ends[start["id"]]["error"]) for start in starts]
    assert outcomes == [
        ("ok", None),
        ("tool_error", "execution"),
        ("tool_error", "too_large"),
        ("tool_error", "timeout"),
        ("error", -32602),
    ]
    assert ends[starts[3]["id"]]["ms"] >= 300
    assert all(record["time"].endswith("Z") for record in records)


async def test_values_are_recorded_only_when_asked_and_then_redacted() -> None:
    records: list[dict[str, Any]] = []
    peer = await open_peer(audited_server(records, values=True), MODERN)
    await peer.call("lookup", {"city": "Bearer abcdefghijklmnopqrstuvwxyz", "tags": ["sk-ant-abcdefghijklmnopqrstuv"]})
    assert records[0]["arguments"] == {"city": f"Bearer {REDACTED}", "tags": [REDACTED]}


async def test_a_cancelled_call_is_recorded_as_cancelled() -> None:
    records: list[dict[str, Any]] = []
    peer = await open_peer(audited_server(records), LEGACY[-1])
    id = await peer.send("tools/call", {"name": "stall", "arguments": {}})
    await asyncio.sleep(0.05)
    await peer.connection.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}})
    await asyncio.sleep(0.05)
    assert [record["outcome"] for record in records if record["phase"] == "end"] == ["cancelled"]


@pytest.mark.parametrize("durability", ["flush", "fsync", "batched"])
def test_a_server_killed_mid_call_keeps_the_start_of_every_call(tmp_path: Path, durability: str) -> None:
    log = tmp_path / "audit.jsonl"
    environment = {"AUDIT_FILE": str(log), "AUDIT_DURABILITY": durability}
    with RawClient(toolwire_command(AUDITED), env=environment) as client:
        client.initialize()
        client.request("tools/call", {"name": "slow", "arguments": {"seconds": 0}})
        for number in range(100):
            params = {"name": "hold", "arguments": {}, "_meta": {"progressToken": number}}
            client.send({"jsonrpc": "2.0", "id": f"c{number}", "method": "tools/call", "params": params})
        running = {client.receive()["params"]["progressToken"] for _ in range(100)}  # each tool runs
        assert running == set(range(100))
        os.kill(client.process.pid, signal.SIGKILL)
        client.process.wait(10)
    records = [orjson.loads(line) for line in log.read_bytes().splitlines()]
    starts = [record for record in records if record["phase"] == "start"]
    assert len(starts) == 101, f"{durability}: {len(starts)} of the 101 calls that began have their start record"
    assert {record["name"] for record in starts[1:]} == {"hold"}
    ends = [record for record in records if record["phase"] == "end"]
    assert len(ends) == 1  # batched too: held, it went out with the next call's start record


def test_secrets_stay_out_of_the_servers_log(tmp_path: Path) -> None:
    with RawClient(toolwire_command(AUDITED), env={"AUDIT_FILE": str(tmp_path / "a.jsonl")}) as client:
        client.initialize()
        answer = client.request(
            "tools/call", {"name": "leak", "arguments": {"password": "hunter2-ABCdef123456789xyzXYZ00"}}
        )
        assert answer["result"]["isError"] is True
        client.close()
        log = "".join(client.stderr_lines)
    assert "tool 'leak' raised" in log
    assert "sk-ant-abcdefghijklmnopqrstuvwx" not in log and "hunter2-ABCdef123456789xyzXYZ00" not in log


def test_a_file_sink_rotates_and_can_fsync(tmp_path: Path) -> None:
    sink = FileSink(tmp_path / "a.jsonl", durability="fsync", max_bytes=200, backups=2)
    for number in range(20):
        sink({"n": number, "pad": "x" * 40})
    sink.close()
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names == ["a.jsonl", "a.jsonl.1", "a.jsonl.2"]
    newest = [orjson.loads(line)["n"] for line in (tmp_path / "a.jsonl").read_bytes().splitlines()]
    assert newest[-1] == 19
    batched = FileSink(tmp_path / "b.jsonl", durability="batched")
    batched({"n": 1})
    assert (tmp_path / "b.jsonl").read_bytes() == b""
    batched.close()
    assert (tmp_path / "b.jsonl").read_bytes() == b'{"n":1}\n'


def open_descriptors(path: Path) -> int:
    """How many of this process's file descriptors are open on ``path`` (Linux)."""
    found = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(FileNotFoundError):  # the listing's own, closed by now
            found += os.readlink(f"/proc/self/fd/{fd}") == str(path)
    return found


def test_a_file_sink_dropped_without_close_writes_what_it_holds_and_closes_its_file(tmp_path: Path) -> None:
    path = tmp_path / "dropped.jsonl"
    sink = FileSink(path, durability="batched")
    sink({"phase": "start", "n": 1})
    sink({"phase": "end", "n": 1})  # held until the next start record, or the sink's end
    assert open_descriptors(path) == 1
    del sink
    gc.collect()
    assert open_descriptors(path) == 0
    assert [orjson.loads(line)["phase"] for line in path.read_bytes().splitlines()] == ["start", "end"]
    closed = FileSink(path)
    closed.close()
    closed.close()  # a second close does nothing
    with pytest.raises(OSError):
        closed({"phase": "start"})


async def test_size_caps_name_the_cap() -> None:
    server = Server("caps", guards=[SizeCaps(max_argument_bytes=60, max_result_bytes=80)])

    @server.tool
    def echo(text: str) -> str:
        return text

    peer = await open_peer(server, MODERN)
    small = await peer.call("echo", {"text": "hi"})
    big_in = await peer.call("echo", {"text": "x" * 60})
    big_out = await peer.call("echo", {"text": "y" * 45})
    assert small["result"]["content"][0]["text"] == "hi"
    assert big_in["result"]["content"][0]["text"] == (
        "The call was refused: the arguments of tools/call echo are 71 bytes; the limit is 60 (max_argument_bytes). Send less."
    )
    assert "(max_result_bytes). Ask for less at a time." in big_out["result"]["content"][0]["text"]


def test_a_busy_refusal_is_recorded_too() -> None:
    async def scenario() -> list[dict[str, Any]]:
        records: list[dict[str, Any]] = []
        server = Server("busy", guards=[Limits(queue_timeout=0.05), Audit(records.append)])

        @server.tool(max_concurrency=1)
        async def one() -> str:
            await asyncio.sleep(0.3)
            return "done"

        peer = await open_peer(server, MODERN)
        await peer.send("tools/call", {"name": "one", "arguments": {}})
        await peer.send("tools/call", {"name": "one", "arguments": {}})
        await peer.connection.receive()
        await peer.connection.receive()
        return records

    records = asyncio.run(scenario())
    assert sorted(str(record["error"]) for record in records if record["phase"] == "end") == ["None", "busy"]


def test_redaction_finds_secrets_and_leaves_prose() -> None:
    found = redact(
        {
            "password": "x",
            "apiKey": "y",
            "X-Api-Key": "z",
            "max_tokens": 10,
            "keyboard": "qwerty",
            "note": "use Bearer abcdefgh12345678 or ghp_abcdefghijklmnopqrstuvwxyz0123",
            "url": "https://bob:hunter2@example.com/x",
            "aws": "AKIAABCDEFGHIJKLMNOP",
            "random": "aZ3kL9qP0xW2vB7nM4cR8tY1uI6oE5sD",
            "prose": "the quick brown fox jumps over the lazy dog, twice over",
            "words": "the token verifier failed; token abc123defg expired",
            "path": "/usr/share/doc/python3/README.Debian",
            "frame": 'File "/tmp/ci1/src/toolwire/server/session.py", line 607',
            "slashed": "/aZ3kL9qP0xW2vB7nM4cR8tY1uI6oE5sDx",
            "mktemp": 'File "/tmp/tmp.Xq3ZpT7bKc/unpacked/toolwire/tools/threads.py", line 138',
            "named mktemp": 'File "/tmp/toolwire-compiled-check.iySdB1Tn2N/unpacked/toolwire/x.py", line 1',
            "in a path": "/srv/keys/aZ3kL9qP0xW2vB7nM4cR8tY1uI6oE5sD/x.txt",
        }
    )
    assert found == {
        "password": REDACTED,
        "apiKey": REDACTED,
        "X-Api-Key": REDACTED,
        "max_tokens": 10,
        "keyboard": "qwerty",
        "note": f"use Bearer {REDACTED} or {REDACTED}",
        "url": f"https://{REDACTED}@example.com/x",
        "aws": REDACTED,
        "random": REDACTED,
        "prose": "the quick brown fox jumps over the lazy dog, twice over",
        "words": f"the token verifier failed; token {REDACTED} expired",
        "path": "/usr/share/doc/python3/README.Debian",
        "frame": 'File "/tmp/ci1/src/toolwire/server/session.py", line 607',  # a path with digits
        "slashed": REDACTED,
        "mktemp": 'File "/tmp/tmp.Xq3ZpT7bKc/unpacked/toolwire/tools/threads.py", line 138',  # a random folder
        "named mktemp": 'File "/tmp/toolwire-compiled-check.iySdB1Tn2N/unpacked/toolwire/x.py", line 1',
        "in a path": f"{REDACTED}.txt",  # a name long enough to be a key: not a path left whole
    }


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_redaction_never_fails_and_keeps_json_json(value: Any) -> None:
    orjson.dumps(redact(value))
    if isinstance(value, str):
        assert redact_text(value) == redact(value)


def test_a_bad_durability_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="durability must be"):
        FileSink(tmp_path / "x", durability="sometimes")


ALL_GUARDS = str(Path(__file__).resolve().parents[1] / "servers" / "all_guards.py")


@pytest.mark.parametrize("version", [LEGACY[-1], MODERN])
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_every_guard_over_a_real_transport_is_audited(
    transport: str, version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.httpserve import toolwire_http
    from toolwire.client import Client

    audit_file = tmp_path / "audit.jsonl"
    monkeypatch.setenv("AUDIT_FILE", str(audit_file))
    with contextlib.ExitStack() as stack:
        target = ALL_GUARDS if transport == "stdio" else stack.enter_context(toolwire_http(ALL_GUARDS))[0]
        async with Client(target, protocol=version, timeout=20) as client:
            calls = [
                ("echo", {"text": "hello"}),
                ("echo", {"text": "x" * 300}),
                ("repeat", {"text": "y", "times": 500}),
                *[("limited", {})] * 4,
                ("stall", {}),
            ]
            results = [await client.call_tool(name, arguments) for name, arguments in calls]
    said = [" ".join(block.text for block in result.content if hasattr(block, "text")) for result in results]
    assert said[0] == "hello" and not results[0].is_error
    assert "(max_argument_bytes). Send less." in said[1]
    assert "(max_result_bytes). Ask for less at a time." in said[2]
    assert said[3:6] == ["allowed"] * 3
    assert said[6].startswith("Rate limit: limited may be called 3 times a minute (bursts of 3); try again in")
    assert said[7] == "Tool 'stall' timed out after 0.5 s and was cancelled."
    records = [orjson.loads(line) for line in audit_file.read_bytes().splitlines()]
    starts = [record for record in records if record["phase"] == "start"]
    ends = {record["id"]: record for record in records if record["phase"] == "end"}
    assert [start["name"] for start in starts] == [name for name, _ in calls]
    assert {start["version"] for start in starts} == {version}
    assert {start["session"] for start in starts} and all(start["session"] for start in starts)
    assert starts[1]["arguments"] == {"text": "string(300)"}
    outcomes = [(ends[start["id"]]["outcome"], ends[start["id"]]["error"]) for start in starts]
    assert outcomes == [
        ("ok", None),
        ("tool_error", "too_large"),
        ("tool_error", "too_large"),
        *[("ok", None)] * 3,
        ("tool_error", "rate_limited"),
        ("tool_error", "timeout"),
    ]


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A directory on a 64 KiB tmpfs filled up but for an empty ``audit.jsonl``."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)], capture_output=True)
    assert mounted.returncode == 0, (
        f"cannot mount a tmpfs here (the tests run as root, as CI does): {mounted.stderr.decode().strip()}"
    )
    try:
        (disk / "audit.jsonl").touch()
        filler = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
        with contextlib.suppress(OSError):
            while True:
                os.write(filler, b"x" * 512)
        os.close(filler)
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=True)


FULL = "Internal error: the audit trail cannot be written (No space left on device); the call was not run"


def test_a_full_disk_refuses_calls_with_a_json_rpc_error_over_stdio(full_disk: Path) -> None:
    with RawClient(toolwire_command(AUDITED), env={"AUDIT_FILE": str(full_disk / "audit.jsonl")}) as client:
        client.initialize()
        for _ in range(2):  # refused, and the server goes on answering
            error = client.request("tools/call", {"name": "slow", "arguments": {"seconds": 0}})["error"]
            assert error == {"code": -32603, "message": FULL}
        (full_disk / "filler").unlink()
        assert client.request("tools/call", {"name": "slow", "arguments": {"seconds": 0}})["result"]["content"]


def test_a_full_disk_refuses_calls_with_a_json_rpc_error_over_http(
    full_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDIT_FILE", str(full_disk / "audit.jsonl"))
    with toolwire_http(AUDITED) as (url, _):
        for number in range(2):
            body = modern_call("slow", {"seconds": 0}, id=number)
            response = httpx.post(url, json=body, headers=modern_headers("tools/call", "slow"))
            assert response.status_code == 200
            assert response.json()["error"] == {"code": -32603, "message": FULL}
        (full_disk / "filler").unlink()
        response = httpx.post(
            url, json=modern_call("slow", {"seconds": 0}), headers=modern_headers("tools/call", "slow")
        )
        assert response.json()["result"]["content"][0]["text"] == "done"


@pytest.mark.parametrize("version", [LEGACY[-1], MODERN])
async def test_a_guard_that_raises_is_an_internal_error_that_names_no_file(version: str) -> None:
    async def broken(call: Any, next: Any) -> Any:
        raise PermissionError(13, "Permission denied", "/srv/secret/audit.jsonl")

    server = Server("broken", guards=[broken])
    server.add_tool(lambda: "x", name="plain")
    server.add_resource("data://one", "text")
    peer = await open_peer(server, version)
    for answer in (await peer.call("plain", {}), await peer.request("resources/read", {"uri": "data://one"})):
        error = answer["error"]
        assert error["code"] == -32603 and "PermissionError" in error["message"] and "/srv" not in error["message"]
    assert (await peer.request("tools/list"))["result"]["tools"][0]["name"] == "plain"
