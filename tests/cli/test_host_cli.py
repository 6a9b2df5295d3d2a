"""``toolwire ask`` and ``toolwire chat`` as real processes, against the scripted model server:
ask's answers for scripts, and the chat screen driven in tmux (send-keys, capture-pane)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

from tests.support.clirun import environment, failed, toolwire
from tests.support.model_server import ModelServer, Reply, ToolCall

ROOT = Path(__file__).resolve().parents[2]
HOSTED = str(ROOT / "tests" / "servers" / "host_server.py")
KEYS = ("DEEPSEEK_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")


@pytest.fixture
def model() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


def ask(model: ModelServer, *args: str) -> subprocess.CompletedProcess[str]:
    return toolwire("ask", f"h={HOSTED}", *args, "--base-url", model.openai_url, "--model", "m")


def tool_results(model: ModelServer) -> list[str]:
    return [message["content"] for message in model.requests[-1]["messages"] if message["role"] == "tool"]


# -- ask -------------------------------------------------------------------------------------


def test_ask_refuses_a_call_once_on_stderr_with_the_flag_and_exits_3(model: ModelServer) -> None:
    calls = [ToolCall("remove", {"path": "a"}, id="c1"), ToolCall("remove", {"path": "b"}, id="c2")]
    model.script(Reply(tool_calls=calls), Reply(text="I was not allowed to."))
    done = ask(model, "remove a and b")
    assert (done.returncode, done.stdout) == (3, "I was not allowed to.\n"), done.stderr
    said = [line for line in done.stderr.splitlines() if line.startswith("toolwire: refused")]
    assert said == ["toolwire: refused h/remove (the server 'h' is not trusted): --allow 'h/remove' or --yes allows it"]
    results = tool_results(model)
    assert len(results) == 2 and all("The call was refused: nobody can be asked" in result for result in results)
    assert "user" not in results[0]


def test_ask_names_trust_for_a_read_only_tool_of_an_untrusted_server(model: ModelServer) -> None:
    model.script(Reply(tool_calls=[ToolCall("fail", {"reason": "x"})]), Reply(text="No."))
    done = ask(model, "fail", "--json")
    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "toolwire: refused h/fail (the server 'h' is not trusted: its read-only hint is not taken on trust):"
        " --trust h or --allow 'h/fail' allows it"
    )
    [decided] = [event for event in map(orjson.loads, done.stdout.splitlines()) if event["kind"] == "tool_decided"]
    assert (decided["decision"], decided["by"]) == ("refuse", "host")


def test_ask_yes_json_says_the_flag_allowed_the_call_not_the_user(model: ModelServer) -> None:
    model.script(Reply(tool_calls=[ToolCall("remove", {"path": "notes.txt"})]), Reply(text="Removed."))
    done = ask(model, "remove notes.txt", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    [decided] = [event for event in map(orjson.loads, done.stdout.splitlines()) if event["kind"] == "tool_decided"]
    assert (decided["decision"], decided["by"], decided["reason"]) == ("allow", "flag", "allowed by --yes")


def test_ask_runs_it_with_yes_or_a_matching_allow(model: ModelServer) -> None:
    for flags in (["--yes"], ["--allow", "h/remove"], ["--allow", "rem*"]):
        model.script(Reply(tool_calls=[ToolCall("remove", {"path": "notes.txt"})]), Reply(text="Removed."))
        done = ask(model, "remove notes.txt", *flags)
        assert (done.returncode, done.stdout) == (0, "Removed.\n"), (flags, done.stderr)
        assert tool_results(model) == ["deleted notes.txt"]


def test_ask_json_prints_every_event(model: ModelServer) -> None:
    model.script(Reply(tool_calls=[ToolCall("fail", {"reason": "no disk"})]), Reply(text="It failed."))
    done = ask(model, "try", "--json", "--trust", "h")
    assert done.returncode == 0, done.stderr
    events = [orjson.loads(line) for line in done.stdout.splitlines()]
    kinds = [event["kind"] for event in events]
    assert kinds[0] == "tools_changed" and kinds[-1] == "done"
    assert [kind for kind in kinds if kind.startswith("tool")] == [
        "tools_changed",
        "tool_call",
        "tool_decided",
        "tool_result",
    ]
    result = next(event for event in events if event["kind"] == "tool_result")
    assert (result["is_error"], result["summary"]) == (True, "it failed: no disk")
    assert events[-1]["reason"] == "answered" and events[-1]["text"] == "It failed."


def test_ask_reads_servers_from_a_desktop_config(model: ModelServer, tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": ["-m", "toolwire", "run", HOSTED], "trusted": True}
    config.write_bytes(orjson.dumps({"mcpServers": {"notes": server, "off": {"command": "nowhere", "disabled": True}}}))
    model.script(Reply(tool_calls=[ToolCall("fail", {"reason": "as configured"})]), Reply(text="Configured."))
    done = toolwire("ask", "--config", str(config), "go", "--base-url", model.openai_url, "--model", "m")
    assert (done.returncode, done.stdout) == (0, "Configured.\n"), done.stderr
    assert "runs without asking" in done.stderr and "✗ fail" in done.stderr


def test_ask_exits_1_when_the_model_api_fails(model: ModelServer) -> None:
    model.script(Reply(status=401, error="invalid key"))
    done = ask(model, "hello")
    assert done.returncode == 1 and "the model API answered HTTP 401: invalid key" in done.stderr


def test_ask_without_a_question_says_the_question_is_missing() -> None:
    for words in ([HOSTED], [f"h={HOSTED}"], ["http://127.0.0.1:1/mcp"], []):
        done = toolwire("ask", *words, DEEPSEEK_API_KEY="x")
        assert failed(done, 2) == (
            'toolwire: the question is needed, after the servers: toolwire ask TARGET... "question"'
            " (see toolwire ask -h)"
        )


def test_an_unreachable_model_is_one_toolwire_line() -> None:
    done = toolwire("ask", HOSTED, "hello", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--api-key", "x")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("toolwire: cannot reach http://127.0.0.1:1/v1"), done.stderr


def test_a_missing_key_is_one_line_and_exit_2() -> None:
    done = toolwire("ask", HOSTED, "hello")
    assert failed(done, 2) == (
        "toolwire: no API key: set DEEPSEEK_API_KEY, OPENAI_API_KEY or ANTHROPIC_API_KEY (or pass --api-key)"
        " (see toolwire ask -h)"
    )


# -- chat in tmux ----------------------------------------------------------------------------


PROMPT = "> "  # capture-pane drops the space at the end of the line


class Tmux:
    """A tmux server of its own (its own socket) running one command in a window 120 (or
    ``width``) columns wide and 40 lines high."""

    def __init__(self, tmp: Path, command: list[str], env: dict[str, str], width: int = 120) -> None:
        self.socket = str(tmp / f"tmux-{time.monotonic_ns()}.sock")
        exports = [f"{key}={value}" for key, value in env.items()]
        size = ["-u", "COLUMNS", "-u", "LINES"]  # the window's size, not the test runner's
        self.run("new-session", "-d", "-x", str(width), "-y", "40", "env", *size, *exports, *command)

    def run(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-S", self.socket, *args], capture_output=True, text=True, timeout=10)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def type(self, text: str) -> None:
        self.run("send-keys", "-l", text)
        self.run("send-keys", "Enter")

    def screen(self) -> str:
        return self.run("capture-pane", "-p")

    def wait_for(self, text: str, timeout: float = 15) -> str:
        """The screen once ``text`` is on it (``PROMPT``: once the last line is the prompt)."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            lines = screen.rstrip("\n").splitlines()
            if (text == PROMPT and lines and lines[-1] == ">") or (text != PROMPT and text in screen):
                return screen
            assert time.monotonic() < deadline, f"{text!r} never appeared on the screen:\n{screen}"
            time.sleep(0.05)

    def wait_for_exit(self, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while subprocess.run(["tmux", "-S", self.socket, "has-session"], capture_output=True).returncode == 0:
            assert time.monotonic() < deadline, f"the command did not exit:\n{self.screen()}"
            time.sleep(0.05)

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, timeout=10)


