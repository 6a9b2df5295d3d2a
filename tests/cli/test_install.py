"""``toolwire install``: a server file added to an MCP client's own configuration, run as a
real process with a home directory of its own; and the entry it writes starts the server."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.support.clirun import toolwire
from tests.support.rawclient import RawClient
from toolwire.terminal.install import target

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "seed_server.py")


def home_of(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config")}


def test_claude_desktop_gets_an_entry_that_starts_the_server(tmp_path: Path) -> None:
    done = toolwire("install", "claude-desktop", SEED, "--env", "SEED_ROOT=/srv/data", **home_of(tmp_path))
    assert done.returncode == 0, done.stderr
    config = tmp_path / "home" / ".config" / "Claude" / "claude_desktop_config.json"
    assert f"added 'seed_server' in {config}" in done.stdout
    entry = json.loads(config.read_text())["mcpServers"]["seed_server"]
    assert entry == {
        "command": sys.executable,
        "args": ["-m", "toolwire", "run", SEED],
        "env": {"SEED_ROOT": "/srv/data"},
    }
    # started as the app would: that command, from anywhere
    with RawClient([entry["command"], *entry["args"]], env={**os.environ, **entry["env"]}, cwd=str(tmp_path)) as peer:
        assert peer.initialize()["result"]["serverInfo"]["name"] == "seed-examples"


def test_an_existing_configuration_is_merged_and_backed_up(tmp_path: Path) -> None:
    config = tmp_path / "home" / ".cursor" / "mcp.json"
    config.parent.mkdir(parents=True)
    before = {"mcpServers": {"other": {"command": "other-server"}, "seed": {"command": "old"}}, "theme": "dark"}
    config.write_text(json.dumps(before))
    done = toolwire("install", "cursor", SEED, "--name", "seed", **home_of(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "replaced 'seed'" in done.stdout
    after = json.loads(config.read_text())
    assert after["theme"] == "dark" and after["mcpServers"]["other"] == {"command": "other-server"}
    assert after["mcpServers"]["seed"]["args"][-1] == SEED
    assert json.loads((config.parent / "mcp.json.bak").read_text()) == before


def test_a_file_that_is_not_json_is_left_alone(tmp_path: Path) -> None:
    config = tmp_path / "home" / ".codeium" / "windsurf" / "mcp_config.json"
    config.parent.mkdir(parents=True)
    config.write_text("{ not json")
    done = toolwire("install", "windsurf", SEED, **home_of(tmp_path))
    assert done.returncode == 1
    assert done.stderr.startswith(f"toolwire: {config} is not JSON")
    assert config.read_text() == "{ not json"


def test_vscode_and_claude_code_entries_name_their_transport(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    done = toolwire("install", "vscode", SEED, cwd=workspace, **home_of(tmp_path))
    assert done.returncode == 0, done.stderr
    servers = json.loads((workspace / ".vscode" / "mcp.json").read_text())["servers"]
    assert servers["seed_server"]["type"] == "stdio"
    done = toolwire("install", "claude-code", f"{SEED}:server", **home_of(tmp_path))
    assert done.returncode == 0, done.stderr
    entry = json.loads((tmp_path / "home" / ".claude.json").read_text())["mcpServers"]["seed_server"]
    assert entry["type"] == "stdio" and entry["args"][-1] == f"{SEED}:server"


def test_print_shows_the_entry_and_writes_nothing(tmp_path: Path) -> None:
    done = toolwire("install", "claude-desktop", SEED, "--print", **home_of(tmp_path))
    assert done.returncode == 0
    first, rest = done.stdout.split("\n", 1)
    assert first.endswith("claude_desktop_config.json")
    assert json.loads(rest)["mcpServers"]["seed_server"]["command"] == sys.executable
    assert not (tmp_path / "home" / ".config").exists()


def test_a_file_that_does_not_import_is_not_installed(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("from toolwire import Server\nserver = Server('b'\n")
    done = toolwire("install", "cursor", str(broken), **home_of(tmp_path))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"toolwire: could not import {broken}: SyntaxError: '(' was never closed (line 2)\n"
    missing = toolwire("install", "cursor", f"{SEED}:missing", **home_of(tmp_path))
    assert missing.returncode == 2
    assert missing.stderr == f"toolwire: {SEED} has no object named 'missing' (see toolwire install -h)\n"
    assert not (tmp_path / "home" / ".cursor").exists()


def test_the_file_is_imported_with_the_entrys_environment(tmp_path: Path) -> None:
    needy = tmp_path / "needy.py"
    needy.write_text("import os\nfrom toolwire import Server\nserver = Server(os.environ['NEEDY_NAME'])\n")
    assert toolwire("install", "cursor", str(needy), **home_of(tmp_path)).returncode == 1
    done = toolwire("install", "cursor", str(needy), "--env", "NEEDY_NAME=n", **home_of(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "added 'needy'" in done.stdout


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["install", "notepad", SEED], "unknown client 'notepad'"),
        (["install", "cursor", "missing.py"], "no such server file: missing.py"),
        (
            ["install", "cursor"],
            "install needs a FILE[:OBJECT], or a toolwire openapi command line after -- (see toolwire install -h)",
        ),
        (["install", "cursor", SEED, "--env", "NOEQUALS"], "argument --env: expected KEY=VALUE"),
    ],
)
def test_mistakes_are_one_line_and_status_2(words: list[str], said: str, tmp_path: Path) -> None:
    done = toolwire(*words, **home_of(tmp_path))
    assert done.returncode == 2 and said in done.stderr


def test_each_system_has_its_own_place_for_claude_desktop(tmp_path: Path) -> None:
    mac = target("claude-desktop", "darwin", home=tmp_path)
    assert mac.path == tmp_path / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    os.environ["APPDATA"] = str(tmp_path / "Roaming")
    try:
        assert target("claude-desktop", "win32", home=tmp_path).path.parent == tmp_path / "Roaming" / "Claude"
    finally:
        del os.environ["APPDATA"]
