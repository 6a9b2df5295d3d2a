"""``toolwire tools`` and ``toolwire call``, run as real processes against real servers."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.clirun import TOOLWIRE, absent, environment, failed, finish, start, toolwire, toolwire_all
from tests.support.rawclient import RawClient, toolwire_command
from toolwire import Server
from toolwire.build import build_name
from toolwire.extras import EXTRAS

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "tests" / "servers"
BASIC = str(SERVERS / "basic.py")
CLI_SERVER = str(SERVERS / "cli_server.py")
SEED = str(ROOT / "examples" / "seed_server.py")
MISBEHAVING = [sys.executable, str(SERVERS / "misbehaving.py")]
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00" * 8
#: A legacy server listing a tool without a name.
NAMELESS = (
    "import json, sys\n"
    "for line in sys.stdin:\n"
    "    m = json.loads(line)\n"
    "    if 'id' in m:\n"
    "        r = {'tools': [{'description': 'x'}]} if m['method'] == 'tools/list' else {'protocolVersion': '2025-06-18'}\n"
    "        print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}), flush=True)\n"
)


# -- tools ----------------------------------------------------------------------------------


def test_tools_table() -> None:
    basic, seed = toolwire_all(["tools", BASIC], ["tools", SEED])
    assert basic.returncode == 0 and basic.stderr == ""
    assert "stdio-test 1.2.3: 6 tools (protocol 2026-07-28)" in basic.stdout
    for name in ("echo", "analyze", "countdown", "sleepy", "noisy", "broken", "text*: string", "n*: integer"):
        assert name in basic.stdout
    assert seed.returncode == 0
    for shown in (
        "get_weather",
        "Weather Information Provider",  # the title under the name
        "read-only",
        "destructive",
        "idempotent",
        "maxResults: integer = 20",
        'fileType: ".ts" | ".py" | ".js" | ".md" | ".rs" | ".go" | null',
        'operations*: array["sum" | "average" | "count"]',
        "Get current weather information for a location.",
    ):
        assert shown in seed.stdout


def test_tools_json_is_the_definitions_as_sent() -> None:
    done = toolwire("tools", SEED, "--json", "--protocol", "2025-11-25")
    assert done.returncode == 0 and done.stderr == ""
    with RawClient(toolwire_command(SEED)) as raw:
        raw.initialize("2025-11-25")
        assert json.loads(done.stdout) == raw.request("tools/list")["result"]["tools"]


@pytest.mark.parametrize("version", ["2025-06-18", "2026-07-28"])
def test_protocol_version_chosen(version: str) -> None:
    listed, called = toolwire_all(
        ["tools", BASIC, "--protocol", version], ["call", BASIC, "analyze", "text=a b", "--protocol", version]
    )
    assert f"(protocol {version})" in listed.stdout
    assert (called.returncode, json.loads(called.stdout)) == (0, {"characters": 3, "words": 2})


def test_object_in_file_and_command_after_double_dash() -> None:
    other, command, legacy = toolwire_all(
        ["tools", f"{BASIC}:other"],
        ["tools", "--", *toolwire_command(BASIC)],
        ["call", "measure", "x=2", "--", *MISBEHAVING, "legacy"],
    )
    assert (other.returncode, other.stdout.strip()) == (0, "another 0.1.0: no tools (protocol 2026-07-28)")
    assert command.returncode == 0 and "stdio-test" in command.stdout and "countdown" in command.stdout
    assert (legacy.returncode, legacy.stdout) == (0, 'ok\n{\n  "size": 1\n}\n')


def test_env_reaches_the_server_process(tmp_path: Path) -> None:
    (tmp_path / "note.txt").write_text("hello from the workspace\n")
    done = toolwire(
        "call",
        "get_file_content",
        "path=note.txt",
        "--env",
        f"TOOLWIRE_EXAMPLES_ROOT={tmp_path}",
        "--",
        *toolwire_command(SEED),
    )
    assert (done.returncode, done.stdout) == (0, "hello from the workspace\n"), done.stderr


# -- call -----------------------------------------------------------------------------------


def test_key_value_arguments_take_the_schema_types() -> None:
    by_pairs, by_json = toolwire_all(
        ["call", CLI_SERVER, "kinds", "count=3", "flag=true", "items=[1, 2]", "name=123", "note=null", "extra=x y"],
        [
            "call",
            CLI_SERVER,
            "kinds",
            "--input",
            '{"count": 3, "flag": true, "items": [1, 2], "name": "123", "extra": 5}',
        ],
    )
    assert by_pairs.returncode == 0, by_pairs.stderr
    assert json.loads(by_pairs.stdout) == {
        "count": ["int", 3],
        "flag": ["bool", True],
        "items": ["list", [1, 2]],
        "name": ["str", "123"],  # a string parameter keeps its value as it is
        "note": ["NoneType", None],  # string | null: JSON null is null
        "extra": ["str", "x y"],  # no type: not JSON, so a string
    }
    assert by_json.returncode == 0, by_json.stderr
    assert json.loads(by_json.stdout)["extra"] == ["int", 5]
    assert json.loads(by_json.stdout)["note"] == ["str", "none"]


def test_text_and_structured_content() -> None:
    echo, analyze, search = toolwire_all(
        ["call", BASIC, "echo", "text=héllo = ✓"],
        ["call", BASIC, "analyze", "text=a b c"],
        ["call", SEED, "search_codebase", "pattern=def total_value", "fileType=.py"],
    )
    assert (echo.returncode, echo.stdout, echo.stderr) == (0, "héllo = ✓\n", "")
    # the text block that only repeats the structured content is left out
    assert json.loads(analyze.stdout) == {"characters": 5, "words": 3}
    summary, structured = search.stdout.split("\n", 1)
    assert summary == "src/inventory.py:21: def total_value(self) -> float:"
    assert json.loads(structured)["truncated"] is False


@pytest.mark.parametrize("out", [None, "saved/here"])
def test_images_and_audio_saved_to_files(tmp_path: Path, out: str | None) -> None:
    done = toolwire("call", CLI_SERVER, "media", *(["--out", out] if out else []), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    folder = tmp_path / out if out else tmp_path
    assert (folder / "media-1.png").read_bytes() == PNG
    assert (folder / "media-2.wav").read_bytes() == WAV
    prefix = f"{out}/" if out else ""
    assert done.stdout.splitlines() == [
        "a picture and a sound",
        f"saved {prefix}media-1.png (image/png, {len(PNG)} bytes)",
        f"saved {prefix}media-2.wav (audio/wav, {len(WAV)} bytes)",
    ]


def test_resource_links_and_embedded_resources(tmp_path: Path) -> None:
    done = toolwire("call", CLI_SERVER, "links", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "resource link: file:///reports/q3.pdf (Q3 report)",
        "resource: memo://today (text/plain)",
        "remember the milk",
        "resource: blob://bytes (application/octet-stream)",
        "saved bytes.bin (application/octet-stream, 3 bytes)",  # binary contents are saved, not dumped
    ]
    assert (tmp_path / "bytes.bin").stat().st_size == 3


def test_control_characters_reach_a_terminal_defused() -> None:
    piped = start("call", CLI_SERVER, "escape")
    leader, follower = pty.openpty()
    try:
        on_terminal = subprocess.run(
            [*TOOLWIRE, "call", CLI_SERVER, "escape"],
            stdout=follower,
            stderr=subprocess.PIPE,
            env=environment(),
            timeout=30,
        )
        shown = os.read(leader, 4096).decode()
    finally:
        os.close(leader)
        os.close(follower)
    assert on_terminal.returncode == 0, on_terminal.stderr
    assert shown.replace("\r\n", "\n") == "\ufffd]0;owned\ufffdplain\ttext\n"
    assert finish(piped).stdout == "\x1b]0;owned\x07plain\ttext\n"  # piped: exactly as sent


def test_tool_errors_and_unknown_tools_exit_1() -> None:
    broken, unknown = toolwire_all(["call", BASIC, "broken"], ["call", BASIC, "ecko", "text=hi"])
    assert failed(broken, 1) == "toolwire: tool 'broken' failed: the external API is down"
    assert failed(unknown, 1) == "toolwire: the server has no tool named 'ecko': did you mean 'echo'?"


def test_server_failures_exit_1() -> None:
    with socket.socket() as closed:  # bound but not listening: connections to it are refused
        closed.bind(("127.0.0.1", 0))
        url_target = f"http://127.0.0.1:{closed.getsockname()[1]}/mcp"
        crash, mismatch, modern_only, timeout, url, missing, nameless = toolwire_all(
            ["call", "measure", "--", *MISBEHAVING, "crash"],
            ["call", "measure", "--", *MISBEHAVING, "bad-output"],
            ["tools", "--protocol", "2026-07-28", "--", *MISBEHAVING, "legacy"],
            ["call", BASIC, "sleepy", "seconds=30", "--timeout", "0.3"],
            ["tools", url_target],
            ["tools", "--", "no-such-command-anywhere"],
            ["tools", "--protocol", "2025-06-18", "--", sys.executable, "-c", NAMELESS],
        )
    assert failed(crash, 1) == "toolwire: the server process exited with code 3; its stderr ends with:"
    assert crash.stderr.splitlines()[1:] == ["  fatal: the database is gone"]
    assert "breaks its outputSchema" in failed(mismatch, 1)
    assert failed(modern_only, 1) == "toolwire: the server does not speak 2026-07-28"
    assert failed(timeout, 1) == "toolwire: tool 'sleepy' did not answer within 0.3 s"
    assert failed(url, 1).startswith(f"toolwire: cannot reach {url_target}: ")
    assert failed(missing, 1).startswith("toolwire: cannot start the server 'no-such-command-anywhere'")
    assert failed(nameless, 1).startswith("toolwire: ")  # no traceback, whatever breaks


USAGE_ERRORS = [
    (["call", BASIC, "echo", "text"], "expected KEY=VALUE, not 'text'"),
    (["call", BASIC, "echo", "text=a", "text=b"], "text is given twice"),
    (
        ["call", BASIC, "echo", "text=a", "--input", "{}"],
        "give the arguments as KEY=VALUE words or as --input, not both",
    ),
    (["call", BASIC, "echo", "--input", "{text"], "--input is not valid JSON"),
    (["call", BASIC, "echo", "--input", "[1]"], "--input must be a JSON object, and '[1]' is a JSON array"),
    (["call", BASIC, "countdown", "n=three"], "n=three: n is of type integer, so its value must be JSON"),
    (["call", BASIC], "the name of the tool to call is needed"),
    (["call", "echo", "--"], "a command line is needed after --"),
    (["tools"], "a TARGET is needed"),
    (["tools", "nowhere.py"], "no such file: nowhere.py"),
    (["tools", "npx some-server"], "'npx some-server' is not a TARGET"),
    (["tools", BASIC, "--protocol", "1999-01-01"], "argument --protocol: '1999-01-01' is not one of"),
    (["tools", BASIC, "--timeout", "soon"], "argument --timeout: expected a positive number of seconds"),
    (["tools", "https://example.com/mcp", "--env", "A=1"], "--env applies to servers started as processes"),
]


def test_usage_errors_exit_2() -> None:
    for (args, message), done in zip(USAGE_ERRORS, toolwire_all(*(args for args, _ in USAGE_ERRORS)), strict=True):
        assert failed(done, 2).startswith(f"toolwire: {message}"), args
        assert failed(done, 2).endswith(f" (see toolwire {args[0]} -h)") and done.stderr.count("\n") == 1, args


def test_usage_errors_say_what_to_do_and_name_the_help() -> None:
    cases = {
        ("call", BASIC, "echo", "Paris"): "expected KEY=VALUE, not 'Paris': put the name of its parameter before it"
        " (NAME=Paris) (see toolwire call -h)",
        ("call", BASIC): "the name of the tool to call is needed after TARGET: toolwire tools TARGET lists them"
        " (see toolwire call -h)",
        ("read", "README.md"): "'README.md' is not a TARGET: give FILE.py, FILE.py:OBJECT, an http(s) URL, or a"
        " command line after -- (see toolwire read -h)",
        ("tols", BASIC): "unknown command 'tols': did you mean 'tools'? (see toolwire -h)",
        (
            "tools",
            BASIC,
            "--jsno",
        ): "unknown option for tools: '--jsno': did you mean '--json'? (see toolwire tools -h)",
        ("call", BASIC, "echo", "--tiemout=3"): "unknown option for call: '--tiemout=3': did you mean '--timeout'?"
        " (see toolwire call -h)",
        ("tools", BASIC, "--protocol", "2025-11-26"): "argument --protocol: '2025-11-26' is not one of 2024-11-05,"
        " 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28: did you mean '2025-11-25'? (see toolwire tools -h)",
        ("auth", "lgoin"): "argument ACTION: 'lgoin' is not one of login, logout, status: did you mean 'login'?"
        " (see toolwire auth -h)",
        ("install", "cursr", BASIC): "unknown client 'cursr': did you mean 'cursor'? (see toolwire install -h)",
        ("search", "--limt", "3", "q"): "unknown option for search: '--limt': did you mean '--limit'?"
        " (see toolwire search -h)",
    }
    for (words, said), done in zip(cases.items(), toolwire_all(*(list(words) for words in cases)), strict=True):
        assert failed(done, 2) == f"toolwire: {said}" and done.stderr.count("\n") == 1, words


def test_call_takes_its_arguments_with_input_and_prints_json_with_json() -> None:
    given, old, printed = toolwire_all(
        ["call", BASIC, "echo", "--input", '{"text": "hi"}'],
        ["call", BASIC, "--json", '{"text": "hi"}', "echo"],
        ["call", BASIC, "echo", "text=hi", "--json"],
    )
    assert (given.returncode, given.stdout, given.stderr) == (0, "hi\n", "")
    assert (old.returncode, old.stdout) == (0, "hi\n")  # the old form still works, with one line saying so
    assert old.stderr == (
        "toolwire: warning: call --json ARGS is now --input ARGS (--json alone prints the result as JSON);"
        " the old form will go in a later version\n"
    )
    assert printed.returncode == 0 and printed.stderr == ""
    assert json.loads(printed.stdout)["content"] == [{"type": "text", "text": "hi"}]


# -- progress, interruption, help -------------------------------------------------------------


def test_progress_bar_or_spinner_on_a_terminal_only() -> None:
    bar, spinner, piped = [
        finish(process)
        for process in [
            start("call", BASIC, "countdown", "n=3", TTY_COMPATIBLE="1"),
            start("call", CLI_SERVER, "steps", "n=3", TTY_COMPATIBLE="1"),
            start("call", BASIC, "countdown", "n=3"),
        ]
    ]
    for done, output in ((bar, "liftoff\n"), (spinner, "walked\n"), (piped, "liftoff\n")):
        assert (done.returncode, done.stdout) == (0, output), done.stderr
    assert "100%" in bar.stderr and "0 left" in bar.stderr  # the total is known: a bar and a percentage
    assert "step 3" in spinner.stderr and "%" not in spinner.stderr  # no total: a spinner and the message
    assert piped.stderr == ""  # stderr is no terminal: nothing drawn


def test_ctrl_c_exits_130_quietly() -> None:
    process = start("call", CLI_SERVER, "stall", TTY_COMPATIBLE="1")
    assert process.stderr is not None
    ready, _, _ = select.select([process.stderr], [], [], 20)  # the progress display: the call is running
    assert ready, "no progress was drawn"
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    done = finish(process)
    assert done.returncode == 130 and done.stdout == ""
    assert "Traceback" not in done.stderr and "toolwire:" not in done.stderr
    assert time.monotonic() - started < 10


def test_help() -> None:
    overview, call = toolwire_all(["--help"], ["call", "-h"])
    assert (
        overview.returncode == 0 and "toolwire tools TARGET" in overview.stdout and "toolwire call" in overview.stdout
    )
    assert call.returncode == 0 and "toolwire call TOOL [KEY=VALUE ...]" in call.stdout and "--out DIR" in call.stdout


def test_help_for_each_command_the_version_and_unknown_words() -> None:
    run, help_run, help_call, version, unknown, nothing, bare_run = toolwire_all(
        ["run", "-h"], ["help", "run"], ["help", "call"], ["--version"], ["frobnicate"], [], ["run"]
    )
    for shown in (run, help_run):
        assert shown.returncode == 0 and shown.stdout.startswith("usage: toolwire run FILE[:OBJECT]")
        assert "--issuer" in shown.stdout and "toolwire tools" not in shown.stdout
    assert help_call.returncode == 0 and help_call.stdout.startswith("usage: toolwire call TARGET TOOL")
    assert (version.returncode, version.stdout) == (0, f"toolwire 0.1.0 ({build_name()})\n")
    assert failed(unknown, 2).startswith("toolwire: unknown command 'frobnicate': the commands are run, tools, call")
    assert unknown.stderr.count("\n") == 1  # one line: no usage text after it to hide the reason
    assert failed(nothing, 2) == "toolwire: a command is needed (toolwire -h lists them)"
    assert failed(bare_run, 2).startswith("toolwire: run needs a FILE")


#: The environment of a plain ``pip install toolwire``: every extra's modules missing.
NO_EXTRAS = absent(*sorted({module for modules in EXTRAS.values() for module in modules}))


@pytest.mark.parametrize("environ", [{}, NO_EXTRAS], ids=["extras", "no_extras"])
def test_every_command_answers_dash_h_and_dash_dash_help(environ: dict[str, str]) -> None:
    overview = toolwire("-h", **environ).stdout.split("\n\n", 1)[0]  # the usage lines: one or more per command
    lines = [line.removeprefix("usage:").split() for line in overview.splitlines()]
    names = dict.fromkeys(words[1] for words in lines if words[:1] == ["toolwire"])
    assert len(names) == 20, names
    commands = [[name] for name in names] + [["auth", action] for action in ("login", "logout", "status")]
    invocations = [[*command, flag] for command in commands for flag in ("-h", "--help")]
    invocations += [["help", *command] for command in commands if len(command) == 1]
    runs = [finish(process) for process in [start(*words, **environ) for words in invocations]]
    unhelped = {
        " ".join(words): done.stderr.strip()
        for words, done in zip(invocations, runs, strict=True)
        if done.returncode or done.stderr or not done.stdout.startswith(f"usage: toolwire {shown(words)}")
    }
    assert not unhelped, unhelped
    assert all("options:" in done.stdout for done in runs)  # each option described


def shown(words: list[str]) -> str:
    """The command whose help ``toolwire WORDS...`` shows (``help X`` and ``X -h`` are the same)."""
    return " ".join(words[1:] if words[0] == "help" else words[:-1])


def test_mistakes_in_every_command_are_one_line_naming_its_help() -> None:
    commands = ["run", "tools", "chat", "auth", "install", "proxy", "dev"]
    words = {"auth": ["status"], "install": ["cursor", BASIC]}
    runs = toolwire_all(*([command, *words.get(command, [BASIC]), "--frobnicate"] for command in commands))
    for command, done in zip(commands, runs, strict=True):
        said = f"toolwire: unknown option for {command}: '--frobnicate' (see toolwire {command} -h)"
        assert failed(done, 2) == said and done.stderr.count("\n") == 1, done.stderr


#: A legacy handshake, as the first lines a client sends a stdio server.
HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]


def test_run_imports_nothing_of_the_terminal_commands() -> None:
    messages = [
        *HANDSHAKE,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "hi"}}},
    ]
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "toolwire", "run", BASIC],
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0 and '"text":"hi"' in done.stdout
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "toolwire.server.server" in imported
    unwanted = {"rich", "toolwire.terminal", "toolwire.client"}  # argparse parses its options: about 1.5 ms
    assert not {name for name in imported if name in unwanted or name.split(".")[0] == "rich"}


def test_a_server_file_that_fails_to_import_says_why_in_one_line_and_its_own_frames(tmp_path: Path) -> None:
    (tmp_path / "syntax.py").write_text("from toolwire import Server\nserver = Server('x')\ndef f(:\n")
    (tmp_path / "raises.py").write_text(
        "import toolwire\n\n\ndef boom():\n    raise RuntimeError('no database')\n\n\nboom()\n"
    )
    syntax, raises, listed = toolwire_all(
        ["run", str(tmp_path / "syntax.py")],
        ["run", str(tmp_path / "raises.py")],
        ["tools", str(tmp_path / "raises.py")],
    )
    assert (
        failed(syntax, 1)
        == f"toolwire: could not import {tmp_path / 'syntax.py'}: SyntaxError: invalid syntax (line 3)"
    )
    assert "def f(:" in syntax.stderr and "toolwire/cli/" not in syntax.stderr
    assert failed(raises, 1) == f"toolwire: could not import {tmp_path / 'raises.py'}: RuntimeError: no database"
    assert "in boom" in raises.stderr and "importlib" not in raises.stderr and "toolwire/cli/" not in raises.stderr
    assert "could not import" in listed.stderr and "Traceback" not in listed.stderr and listed.returncode == 1


def test_print_at_import_time_goes_to_stderr_not_into_the_protocol(tmp_path: Path) -> None:
    server = tmp_path / "chatty.py"
    server.write_text(
        "from toolwire import Server\nprint('hello from import')\nserver = Server('chatty')\n\n\n"
        "@server.tool\ndef echo(text: str) -> str:\n    return text\n"
    )
    listed = toolwire("tools", str(server))
    assert listed.returncode == 0 and "echo" in listed.stdout, listed.stderr


FAILING = str(Path(__file__).resolve().parents[1] / "servers" / "failing.py")


def test_failures_are_said_once_with_the_servers_reason() -> None:
    crashed, refused, huge, missing = toolwire_all(
        ["call", FAILING, "boom"],
        ["call", FAILING, "fail"],
        ["call", FAILING, "ratio", "ratio=1e400"],
        ["read", FAILING, "notes://x"],
    )
    assert (crashed.returncode, crashed.stdout) == (1, "")
    first, *server_said = crashed.stderr.splitlines()
    assert first == "toolwire: tool 'boom' failed: RuntimeError: kaput"  # not "Tool 'boom'", nor twice
    assert server_said[0] == "  the server's stderr during the call:" and server_said[-1] == "  RuntimeError: kaput"
    assert failed(refused, 1) == "toolwire: tool 'fail' failed: nope, not today"
    assert failed(huge, 2) == (
        "toolwire: ratio=1e400: the number is too large for JSON (at most about 1.8e308) (see toolwire call -h)"
    )
    assert failed(missing, 1) == "toolwire: resource not found: notes://x (there is no note called x)"


def test_a_failed_call_shows_what_the_server_printed_and_the_users_frames_of_its_traceback() -> None:
    done = toolwire("call", FAILING, "divide", "x=0")
    assert (done.returncode, done.stdout) == (1, ""), done.stderr
    lines = done.stderr.splitlines()
    assert lines[:3] == [
        "toolwire: tool 'divide' failed: ZeroDivisionError: integer division or modulo by zero",
        "  the server's stderr during the call:",
        "  dividing 10 by 0",
    ]
    frames = [line.strip() for line in lines if line.strip().startswith("File ")]
    assert [frame.rsplit(" in ", 1)[1] for frame in frames] == ["divide", "tenth"], done.stderr
    assert (
        all(FAILING in frame for frame in frames)
        and lines[-1] == "  ZeroDivisionError: integer division or modulo by zero"
    )
    crashed = toolwire("call", FAILING, "crash")
    assert (crashed.returncode, crashed.stdout) == (1, ""), crashed.stderr
    lines = crashed.stderr.splitlines()
    assert lines[:2] == ["toolwire: the server process exited with code 3; its stderr ends with:", "  about to crash"]
    assert lines[-1] == "  ZeroDivisionError: integer division or modulo by zero" and "in tenth" in lines[-4]
    quiet = toolwire("call", FAILING, "divide", "x=5")
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "2\n", "")


@pytest.mark.parametrize("runner", [[], ["--uvicorn"], ["--granian"]])
def test_http_serving_is_announced_once_bound_and_a_port_in_use_is_one_line(runner: list[str]) -> None:
    import socket
    import subprocess

    from tests.support.clirun import TOOLWIRE, environment
    from tests.support.httpserve import free_port

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = toolwire("run", BASIC, "--http", str(taken.getsockname()[1]), *runner)
        assert (
            failed(busy, 1) == f"toolwire: cannot listen on 127.0.0.1:{taken.getsockname()[1]}: Address already in use"
        )
        assert busy.stderr.count("\n") == 1
    port = free_port()
    command = [*TOOLWIRE, "run", BASIC, "--http", str(port), *runner]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=environment())
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert line == f"toolwire: serving {BASIC} at http://127.0.0.1:{port}/mcp (Ctrl-C stops it)\n"
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass  # announced only once it listens
    finally:
        process.kill()
        process.wait(10)
        if process.stderr is not None:
            process.stderr.close()


def test_http_run_v_logs_each_request_and_sigterm_stops_it_cleanly() -> None:
    import signal
    import subprocess

    import httpx

    from tests.support.clirun import TOOLWIRE, environment
    from tests.support.httpserve import free_port

    port = free_port()
    command = [*TOOLWIRE, "run", BASIC, "--http", str(port), "-v"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=environment())
    try:
        assert process.stderr is not None
        assert process.stderr.readline().startswith("toolwire: serving")
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        opening = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
        accept = {"Accept": "application/json, text/event-stream"}
        assert httpx.post(f"http://127.0.0.1:{port}/mcp", json=opening, headers=accept).status_code == 200
        assert httpx.get(f"http://127.0.0.1:{port}/elsewhere").status_code == 404
        process.send_signal(signal.SIGTERM)
        assert process.wait(10) == 0
        log = process.stderr.read()
        assert '"POST /mcp HTTP/1.1" 200' in log and '"GET /elsewhere HTTP/1.1" 404' in log, log
    finally:
        process.kill()
        process.wait(10)
        if process.stderr is not None:
            process.stderr.close()


def test_call_shows_the_servers_log_at_a_level_and_run_v_logs_each_request() -> None:
    import subprocess

    from tests.support.clirun import TOOLWIRE, environment

    shown = toolwire("call", FAILING, "chatty", "--log", "info")
    assert shown.returncode == 0 and shown.stdout == "done\n", shown.stderr
    assert "[info] working on it" in shown.stderr and "the details" not in shown.stderr
    quiet = toolwire("call", FAILING, "chatty")
    assert quiet.stderr == ""
    messages = [
        *HANDSHAKE,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "chatty", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "boom", "arguments": {}}},
    ]
    lines = "".join(json.dumps(message) + "\n" for message in messages)
    process = subprocess.Popen(
        [*TOOLWIRE, "run", FAILING, "-v"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(),
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(lines)
    process.stdin.flush()
    ids: list[int] = []
    while len(ids) < 3:  # answers, among the log notifications
        message = json.loads(process.stdout.readline())
        if "id" in message:
            ids.append(message["id"])
    assert ids == [1, 2, 3]
    _, stderr = process.communicate(timeout=30)
    assert re.search(r"tools/call chatty: ok in \d+\.\d ms", stderr), stderr
    assert re.search(r"tools/call boom: tool error in \d+\.\d ms", stderr), stderr


def test_resources_of_a_server_without_the_templates_list() -> None:
    old = str(Path(__file__).resolve().parents[1] / "servers" / "old_resources.py")
    listed = toolwire("resources", "--json", "--", sys.executable, old)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == {
        "resources": [{"uri": "memo://one", "name": "one", "mimeType": "text/plain"}],
        "resourceTemplates": [],
    }


def test_words_after_a_double_dash_are_the_server_files_own_command_line() -> None:
    server = str(Path(__file__).resolve().parents[1] / "servers" / "argv_server.py")
    with_args, without = toolwire_all(
        ["call", "args", "--", sys.executable, "-m", "toolwire", "run", server, "--", "--db", "x.sqlite"],
        ["call", "args", "--", sys.executable, "-m", "toolwire", "run", server],
    )
    assert with_args.stdout == "--db x.sqlite\n", with_args.stderr
    assert without.stdout == "\n", without.stderr


def test_run_takes_the_transport_by_name() -> None:
    with pytest.raises(ValueError, match='transport is "stdio"'):
        Server("x").run(transport="websocket")


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_structured_content_is_printed_only_when_it_adds_something(version: str, tmp_path: Path) -> None:
    numbers, framed, pictured = toolwire_all(
        ["call", CLI_SERVER, "numbers", "--protocol", version],
        ["call", CLI_SERVER, "framed", "--protocol", version],
        ["call", CLI_SERVER, "pictured", "--protocol", version, "--out", str(tmp_path)],
    )
    assert json.loads(numbers.stdout) == [1, 2, 3], numbers.stdout  # once: the whole output is one value
    assert framed.stdout == "just this\n", framed.stdout
    assert pictured.stdout.splitlines()[0] == "a picture" and len(pictured.stdout.splitlines()) == 2, pictured.stdout
    assert "iVBOR" not in pictured.stdout  # the image was saved, its base64 not dumped


@pytest.mark.parametrize("flag", ["--json", "--raw"])  # --raw: its old name
def test_call_json_prints_the_result_as_sent(flag: str) -> None:
    raw, failing = toolwire_all(["call", CLI_SERVER, "numbers", flag], ["call", FAILING, "fail", flag])
    assert raw.returncode == 0 and json.loads(raw.stdout)["structuredContent"] == [1, 2, 3]
    assert failing.returncode == 1 and json.loads(failing.stdout)["isError"] is True
    assert failing.stderr == "toolwire: tool 'fail' reported an error (isError)\n"