def chat_command(model: ModelServer, *options: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "toolwire",
        "chat",
        f"h={HOSTED}",
        "--base-url",
        model.openai_url,
        "--model",
        "m",
        *options,
    ]


def chat_env(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "XDG_STATE_HOME": str(home / "state"), "TERM": "xterm-256color"}


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Callable[..., Tmux]]:
    assert shutil.which("tmux"), "these tests need tmux (scripts/setup.sh installs it with apt-get when run as root)"
    sessions: list[Tmux] = []

    def start(command: list[str], env: dict[str, str], width: int = 120) -> Tmux:
        session = Tmux(tmp_path, command, env, width)
        sessions.append(session)
        return session

    yield start
    for session in sessions:
        session.close()


def test_chat_asks_before_a_call_and_shows_its_progress(
    model: ModelServer, tmux: Callable[..., Tmux], tmp_path: Path
) -> None:
    model.script(
        Reply(tool_calls=[ToolCall("slow", {"seconds": 3})]),
        Reply(text="Done waiting."),
        Reply(tool_calls=[ToolCall("remove", {"path": "notes.txt"})]),
        Reply(text="Kept it."),
    )
    chat = tmux(chat_command(model), chat_env(tmp_path))
    screen = chat.wait_for(PROMPT)
    assert "Tools the model can use: 11" in screen and "remove" in screen

    chat.type("wait three seconds")
    screen = chat.wait_for("allow? [y]es once")
    assert "⚙ slow" in screen and "? Allow h/slow" in screen and "seconds: 3" in screen
    chat.type("y")
    screen = chat.wait_for("%")  # the progress bar, while the call runs
    [bar] = [line for line in screen.splitlines() if line.endswith("%")]
    assert re.search(r"slow step \d+ .*━.* \d+%$", bar), bar
    screen = chat.wait_for("Done waiting.")
    assert "✓ slow" in screen

    chat.type("remove my notes")
    chat.wait_for("? Allow h/remove")
    chat.type("n")
    chat.wait_for("why (sent to the model")
    chat.type("I still need them")
    screen = chat.wait_for("Kept it.")
    assert "✗ not run: I still need them" in screen and "✗ remove" not in screen  # said once
    [refused] = [message["content"] for message in model.requests[-1]["messages"] if message["role"] == "tool"][-1:]
    assert refused.endswith("The user refused this call: I still need them")

    chat.type("exit")
    chat.wait_for_exit()


