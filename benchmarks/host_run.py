"""Benchmark the host: what it adds to a tool call, and how soon ``toolwire chat`` is ready.

    python benchmarks/host_run.py [--quick] [--json PATH] [--docs | --no-docs] [--strict]

**Tool round trip.** A model that answers instantly (in this process: a subclass of
``OpenAIProvider`` that converts each request to Chat Completions messages and tools, as the
real one does before its HTTP call, then answers from a script: first a call of ``echo``,
then a text answer) drives a ``Host`` over a real stdio server (``benchmarks/echo_server.py``).
One *turn* is the person's message, the model's tool call, the call through the host's
``Client``, its result back into the conversation, and the model's answer. Its floor is the
bare ``Client.call_tool("echo")`` on the same connection. The host's overhead per tool round
trip is the difference of their medians; the target is at most 1 ms. A fresh conversation
starts every 20 turns, so the history (which every model request converts) stays realistic.
Rounds alternate (host, bare, host, bare...); each figure is the median of its rounds.

*4 calls at once* (info): turns whose model asks for four calls at once, beside four bare
calls made one after another and four made with ``asyncio.gather``.

**Time to prompt.** ``toolwire chat benchmarks/echo_server.py`` in a pseudo-terminal, from
spawn to the prompt (after the server started and its tools were listed); the target is at
most 1 s. Beside it: ``python -c pass``, and ``python -m toolwire -h``. The terminal here
answers prompt_toolkit's cursor position requests as a real one does.

A full run writes its results into ``docs/performance.md`` (``--no-docs``: not);
``--quick`` leaves the page alone unless ``--docs`` is given.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import platform
import pty
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as stdio

from toolwire.host import ApprovalPolicy, Host, ModelRequest, ModelTurn, ToolCallRequest, Usage
from toolwire.host.providers import OpenAIProvider

ROOT = Path(__file__).resolve().parent.parent
ECHO = str(ROOT / "benchmarks" / "echo_server.py")
START_MARK = "<!-- host-results:start -->"
END_MARK = "<!-- host-results:end -->"
TURNS_PER_CONVERSATION = 20


class InstantModel(OpenAIProvider):
    """Answers at once, after converting the request as the real provider does."""

    def __init__(self, calls_per_turn: int = 1) -> None:
        super().__init__("instant", api_key="unused", base_url="http://127.0.0.1:9/v1")
        self.calls_per_turn = calls_per_turn
        self.converted = 0

    async def complete(self, request: ModelRequest, on_text: Any = None) -> ModelTurn:
        body = {
            "messages": self.messages(request),
            "tools": [
                {
                    "type": "function",
                    "function": {"name": s.name, "description": s.description, "parameters": s.parameters},
                }
                for s in request.tools
            ],
        }
        self.converted += len(body["messages"])
        last = request.messages[-1]
        if last["role"] == "user":  # the person spoke: call the tool
            calls = [ToolCallRequest(f"c{index}", "echo", {"text": "hi"}) for index in range(self.calls_per_turn)]
            return ModelTurn("", calls, Usage(10, 5), "tool_calls")
        if on_text is not None:
            on_text("done")
        return ModelTurn("done", [], Usage(10, 1), "stop")

    async def close(self) -> None:
        pass


async def host_turns(host: Host, turns: int) -> float:
    """Seconds per turn over ``turns`` turns."""
    conversation = host.conversation()
    started = time.perf_counter()
    for number in range(turns):
        if number and number % TURNS_PER_CONVERSATION == 0:
            conversation = host.conversation()
        async for _event in conversation.send("echo hi"):
            pass
    return (time.perf_counter() - started) / turns


async def bare_calls(host: Host, calls: int, at_once: int = 1, gathered: bool = False) -> float:
    """Seconds per group of ``at_once`` bare calls."""
    client = host.servers["bench"].client
    assert client is not None
    started = time.perf_counter()
    for _ in range(calls):
        if gathered:
            await asyncio.gather(*(client.call_tool("echo", {"text": "hi"}) for _ in range(at_once)))
        else:
            for _ in range(at_once):
                await client.call_tool("echo", {"text": "hi"})
    return (time.perf_counter() - started) / calls


async def measure_round_trips(rounds: int, turns: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {"host": [], "bare": [], "host4": [], "bare4": [], "gather4": []}
    policy = ApprovalPolicy(allow=["*"])
    async with (
        Host([f"bench={ECHO}"], provider=InstantModel(), policy=policy) as host,
        Host([f"bench={ECHO}"], provider=InstantModel(calls_per_turn=4), policy=policy) as four,
    ):
        await host_turns(host, 50)  # warm-up
        await bare_calls(host, 200)
        await host_turns(four, 20)
        for _ in range(rounds):
            samples["host"].append(await host_turns(host, turns))
            samples["bare"].append(await bare_calls(host, turns))
            samples["host4"].append(await host_turns(four, turns // 4))
            samples["bare4"].append(await bare_calls(four, turns // 4, at_once=4))
            samples["gather4"].append(await bare_calls(four, turns // 4, at_once=4, gathered=True))
    return samples


def time_to_prompt(command: list[str], environment: dict[str, str], timeout: float = 20.0) -> float:
    """Seconds from spawning ``command`` in a pseudo-terminal to its prompt ``> ``."""
    controller, terminal = pty.openpty()
    started = time.perf_counter()
    process = subprocess.Popen(
        command, stdin=terminal, stdout=terminal, stderr=terminal, env=environment, cwd=ROOT, close_fds=True
    )
    os.close(terminal)
    seen = b""
    try:
        while True:
            left = timeout - (time.perf_counter() - started)
            if left <= 0:
                raise RuntimeError(f"no prompt within {timeout} s; the screen ends with {seen[-300:]!r}")
            ready, _, _ = select.select([controller], [], [], left)
            if ready:
                try:
                    chunk = os.read(controller, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    raise RuntimeError(f"it exited before its prompt: {seen[-300:]!r}")
                seen += chunk
                if b"\x1b[6n" in chunk:  # a cursor position request: answer as a terminal does
                    os.write(controller, b"\x1b[1;1R")
                ready_line = seen.find(b"lists the commands.")
                if ready_line >= 0 and b">" in seen[ready_line:]:
                    return time.perf_counter() - started
    finally:
        process.kill()
        process.wait(10)
        os.close(controller)


def time_to_exit(command: list[str], environment: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, env=environment, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def measure_start(spawns: int) -> dict[str, list[float]]:
    home = tempfile.mkdtemp(prefix="host-bench-")
    environment = {
        **os.environ,
        "HOME": home,
        "XDG_STATE_HOME": home,
        "TERM": "xterm-256color",
        "COLUMNS": "120",
        "LINES": "40",
    }
    for key in ("DEEPSEEK_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        environment.pop(key, None)
    chat = [sys.executable, "-m", "toolwire", "chat", ECHO, "--base-url", "http://127.0.0.1:9/v1", "--model", "bench"]
    samples: dict[str, list[float]] = {"chat": [], "python": [], "version": []}
    time_to_prompt(chat, environment)  # warm the file cache
    for _ in range(spawns):
        samples["chat"].append(time_to_prompt(chat, environment))
        samples["python"].append(time_to_exit([sys.executable, "-c", "pass"], environment))
        samples["version"].append(time_to_exit([sys.executable, "-m", "toolwire", "-h"], environment))
    return samples


def summarize(trips: dict[str, list[float]], start: dict[str, list[float]]) -> list[dict[str, Any]]:
    median = {name: statistics.median(values) for name, values in {**trips, **start}.items()}
    overhead_ms = (median["host"] - median["bare"]) * 1000
    overhead4_ms = (median["host4"] - median["gather4"]) * 1000
    return [
        {
            "metric": "tool round trip: host turn",
            "value": f"{median['host'] * 1000:.3f} ms",
            "floor": f"bare call {median['bare'] * 1000:.3f} ms",
            "result": f"+{overhead_ms:.3f} ms",
            "target": "<= +1 ms",
            "passed": overhead_ms <= 1.0,
        },
        {
            "metric": "4 calls at once: host turn (info)",
            "value": f"{median['host4'] * 1000:.3f} ms",
            "floor": f"4 bare calls {median['bare4'] * 1000:.3f} ms; gathered {median['gather4'] * 1000:.3f} ms",
            "result": f"+{overhead4_ms:.3f} ms over gathered",
            "target": "",
            "passed": None,
        },
        {
            "metric": "`toolwire chat` to its prompt",
            "value": f"{median['chat'] * 1000:.0f} ms",
            "floor": f"python -c pass {median['python'] * 1000:.0f} ms; toolwire -h {median['version'] * 1000:.0f} ms",
            "result": f"{median['chat'] / median['python']:.1f}x python",
            "target": "<= 1000 ms",
            "passed": median["chat"] <= 1.0,
        },
    ]


def render(rows: list[dict[str, Any]], mode: str, rounds: int, turns: int, spawns: int) -> str:
    lines = [
        f"Run of {datetime.date.today().isoformat()} ({mode}: {rounds} rounds of {turns} turns; {spawns} spawns), "
        f"Python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores.",
        "",
        "| metric | toolwire | floor | result | target | |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        mark = "" if row["passed"] is None else ("pass" if row["passed"] else "**missed**")
        lines.append(
            f"| {row['metric']} | {row['value']} | {row['floor']} | {row['result']} | {row['target']} | {mark} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run (about 20 s)")
    parser.add_argument("--json", metavar="PATH", help="also write the results (with every sample) as JSON")
    docs = parser.add_mutually_exclusive_group()
    docs.add_argument("--docs", action="store_true", help="write the results into docs/performance.md")
    docs.add_argument("--no-docs", action="store_true", help="leave docs/performance.md alone")
    parser.add_argument("--strict", action="store_true", help="exit with status 1 if a target is missed")
    args = parser.parse_args(argv)
    mode = "quick" if args.quick else "full"
    rounds, turns, spawns = (3, 200, 5) if args.quick else (9, 400, 11)
    subprocess.run([sys.executable, "-m", "compileall", "-q", "src", "benchmarks"], cwd=ROOT, check=True)
    trips = asyncio.run(measure_round_trips(rounds, turns))
    start = measure_start(spawns)
    rows = summarize(trips, start)
    text = render(rows, mode, rounds, turns, spawns)
    print(text)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        everything = {"rows": rows, "samples": {**trips, **start}}
        Path(args.json).write_bytes(orjson.dumps(everything, option=orjson.OPT_INDENT_2))
    wants_docs = args.docs or (mode == "full" and not args.no_docs)
    if wants_docs and not stdio.update_docs(text, START_MARK, END_MARK):
        print("docs/performance.md has no host results markers: not updated", file=sys.stderr)
    missed = [row["metric"] for row in rows if row["passed"] is False]
    if missed:
        print("targets missed: " + "; ".join(missed), file=sys.stderr)
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
