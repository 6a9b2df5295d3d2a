"""``toolwire run DIR``: a folder of tool files served over stdio, what cannot be served
said on stderr a line each; ``--reload`` refused for a file."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.support.rawclient import modern_meta

TOOL = """
    from toolwire import Server

    server = Server("one")

    @server.tool
    def ping() -> str:
        return "pong"
"""


def test_a_folder_is_served_over_stdio_and_a_broken_file_named_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "one.py").write_text(textwrap.dedent(TOOL))
    (tmp_path / "two.py").write_text("1 / 0\n")
    modern = {"_meta": modern_meta()}
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": modern},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "ping", "arguments": {}, **modern}},
    ]
    served = subprocess.run(
        [sys.executable, "-m", "toolwire", "run", str(tmp_path)],
        input="".join(json.dumps(request) + "\n" for request in requests),
        capture_output=True,
        text=True,
        timeout=60,
    )
    answers = {answer["id"]: answer["result"] for answer in map(json.loads, served.stdout.splitlines())}
    assert [tool["name"] for tool in answers[1]["tools"]] == ["ping"]
    assert answers[2]["content"][0]["text"] == "pong"
    said = [line for line in served.stderr.splitlines() if "two.py" in line]
    assert len(said) == 1
    assert "two.py failed to import, so nothing of it is served: ZeroDivisionError: division by zero" in said[0]


def test_reload_is_refused_for_a_file(tmp_path: Path) -> None:
    (tmp_path / "one.py").write_text(textwrap.dedent(TOOL))
    refused = subprocess.run(
        [sys.executable, "-m", "toolwire", "run", str(tmp_path / "one.py"), "--reload"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "--reload is for a folder of tool files" in refused.stderr
