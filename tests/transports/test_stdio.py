"""End to end over real stdio pipes, driven by a raw JSON-RPC client (not toolwire's own)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.rawclient import RawClient, modern_meta, toolwire_command

SERVER = str(Path(__file__).parents[1] / "servers" / "basic.py")
LEGACY = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]


@pytest.mark.parametrize("version", LEGACY)
def test_legacy_session_over_stdio(serve, version: str) -> None:
    client = serve(SERVER)
    init = client.initialize(version)["result"]
    assert init["protocolVersion"] == version
    assert init["serverInfo"] == {"name": "stdio-test", "version": "1.2.3"}
    tools = {tool["name"]: tool for tool in client.request("tools/list")["result"]["tools"]}
    assert {"echo", "analyze", "countdown", "broken"} <= set(tools)
    assert ("outputSchema" in tools["analyze"]) == (version >= "2025-06-18")
    assert client.request("tools/call", {"name": "echo", "arguments": {"text": "héllo ✓"}})["result"] == {
        "content": [{"type": "text", "text": "héllo ✓"}]
    }
    analyzed = client.request("tools/call", {"name": "analyze", "arguments": {"text": "a b c"}})["result"]
    assert analyzed["content"][0]["text"] == '{"characters":5,"words":3}'
    assert ("structuredContent" in analyzed) == (version >= "2025-06-18")
    broken = client.request("tools/call", {"name": "broken", "arguments": {}})["result"]
    assert broken == {"content": [{"type": "text", "text": "the external API is down"}], "isError": True}
    client.notifications.clear()
    params = {"name": "countdown", "arguments": {"n": 3}, "_meta": {"progressToken": 42}}
    assert client.request("tools/call", params)["result"]["content"][0]["text"] == "liftoff"
    progress = [n["params"] for n in client.notifications if n["method"] == "notifications/progress"]
    assert [p["progress"] for p in progress] == [1, 2, 3] and progress[0]["progressToken"] == 42
    assert client.request("ping")["result"] == {}
    assert client.close() == 0


def test_modern_requests_over_stdio(serve) -> None:
    client = serve(SERVER)
    discovered = client.request("server/discover", {"_meta": modern_meta()})["result"]
    assert discovered["supportedVersions"][0] == "2026-07-28" and discovered["resultType"] == "complete"
    listed = client.request("tools/list", {"_meta": modern_meta()})["result"]
    assert listed["ttlMs"] >= 0 and listed["cacheScope"] in ("public", "private")
    result = client.request("tools/call", {"name": "analyze", "arguments": {"text": "x y"}, "_meta": modern_meta()})[
        "result"
    ]
    assert result["structuredContent"] == {"characters": 3, "words": 2} and result["resultType"] == "complete"
    missing = client.request("tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})
    assert missing["error"]["code"] == -32602
    assert client.close() == 0


def test_both_eras_against_one_server_process(serve) -> None:
    client = serve(SERVER)
    modern = client.request("tools/call", {"name": "echo", "arguments": {"text": "before"}, "_meta": modern_meta()})
    assert modern["result"]["content"][0]["text"] == "before"
    assert client.initialize("2025-06-18")["result"]["protocolVersion"] == "2025-06-18"
    legacy = client.request("tools/call", {"name": "analyze", "arguments": {"text": "a"}})["result"]
    assert "resultType" not in legacy and legacy["structuredContent"] == {"characters": 1, "words": 1}
    modern = client.request("tools/call", {"name": "analyze", "arguments": {"text": "a"}, "_meta": modern_meta()})[
        "result"
    ]
    assert modern["resultType"] == "complete"


def test_only_protocol_messages_on_stdout(serve) -> None:
    client = serve(SERVER)
    client.initialize()
    assert client.request("tools/call", {"name": "noisy", "arguments": {}})["result"]["content"][0]["text"] == "quiet"
    assert client.request("ping")["result"] == {}  # stdout still parses, line by line
    client.close()
    assert any("this goes to stderr" in line for line in client.stderr_lines)
    assert any("so does this" in line for line in client.stderr_lines)


def test_exits_on_stdin_eof_after_finishing_calls_in_flight(serve) -> None:
    client = serve(SERVER)
    client.initialize()
    client.send(
        {
            "jsonrpc": "2.0",
            "id": "last",
            "method": "tools/call",
            "params": {"name": "sleepy", "arguments": {"seconds": 0.3}},
        }
    )
    client.process.stdin.close()
    answer = client.wait_for("last")
    assert answer["result"]["content"][0]["text"] == "slept 0.3"
    assert client.process.wait(5) == 0


def test_every_call_sent_before_end_of_input_is_answered(serve) -> None:
    client = serve(SERVER)
    client.initialize()
    calls = [  # a plain function's calls wait for a worker thread: most are still queued at the end
        {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "analyze", "arguments": {"text": "a"}}}
        for id in range(3000)
    ]
    client.send_raw(b"".join(json.dumps(call).encode() + b"\n" for call in calls))
    client.process.stdin.close()  # at once: most calls have not started yet
    answered = set()
    while len(answered) < 3000:  # in any order; an answer missing: stdout closes first
        answer = client.receive()
        assert "result" in answer
        answered.add(answer["id"])
    assert client.process.wait(5) == 0


def test_cancellation_over_stdio(serve) -> None:
    client = serve(SERVER)
    client.initialize()
    client.send(
        {
            "jsonrpc": "2.0",
            "id": "long",
            "method": "tools/call",
            "params": {"name": "sleepy", "arguments": {"seconds": 30}},
        }
    )
    time.sleep(0.1)
    client.notify("notifications/cancelled", {"requestId": "long", "reason": "user pressed stop"})
    assert (
        client.request("tools/call", {"name": "echo", "arguments": {"text": "next"}})["result"]["content"][0]["text"]
        == "next"
    )
    started = time.perf_counter()
    assert client.close() == 0
    assert time.perf_counter() - started < 3  # nothing left running
    assert all(n.get("id") != "long" for n in client.notifications)


def test_framing_survives_split_writes_garbage_and_oversized_lines() -> None:
    with RawClient(toolwire_command(SERVER)) as client:
        client.initialize()
        message = b'{"jsonrpc":"2.0","id":"split","method":"tools/call","params":{"name":"echo","arguments":{"text":"pieces"}}}\n'
        for i in range(0, len(message), 7):
            client.send_raw(message[i : i + 7])
            time.sleep(0.001)
        assert client.wait_for("split")["result"]["content"][0]["text"] == "pieces"
        client.send_raw(b"this is not json\n\n\r\n")
        assert client.receive()["error"]["code"] == -32700
        client.send_raw(
            b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"' + b"x" * (5 * 1024 * 1024) + b'"}}\n'
        )
        error = client.receive()
        assert error["error"]["code"] == -32600 and "exceeds the limit" in error["error"]["message"]
        assert client.request("ping")["result"] == {}


def test_run_picks_the_named_object_and_explains_mistakes(tmp_path: Path) -> None:
    with RawClient(toolwire_command(SERVER + ":other")) as client:
        assert client.initialize()["result"]["serverInfo"]["name"] == "another"
    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    two = tmp_path / "two.py"
    two.write_text("from toolwire import Server\na = Server('a')\nb = Server('b')\n")
    for target, message in [
        (str(empty), "defines no Server"),
        (str(two), "defines several Servers"),
        (str(tmp_path / "missing.py"), "no such file"),
        (SERVER + ":nothing", "no object named 'nothing'"),
    ]:
        done = subprocess.run(toolwire_command(target), capture_output=True, text=True, timeout=30)
        assert done.returncode == 2 and message in done.stderr
    done = subprocess.run([sys.executable, "-m", "toolwire", "bogus"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and done.stderr.startswith("toolwire: unknown command 'bogus': the commands are run,")


@pytest.mark.parametrize("uvloop", ["1", "0"])
def test_serves_on_either_event_loop(serve, uvloop: str) -> None:
    client = serve(SERVER, env={"TOOLWIRE_UVLOOP": uvloop})
    client.initialize()
    client.send(
        {
            "jsonrpc": "2.0",
            "id": "s",
            "method": "tools/call",
            "params": {"name": "sleepy", "arguments": {"seconds": 0.05}},
        }
    )
    assert (
        client.request("tools/call", {"name": "echo", "arguments": {"text": "x"}})["result"]["content"][0]["text"]
        == "x"
    )
    assert client.wait_for("s")["result"]["content"][0]["text"] == "slept 0.05"
    assert client.request("tools/call", {"name": "analyze", "arguments": {"text": "a b"}})["result"][
        "structuredContent"
    ] == {"characters": 3, "words": 2}
    assert client.close() == 0


def test_stdin_and_stdout_may_be_regular_files(tmp_path: Path) -> None:
    requests = tmp_path / "in.jsonl"
    requests.write_text(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}})
        + "\n"
        + json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "sleepy", "arguments": {"seconds": 0.05}},
            }
        )
        + "\n"
    )
    with requests.open("rb") as stdin, (tmp_path / "out.jsonl").open("wb") as stdout:
        subprocess.run(toolwire_command(SERVER), stdin=stdin, stdout=stdout, timeout=30, check=True)
    answers = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert [a["id"] for a in answers] == [1, 2] and answers[1]["result"]["content"][0]["text"] == "slept 0.05"