def test_chat_remembers_always_saves_and_stops_a_turn_on_ctrl_c(
    model: ModelServer, tmux: Callable[..., Tmux], tmp_path: Path
) -> None:
    model.script(
        Reply(tool_calls=[ToolCall("remove", {"path": "a"})]),
        Reply(text="Removed a."),
        Reply(tool_calls=[ToolCall("remove", {"path": "b"})]),
        Reply(text="Removed b."),
        Reply(tool_calls=[ToolCall("slow", {"seconds": 30})]),
    )
    chat = tmux(chat_command(model, "--trust", "h"), chat_env(tmp_path))
    chat.wait_for(PROMPT)
    chat.type("remove a")
    chat.wait_for("allow? [y]es once")
    chat.type("a")
    chat.wait_for("Removed a.")
    chat.type("remove b")
    screen = chat.wait_for("Removed b.")
    assert screen.count("? Allow h/remove") == 1 and "✓ remove" in screen
    chat.type("/allowed")
    chat.wait_for("h/remove")
    chat.type("wait")
    chat.wait_for("%")
    chat.run("send-keys", "C-c")
    chat.wait_for("(cancelled)")
    chat.type("/usage")
    chat.wait_for("tokens in")
    chat.type(f"/save {tmp_path / 'chat.json'}")
    chat.wait_for("saved ")
    saved = orjson.loads((tmp_path / "chat.json").read_bytes())
    assert saved["approvals"] and saved["messages"][-1]["content"][0]["text"].startswith("The call did not finish")
    chat.run("send-keys", "C-d")
    chat.wait_for_exit()


WIDE = str(ROOT / "tests" / "servers" / "wide.py")
ORDER = (
    "Places an order for the items. Every item is checked against the stock first, then the order is confirmed"
    " by email and shipped within two days to the address given."
)


