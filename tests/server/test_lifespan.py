"""A server's lifespan: opened once before serving, reached by tools through the Context,
closed when serving stops, on every transport; a lifespan that fails stops the server with
one line."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.httpserve import SERVERS, fresh_server, toolwire_http
from tests.support.rawclient import RawClient, toolwire_command
from toolwire import Context, Server
from toolwire.client import Client

LIFESPAN = str(SERVERS / "lifespan_server.py")


async def test_tools_reach_what_the_lifespan_yielded_in_memory() -> None:
    events: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> object:
        events.append("open")
        yield {"pool": "the pool"}
        events.append("close")

    server = Server("pooled", lifespan=lifespan)

    @server.tool
    def pool(ctx: Context) -> str:
        return str(ctx.lifespan["pool"])

    async with Client(server) as first, Client(server, protocol="2025-11-25") as second:
        assert (await first.call_tool("pool")).text == "the pool"
        assert (await second.call_tool("pool")).text == "the pool"
        assert events == ["open"]  # once for the process, however many connections
    assert events == ["open", "close"]


async def test_a_sync_lifespan_and_one_without_arguments() -> None:
    opened: list[str] = []
    server = Server("sync")

    @server.lifespan
    def lifespan() -> Iterator[str]:
        opened.append("yes")
        yield "plain state"

    @server.tool
    def read(ctx: Context) -> str:
        return str(ctx.lifespan)

    with pytest.raises(ValueError, match="has a lifespan already"):
        server.lifespan(lifespan)
    with pytest.raises(RuntimeError, match="the server's lifespan is not running"):
        server.lifespan_state  # noqa: B018
    async with Client(server) as client:
        assert (await client.call_tool("read")).text == "plain state"
    assert opened == ["yes"]


def test_stdio_opens_the_lifespan_before_serving_and_closes_it_at_the_end(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    with RawClient(toolwire_command(LIFESPAN), env={**os.environ, "LIFESPAN_LOG": str(log)}) as peer:
        peer.initialize()
        result = peer.request("tools/call", {"name": "state", "arguments": {}})["result"]
        assert result["content"][0]["text"] == "hello from the lifespan of lifespan"
        assert log.read_text() == "opened\n"
        assert peer.close() == 0
    assert log.read_text() == "opened\nclosed\n"


async def test_http_opens_the_lifespan_at_startup_and_closes_it_at_shutdown(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    os.environ["LIFESPAN_LOG"] = str(log)
    try:
        with toolwire_http(LIFESPAN) as (url, process):
            async with Client(url) as client:  # the port listens at once; answers wait for the startup
                assert (await client.call_tool("state")).text == "hello from the lifespan of lifespan"
            assert log.read_text() == "opened\n"
            process.send_signal(signal.SIGINT)
            assert process.wait(10) == 0
    finally:
        del os.environ["LIFESPAN_LOG"]
    assert log.read_text() == "opened\nclosed\n"


async def test_an_app_that_gets_no_lifespan_events_opens_it_at_its_first_request(tmp_path: Path) -> None:
    from tests.support.httpserve import InProcess

    log = tmp_path / "log.txt"
    os.environ["LIFESPAN_LOG"] = str(log)
    try:
        server = fresh_server(LIFESPAN)
        async with InProcess(server.http_app(), lifespan="off") as url, Client(url) as client:
            assert (await client.call_tool("state")).text == "hello from the lifespan of lifespan"
    finally:
        del os.environ["LIFESPAN_LOG"]
    assert log.read_text() == "opened\n"


@pytest.mark.parametrize("http", [False, True])
def test_a_lifespan_that_fails_stops_the_server_with_one_line(http: bool) -> None:
    from tests.support.httpserve import free_port

    command = [sys.executable, "-m", "toolwire", "run", LIFESPAN, *(["--http", str(free_port())] if http else [])]
    done = subprocess.run(
        command, input="", capture_output=True, text=True, timeout=30, env={**os.environ, "LIFESPAN_FAIL": "1"}
    )
    assert done.returncode != 0
    assert "the server's lifespan failed to start: RuntimeError: no database to connect to" in done.stderr
    if not http:  # the line, then the user's own frames only
        first, *frames = done.stderr.splitlines()
        assert first == "toolwire: the server's lifespan failed to start: RuntimeError: no database to connect to"
        assert "lifespan_server.py" in frames[0] and not any("contextlib" in line for line in frames)
