"""``toolwire dev DIR``: the inspector serves a folder of tool files through ``toolwire run
DIR --reload``; a file written meanwhile reaches the page as a change of the tools (read
from the page's event stream), and its tool is callable at once."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import httpx

from tests.cli.test_dev import inspector

TOOL = """
    from toolwire import Server

    server = Server("{name}")

    @server.tool
    def {name}() -> str:
        return "{name} ran"
"""


def test_a_folder_is_inspected_and_a_new_file_shows_up_as_a_change_of_the_tools(tmp_path: Path) -> None:
    folder = tmp_path / "desk"
    folder.mkdir()
    (folder / "first.py").write_text(textwrap.dedent(TOOL.format(name="first")))
    with inspector(str(folder)) as url:
        base, token = url.split("?")[0], url.split("token=")[1]
        headers = {"X-Toolwire-Token": token}
        state = httpx.post(base + "api/state", headers=headers, timeout=30).json()["ok"]
        with httpx.stream("GET", base + "api/events", params={"token": token}, timeout=60) as events:
            (folder / "second.py").write_text(textwrap.dedent(TOOL.format(name="second")))
            for line in events.iter_lines():
                if line.startswith("data: ") and json.loads(line[6:]) == {"kind": "changed", "what": "tools"}:
                    break
        called = httpx.post(
            base + "api/call",
            headers=headers,
            json={"name": "second", "arguments": {}, "call": "c1"},
            timeout=30,
        ).json()["ok"]
    assert state["server"]["name"] == "desk"
    assert called["result"]["content"][0]["text"] == "second ran"