@pytest.mark.parametrize("width", [80, 120])
def test_chat_aligns_the_tools_cuts_descriptions_at_words_and_says_what_a_call_does(
    model: ModelServer, tmux: Callable[..., Tmux], tmp_path: Path, width: int
) -> None:
    model.script(Reply(tool_calls=[ToolCall("remove", {"path": "notes.txt"})]), Reply(text="Kept."))
    chat = tmux(chat_command(model, f"w={WIDE}"), chat_env(tmp_path), width)
    screen = chat.wait_for(PROMPT)
    lines = screen.splitlines()
    listed = lines[
        lines.index("Tools the model can use: 14") + 1 : lines.index("Ask anything; /help lists the commands.")
    ]
    rows = [line for line in listed if re.match(r"  \S", line)]
    name_width = max(len(row.split()[0]) for row in rows)
    assert len(rows) == 14 and all(row[2 + name_width : 4 + name_width] == "  " for row in rows), screen
    assert all(row[4 + name_width] in "hw" for row in rows), screen  # the servers, in one column
    start = next(index for index, line in enumerate(lines) if line.startswith("  place_order "))
    shown = " ".join(part.strip() for part in lines[start + 1 : start + 3]) if width == 80 else None
    if shown is None:
        column = lines[start].index("Places")
        shown = " ".join(line[column:].strip() for line in lines[start : start + 2])
    assert shown.endswith("…") and ORDER.startswith(shown[:-1]) and ORDER[len(shown) - 1] == " ", shown

    chat.type("remove my notes")
    screen = chat.wait_for("allow? [y]es once")
    said = screen[screen.index("    what it does") : screen.index('    path: "notes.txt"')].splitlines()
    assert all(len(line) < width and line.startswith("    ") for line in said), said  # wrapped at words
    assert " ".join(line.strip() for line in said) == (
        "what it does, as the server says (untrusted): destructive, not idempotent (default), open-world (default)"
    )
    chat.type("n")
    chat.wait_for("why (sent to the model")
    chat.type("")
    chat.wait_for("Kept.")
    chat.type(f"/save {tmp_path / 'chat.json'}")
    chat.wait_for("saved ")
    chat.type("exit")
    chat.wait_for_exit()
    again = tmux(chat_command(model, f"w={WIDE}", "--load", str(tmp_path / "chat.json")), chat_env(tmp_path), width)
    assert f"loaded 4 messages from {tmp_path / 'chat.json'}" in again.wait_for(PROMPT).replace("\n", "")
    again.type("exit")
    again.wait_for_exit()


# -- the docs' first example -----------------------------------------------------------------


def test_the_seed_example_of_the_host_page_runs(model: ModelServer) -> None:
    page = (ROOT / "docs" / "host.md").read_text()
    code = page.split("```python\n", 1)[1].split("```", 1)[0]
    assert 'base_url="https://api.deepseek.com"' in code
    code = code.replace("https://api.deepseek.com", model.openai_url)
    model.script(
        Reply(tool_calls=[ToolCall("calculator", {"operation": "add", "a": 4, "b": 4})]), Reply(text="4 加 4 等于 8。")
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**environment(), "DEEPSEEK_API_KEY": "test"},
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "\n[calculator: 8]\n4 加 4 等于 8。\n"
    assert model.requests[0]["messages"][0]["content"].startswith("你是一个智能助手")


@pytest.mark.parametrize("page", ["README.md", "docs/host.md", "docs/cli.md", "docs/zh/tutorial.md"])
def test_the_documented_ask_command_gives_the_documented_answer(model: ModelServer, page: str) -> None:
    [line] = [line for line in (ROOT / page).read_text().splitlines() if "toolwire ask seed=" in line]
    words = shlex.split(line[line.index("toolwire ask") :].split("`")[0].split("#")[0])
    assert words[:2] == ["toolwire", "ask"] and "4 加 4 等于多少" in words
    model.script(
        Reply(tool_calls=[ToolCall("calculator", {"operation": "add", "a": 4, "b": 4})]), Reply(text="4 加 4 等于 8。")
    )
    done = toolwire(*words[1:], "--base-url", model.openai_url, "--model", "m", cwd=ROOT)
    assert (done.returncode, done.stdout) == (0, "4 加 4 等于 8。\n"), done.stderr
    assert tool_results(model) == ["8"] and "refused" not in done.stderr


# -- server names in options -----------------------------------------------------------------


def test_an_unknown_server_in_trust_or_a_rule_is_an_error_naming_the_servers(model: ModelServer) -> None:
    seed = str(ROOT / "examples" / "seed_server.py")
    url = ["--base-url", model.openai_url, "--model", "m"]
    trust, allow, deny = (
        toolwire("ask", seed, "go", *url, *flags)
        for flags in (["--trust", "seed"], ["--allow", "seed/calculator"], ["--deny", "sed*/*"])
    )
    known = "the servers are: seed_server (a target is named after its file, or NAME=TARGET) (see toolwire ask -h)"
    assert failed(trust, 2) == f"toolwire: no server is called 'seed' (to trust); {known}"
    assert failed(allow, 2) == f"toolwire: no server is called 'seed' (in the rule allow 'seed/calculator'); {known}"
    assert failed(deny, 2) == f"toolwire: no server is called 'sed*' (in the rule deny 'sed*/*'); {known}"
    model.script(Reply(tool_calls=[ToolCall("calculator", {"operation": "add", "a": 1, "b": 2})]), Reply(text="3"))
    named = toolwire("ask", f"seed={seed}", "go", *url, "--trust", "seed", "--allow", "seed/calculator")
    assert (named.returncode, named.stdout) == (0, "3\n"), named.stderr
    assert "allowed by the rule 'seed/calculator'" in named.stderr
