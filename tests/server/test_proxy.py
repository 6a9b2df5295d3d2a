"""The proxy: any MCP server served as a toolwire server, in memory, and as ``toolwire proxy``
bridging a stdio-only, 2025-11-25-only server (the TypeScript reference server) to
Streamable HTTP and 2026-07-28 clients."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import node_binary
from tests.support.httpserve import SERVERS, free_port, fresh_server, wait_for_port
from toolwire import Context, Server
from toolwire.client import Client, ServerError
from toolwire.proxy import proxy

EVERYTHING = (
    Path(__file__).resolve().parents[1]
    / "interop"
    / "node"
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-everything"
    / "dist"
    / "index.js"
)
ERAS = ["2025-11-25", "2026-07-28"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_proxy_offers_what_its_target_offers(era: str) -> None:
    target = fresh_server(str(SERVERS / "library.py"))
    async with Client(proxy(target), protocol=era) as client:
        assert client.server_info["name"] == "library"
        direct = Client(target, protocol=era)
        async with direct:
            assert [tool.raw for tool in await client.list_tools()] == [tool.raw for tool in await direct.list_tools()]
            for uri in ("library://readme", "library://books/1"):
                assert [entry.raw for entry in await client.read_resource(uri)] == [
                    entry.raw for entry in await direct.read_resource(uri)
                ]
            mirrored = await client.get_prompt("recommend", {"genre": "poetry"})
            original = await direct.get_prompt("recommend", {"genre": "poetry"})
            assert mirrored.raw["messages"] == original.raw["messages"]
        with pytest.raises(ServerError) as missing:
            await client.read_resource("library://books/999")
        assert missing.value.code in (-32002, -32602)  # the target's own error, as the era spells it


def target_server() -> Server:
    server = Server("target")

    @server.tool
    async def count(to: int, ctx: Context) -> str:
        for step in range(1, to + 1):
            await ctx.report_progress(step, to)
        return f"counted to {to}"

    @server.tool
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"hello {(answer.content or {}).get('name')}"

    return server


async def test_progress_and_questions_reach_the_proxys_caller() -> None:
    seen: list[float] = []

    async def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada"}}

    target = target_server()
    async with Client(proxy(target), protocol="2025-11-25", elicitation=elicitation) as client:
        result = await client.call_tool("count", {"to": 3}, progress=lambda done, total, message: seen.append(done))
        assert result.text == "counted to 3" and seen == [1, 2, 3]
        assert (await client.call_tool("ask")).text == "hello Ada"
    async with Client(proxy(target), protocol="2026-07-28", elicitation=elicitation) as modern:
        # a 2026-07-28 caller cannot be asked mid-call: the target's question is declined
        assert (await modern.call_tool("ask")).text == "hello None"


async def test_a_target_that_cannot_be_reached_stops_the_proxy() -> None:
    from toolwire.server.lifespan import LifespanFailed

    with pytest.raises(LifespanFailed, match="failed to start"):
        async with Client(proxy(["no-such-command-anywhere"])):
            pass


def test_toolwire_proxy_bridges_a_stdio_legacy_server_to_http_and_2026_07_28() -> None:
    port = free_port()
    command = [
        sys.executable,
        "-m",
        "toolwire",
        "proxy",
        "--http",
        str(port),
        "--",
        str(node_binary()),
        str(EVERYTHING),
        "stdio",
    ]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, process)
        import asyncio

        async def use() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp", protocol="2026-07-28") as client:
                assert client.version == "2026-07-28"
                tools = {tool.name for tool in await client.list_tools()}
                assert {"echo", "get-sum", "simulate-research-query"} <= tools
                assert (await client.call_tool("echo", {"message": "through"})).text == "Echo: through"
                summed = await client.call_tool("get-sum", {"a": 2, "b": 3})
                assert "5" in summed.text
                # the target runs it as a task (it requires one); the proxy's client drives it
                research = await client.call_tool("simulate-research-query", {"topic": "tea"})
                assert "Research Report: tea" in research.text

        asyncio.run(use())
    finally:
        process.terminate()
        process.wait(10)


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["proxy"], "proxy needs a TARGET"),
        (["proxy", "missing.py"], "no such file: missing.py"),
        (["proxy", "a.py", "b.py"], "unexpected 'b.py'"),
        (["proxy", "--frobnicate", "--", "x"], "unknown option for proxy: '--frobnicate'"),
        (["proxy", "--extension-method", "votes/count", "--", "x"], "--extension-method takes ID=METHOD"),
    ],
)
def test_proxy_usage_errors_are_one_line(words: list[str], said: str) -> None:
    done = subprocess.run([sys.executable, "-m", "toolwire", *words], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and said in done.stderr


TARGET_FILE = """
from toolwire import Server

server = Server("notes", "2.3.4", instructions="Read the notes before you write one.")


@server.resource("notes://today")
def today() -> str:
    return "tea at four"


@server.prompt
def summary(topic: str) -> str:
    return f"Summarize the notes about {topic}."
"""


@pytest.mark.parametrize("era", ERAS)
async def test_the_stdio_proxy_answers_the_handshake_as_its_target(era: str, tmp_path: Path) -> None:
    file = tmp_path / "notes.py"
    file.write_text(TARGET_FILE)
    async with Client([sys.executable, "-m", "toolwire", "proxy", str(file)], protocol=era) as client:
        assert (client.server_info["name"], client.server_info["version"]) == ("notes", "2.3.4")
        assert client.instructions == "Read the notes before you write one."
        assert {"resources", "prompts"} <= set(client.capabilities)
        assert [entry.text for entry in await client.read_resource("notes://today")] == ["tea at four"]


def test_a_proxy_option_after_dash_dash_is_the_servers_and_the_proxy_says_so(tmp_path: Path) -> None:
    file = tmp_path / "notes.py"
    file.write_text(TARGET_FILE)
    server = [sys.executable, "-m", "toolwire", "run", str(file), "--", "--http", "8000"]  # its file takes --http
    done = subprocess.run(
        [sys.executable, "-m", "toolwire", "proxy", "--", *server],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        "toolwire: warning: --http comes after --, so it is the server's option, not the proxy's;"
        " the proxy's options go before --: toolwire proxy --http ... -- COMMAND\n"
    )


def test_the_docs_put_the_proxys_options_before_dash_dash() -> None:
    root = Path(__file__).resolve().parents[2]
    written = [
        line
        for document in [root / "README.md", *sorted((root / "docs").glob("*.md")), root / "src/toolwire/proxy.py"]
        for line in document.read_text().splitlines()
        if line.strip().startswith("toolwire proxy") and " -- " in line  # the command lines shown
    ]
    assert written
    for line in written:
        after = line.split(" -- ", 1)[1].split("#", 1)[0].split()
        assert not {"--http", "--name", "--allow-host", "-v"} & set(after), line
