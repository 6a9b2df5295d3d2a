"""The seed example's file tools against a hostile caller, over a real stdio process:
catastrophic regular expressions, huge lines and files, and errors that would leak where the
server keeps its workspace. An event-loop watchdog (a ping answered within a second) runs
beside the slow cases; memory is measured before and after."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.rawclient import RawClient, toolwire_command

SEED = str(Path(__file__).resolve().parents[2] / "examples" / "seed_server.py")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("workspace")
    (root / "words.txt").write_text(("hello world " * 2000) + "!\n" + "a" * 5000 + "b\n")
    (root / "one_line.txt").write_text("x" * 20_000_000)  # 20 MB, no newline
    (root / "lines.txt").write_text("".join(f"line {n}\n" for n in range(1, 1001)))
    with (root / "big.csv").open("w") as out:
        out.write("id,price,quantity,name\n")
        for n in range(600_000):
            out.write(f"{n},{n % 1000 / 10},{n % 7},item{n}\n")
    (root / "locked.txt").write_text("secret")
    os.chmod(root / "locked.txt", 0)
    (root / "adir").mkdir()
    (root / "loop").symlink_to(root / "loop")
    return root


@pytest.fixture(scope="module")
def seed(workspace: Path) -> Iterator[RawClient]:
    with RawClient(toolwire_command(SEED), env={"TOOLWIRE_EXAMPLES_ROOT": str(workspace)}) as client:
        client.initialize()
        yield client


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def call(client: RawClient, tool: str, arguments: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
    return client.request("tools/call", {"name": tool, "arguments": arguments}, timeout=timeout)["result"]


def text(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


def with_ping(client: RawClient, tool: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], float]:
    """Call ``tool`` and ping at once: the result, and how long the ping took."""
    client.send(
        {"jsonrpc": "2.0", "id": "slow", "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    )
    started = time.monotonic()
    client.send({"jsonrpc": "2.0", "id": "ping", "method": "ping"})
    answers: dict[Any, Any] = {}
    ping_took = 0.0
    while len(answers) < 2:
        message = client.receive(timeout=30)
        if "id" in message:
            answers[message["id"]] = message
            if message["id"] == "ping":
                ping_took = time.monotonic() - started
    return answers["slow"]["result"], ping_took


@pytest.mark.parametrize("pattern", [r"^(\w+\s*)*$", r"(a+)+$", r"(x+x+)+y"])
def test_catastrophic_patterns_finish_at_once_and_the_server_keeps_answering(seed: RawClient, pattern: str) -> None:
    started = time.monotonic()
    result, ping_took = with_ping(seed, "search_codebase", {"pattern": pattern, "maxResults": 5})
    assert time.monotonic() - started < 5 and ping_took < 1.0
    assert not result.get("isError"), result


def test_patterns_re2_cannot_run_say_why(seed: RawClient) -> None:
    for pattern in [r"(a)\1", r"(?<=a)b"]:
        result = call(seed, "search_codebase", {"pattern": pattern})
        assert result["isError"] and "backreferences" in text(result) and "lookaround" in text(result)


def test_a_huge_line_comes_back_capped_with_and_without_a_range(seed: RawClient) -> None:
    before = rss_mib(seed.process.pid)
    whole = call(seed, "get_file_content", {"path": "one_line.txt"})
    assert whole["isError"] and "ask for a range" in text(whole)
    for arguments in ({"startLine": 1}, {"startLine": 1, "endLine": 1}, {"endLine": 1}):
        result = call(seed, "get_file_content", {"path": "one_line.txt", **arguments})
        body = text(result)
        assert not result.get("isError") and len(body) < 1_100_000
        assert body.endswith(
            "[cut: at most 1048576 characters are returned; line 1 was cut short; read on with startLine=2]"
        )
    grown = rss_mib(seed.process.pid) - before
    assert grown < 40, f"the server grew by {grown:.1f} MiB reading a 20 MB line"


def test_a_range_past_the_cap_says_where_to_read_on(seed: RawClient) -> None:
    result = call(seed, "get_file_content", {"path": "lines.txt", "startLine": 998})
    assert text(result) == "line 998\nline 999\nline 1000\n"


def test_a_big_csv_is_analyzed_as_a_stream(seed: RawClient, workspace: Path) -> None:
    before = rss_mib(seed.process.pid)
    result = call(seed, "analyze_csv", {"filepath": "big.csv", "operations": ["sum", "average", "count"]}, timeout=60)
    grown = rss_mib(seed.process.pid) - before
    structured = result["structuredContent"]
    rows = 600_000
    prices = [n % 1000 / 10 for n in range(rows)]
    assert structured["rows"] == rows and structured["skipped_columns"] == ["name"]
    assert structured["columns"]["price"]["count"] == rows
    assert abs(structured["columns"]["price"]["sum"] - sum(prices)) < 1e-6
    assert structured["columns"]["quantity"]["average"] == pytest.approx(sum(n % 7 for n in range(rows)) / rows)
    size_mib = (workspace / "big.csv").stat().st_size / 2**20
    assert grown < size_mib / 2, f"the server grew by {grown:.1f} MiB for a {size_mib:.0f} MiB file"


def test_errors_name_paths_as_the_caller_gave_them(seed: RawClient, workspace: Path) -> None:
    root = str(workspace)
    unreadable = [] if os.geteuid() == 0 else ["locked.txt"]  # root reads anything
    cases = [("get_file_content", {"path": path}) for path in unreadable]
    cases += [("analyze_csv", {"filepath": path, "operations": ["sum"]}) for path in unreadable]
    cases += [("process_large_file", {"path": path}) for path in unreadable]
    for tool, arguments in [
        *cases,
        ("get_file_content", {"path": "loop"}),
        ("delete_file", {"path": "loop/x"}),
        ("search_codebase", {"pattern": "(unclosed"}),
        ("get_file_content", {"path": "adir"}),
        ("get_file_content", {"path": "missing.txt"}),
        ("delete_file", {"path": "adir"}),
    ]:
        result = call(seed, tool, arguments)
        assert result["isError"], (tool, result)
        assert root not in text(result), text(result)
    assert text(call(seed, "get_file_content", {"path": "loop"})) == (
        "Cannot resolve loop: it leads into a loop of symbolic links"
    )
    if unreadable:
        assert "Permission denied" in text(call(seed, "get_file_content", {"path": "locked.txt"}))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(min_size=1, max_size=40))
def test_no_error_of_any_path_reveals_the_workspace(seed: RawClient, workspace: Path, path: str) -> None:
    for tool, arguments in [
        ("get_file_content", {"path": path}),
        ("delete_file", {"path": path + ".nope"}),
        ("analyze_csv", {"filepath": path, "operations": ["count"]}),
    ]:
        result = call(seed, tool, arguments)
        body = " ".join(block.get("text", "") for block in result.get("content", []))
        assert str(workspace) not in body


@pytest.mark.parametrize(
    "path", ["n" * 300, "d/" * 2100 + "x", "words.txt/" + "n" * 300], ids=["long-name", "long-path", "under-a-file"]
)
def test_over_long_paths_are_refused_without_revealing_the_workspace(
    seed: RawClient, workspace: Path, path: str
) -> None:
    for tool, arguments in [
        ("get_file_content", {"path": path}),
        ("delete_file", {"path": path}),
        ("analyze_csv", {"filepath": path, "operations": ["count"]}),
        ("process_large_file", {"path": path}),
    ]:
        said = text(call(seed, tool, arguments))
        assert str(workspace) not in said, said[:300]
        endings = ("File name too long", f"File not found: {path}", "does not exist: nothing to delete")
        assert said.endswith(endings), (tool, said[-200:])
