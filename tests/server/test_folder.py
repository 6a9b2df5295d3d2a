"""A folder of tool files served by one server (``Server.add_folder``, ``toolwire run DIR``):
every file's tools, resources and prompts served, sub-folders included and ``_helpers``
left out; a name two files define, a file that fails to import and a file with no Server
each said in one line naming the files while the rest is served; with reloading, a file
written while a client is connected (over real stdio, in both eras) reaches it with the
``list_changed`` notifications, and a file that breaks takes only its own tools away."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.httpserve import toolwire_http
from toolwire import Client, Server

NEWS = """
    from toolwire import Server
    from _shared import greeting

    server = Server("news")

    @server.tool
    def search(query: str) -> str:
        \"\"\"Search the news.\"\"\"
        return f"{greeting()}: news about {query}"

    server.add_resource("news://today", "all quiet")

    @server.prompt
    def headline(topic: str) -> str:
        return f"Write a headline about {topic}."
"""
WEATHER = """
    from toolwire import Server

    mcp = Server("weather")

    @mcp.tool
    def forecast(city: str) -> str:
        return f"sunny in {city}"

    @mcp.tool
    def search(city: str) -> str:
        return city
"""
DEEP = """
    from toolwire import Server

    server = Server("deep")

    @server.tool
    def dig() -> str:
        return "found it"
"""


def write(folder: Path, name: str, source: str) -> None:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))


@pytest.fixture
def tools_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "my tools"
    write(folder, "news.py", NEWS)
    write(folder, "weather.py", WEATHER)
    write(folder, "mines/deep.py", DEEP)
    write(folder, "_shared.py", 'def greeting() -> str:\n    return "hello"\n')
    write(folder, "broken.py", "import this_module_does_not_exist\n")
    write(folder, "notes.py", "NOTHING = 1\n")
    return folder


async def test_every_file_is_served_and_each_problem_is_one_line_naming_the_files(tools_folder: Path) -> None:
    server = Server("all")
    folder = server.add_folder(tools_folder)
    async with Client(server) as client:
        tools = [tool.name for tool in await client.list_tools()]
        searched = await client.call_tool("search", {"query": "rain"})
        resources = [resource.uri for resource in await client.list_resources()]
        prompts = [prompt.name for prompt in await client.list_prompts()]
    assert tools == ["dig", "search", "forecast"]
    assert searched.content[0].text == "hello: news about rain"
    assert resources == ["news://today"] and prompts == ["headline"]
    assert folder.problems == [
        "broken.py failed to import, so nothing of it is served: "
        "ModuleNotFoundError: No module named 'this_module_does_not_exist'",
        "notes.py defines no Server, so nothing of it is served",
        "the tool 'search' is defined by both news.py and weather.py: news.py's is served",
    ]


def test_a_name_the_server_has_already_is_not_taken_from_the_folder(tools_folder: Path) -> None:
    server = Server("own")

    @server.tool
    def forecast(city: str) -> str:
        return "the server's own"

    folder = server.add_folder(tools_folder)
    assert server.registry.by_key["forecast"].name == "forecast"
    assert "the tool 'forecast' of weather.py is not served: the server has one already" in folder.problems
    with pytest.raises(ValueError, match="is not a folder"):
        server.add_folder(tools_folder / "news.py")
    server.remove_tool("dig")  # by hand: loading again neither fails nor misses it
    folder.load()
    assert "dig" in server.registry


def serve_folder(folder: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "toolwire", "run", str(folder), *options]


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_a_file_written_while_serving_reaches_the_client_with_list_changed(
    tools_folder: Path, version: str, transport: str
) -> None:
    changed = {kind: asyncio.Event() for kind in ("tools", "resources", "prompts")}
    with contextlib.ExitStack() as stack:
        target: str | list[str] = serve_folder(tools_folder, "--reload")
        if transport == "http":
            target, _ = stack.enter_context(toolwire_http(str(tools_folder), "--reload"))
        async with Client(
            target,
            protocol=version,
            on_tools_changed=changed["tools"].set,
            on_resources_changed=changed["resources"].set,
            on_prompts_changed=changed["prompts"].set,
        ) as client:

            async def tools_once(done: Callable[[list[str]], bool]) -> list[str]:
                """The tools, listed again at each change until ``done`` says they are (two
                files written may be reloaded in one change or in two)."""
                while True:
                    changed["tools"].clear()
                    names = [tool.name for tool in await client.list_tools(refresh=True)]
                    if done(names):
                        return names
                    await asyncio.wait_for(changed["tools"].wait(), 60)

            before = [tool.name for tool in await client.list_tools()]
            await client.list_resources()
            await client.list_prompts()
            await client.subscribe_resource("news://today")  # acknowledged: the server's notices reach us now
            write(tools_folder, "mines/deeper.py", DEEP.replace("dig", "drill").replace('"deep"', '"deeper"'))
            write(tools_folder, "news.py", NEWS.replace("news://today", "news://now").replace("headline", "lead"))
            await asyncio.wait_for(asyncio.gather(changed["resources"].wait(), changed["prompts"].wait()), 60)
            after = await tools_once(lambda names: "drill" in names)
            called = await client.call_tool("drill")
            resources = [resource.uri for resource in await client.list_resources()]
            prompts = [prompt.name for prompt in await client.list_prompts()]
            write(tools_folder, "weather.py", "raise RuntimeError('half-written')\n")
            broken = await tools_once(lambda names: "forecast" not in names)
    assert before == ["dig", "search", "forecast"]
    assert sorted(after) == ["dig", "drill", "forecast", "search"] and called.content[0].text == "found it"
    assert resources == ["news://now"] and prompts == ["lead"]
    assert sorted(broken) == ["dig", "drill", "search"]


HELPDESK = """
    from pathlib import Path

    from toolwire import Server

    server = Server("helpdesk")
    server.add_skill(Path(__file__).with_name("_skills") / "refunds")
"""
SKILL = "---\nname: refunds\ndescription: How to refund an order.\n---\nRefund within 30 days.\n"


async def test_a_files_skills_are_served_and_go_with_it_when_it_changes(tmp_path: Path) -> None:
    write(tmp_path, "helpdesk.py", HELPDESK)
    write(tmp_path, "_skills/refunds/SKILL.md", SKILL)
    server = Server("desk")
    folder = server.add_folder(tmp_path)
    async with Client(server) as client:
        skills = [skill.name for skill in await client.list_skills()]
        files = [resource.uri for resource in await client.list_resources()]
    write(tmp_path, "helpdesk.py", 'from toolwire import Server\n\nserver = Server("helpdesk")\n')
    folder.load()
    async with Client(server) as client:
        after = await client.list_skills()
        left = await client.list_resources()
    assert skills == ["refunds"] and files == ["skill://refunds/SKILL.md"] and folder.problems == []
    assert after == [] and left == []
