"""A large API with the discovery features, end to end: GitHub's REST description (1,223
operations) served by ``toolwire openapi`` over a real stdio pipe, as the search tools
(``--search``), narrowed by tag, ranked by ``toolwire search``, and given to a host that
defers the definitions, with the real ``openai`` package and the scripted model server. The
API itself is a tiny ASGI app on a real socket (uvicorn on 127.0.0.1) answering the one
path called: creating an issue."""

from __future__ import annotations

import gzip
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.support.clirun import TOOLWIRE, toolwire
from tests.support.httpserve import InProcess
from tests.support.model_server import ModelServer, Reply, ToolCall
from toolwire.client import Client
from toolwire.host import ApprovalNeeded, Host, ServerSpec, ToolResult
from toolwire.host.providers import OpenAIProvider
from toolwire.openapi import map_document

DATA = Path(__file__).parent / "data"
OPERATIONS = 1223
#: A request as a model words it. Terse ones rank the tool lower: "create an issue" puts
#: issues_create 19th, after tools whose shorter descriptions say "issue" and "create" too.
CREATE_AN_ISSUE = "create an issue with a title and body"
ISSUE = {
    "id": 1,
    "node_id": "I_1",
    "number": 7,
    "title": "",
    "state": "open",
    "locked": False,
    "user": None,
    "assignee": None,
    "milestone": None,
    "labels": [],
    "comments": 0,
    "closed_at": None,
    "created_at": "2026-11-28T00:00:00Z",
    "updated_at": "2026-11-28T00:00:00Z",
    **{
        f"{part}url": f"https://api.github.test/{part}"
        for part in ("", "html_", "comments_", "events_", "labels_", "repository_")
    },
}

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


async def github_api(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    """GitHub's ``POST /repos/{owner}/{repo}/issues``, answering the issue made (numbered 7,
    titled as asked); 404 for anything else."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    parts = scope["path"].split("/")
    if scope["method"] == "POST" and len(parts) == 5 and parts[1] == "repos" and parts[4] == "issues":
        status, answer = 201, {**ISSUE, "title": orjson.loads(body)["title"], "url": scope["path"]}
    else:
        status, answer = 404, {"message": "Not Found"}
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": orjson.dumps(answer)})


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> str:
    """GitHub's document as a JSON file."""
    path = tmp_path_factory.mktemp("github") / "api.github.com.json"
    path.write_bytes(gzip.decompress((DATA / "api.github.com.json.gz").read_bytes()))
    return str(path)


@pytest.fixture
async def api() -> AsyncIterator[str]:
    """The stand-in API on a real socket; its base URL."""
    async with InProcess(github_api, runner="uvicorn", lifespan="off") as url:
        yield url.removesuffix("/mcp")


async def test_the_search_tools_find_and_call_one_of_1223(spec: str, api: str) -> None:
    async with Client([*TOOLWIRE, "openapi", spec, "--base-url", api, "--search"]) as client:
        listed = [tool.name for tool in await client.list_tools()]
        found = await client.call_tool("search_tools", {"query": CREATE_AN_ISSUE})
        made = await client.call_tool(
            "call_tool", {"name": "issues_create", "arguments": {"owner": "ada", "repo": "engine", "title": "Gears"}}
        )
        direct = await client.call_tool("issues_create", {"owner": "ada", "repo": "engine", "title": "Cams"})
    assert sorted(listed) == ["call_tool", "search_tools"]
    names = [tool["name"] for tool in found.structured["tools"]]
    assert len(names) == 5 and "issues_create" in names, names
    assert not made.is_error and made.structured["title"] == "Gears"
    assert made.structured["url"] == "/repos/ada/engine/issues"
    assert not direct.is_error and direct.structured["title"] == "Cams"  # still callable by name


async def test_all_1223_are_listed_in_pages_a_client_takes(spec: str) -> None:
    async with Client([*TOOLWIRE, "openapi", spec, "--base-url", "http://127.0.0.1:9"]) as client:
        tools = await client.list_tools()
    assert len(tools) == OPERATIONS == len({tool.name for tool in tools})


async def test_a_tag_rule_shows_only_that_tag_s_tools_to_a_list_and_a_search(spec: str) -> None:
    command = [*TOOLWIRE, "openapi", spec, "--base-url", "http://127.0.0.1:9", "--include-tag", "issues"]
    async with Client(command) as client:
        tools = await client.list_tools()
    async with Client([*command, "--search"]) as client:
        found = await client.call_tool("search_tools", {"query": "create a pull request", "limit": 50})
    document = orjson.loads(Path(spec).read_bytes())
    tagged = {operation.name for operation in map_document(document).operations if "issues" in operation.tags}
    assert len(tagged) == 58 and {tool.name for tool in tools} == tagged
    names = [tool["name"] for tool in found.structured["tools"]]
    assert names and set(names) <= tagged, names  # no pulls_create: it is not tagged issues


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (CREATE_AN_ISSUE, "issues_create"),
        ("list the branches of a repository", "repos_list-branches"),
        ("create a release", "repos_create-release"),
    ],
)
def test_toolwire_search_ranks_github_s_operations(spec: str, query: str, expected: str) -> None:
    done = toolwire("search", query, "--json", "--limit", "5", "--", *TOOLWIRE, "openapi", spec)
    assert done.returncode == 0, done.stderr
    names = [match["name"] for match in json.loads(done.stdout)]
    assert expected in names, names


def sent(request: dict[str, Any]) -> list[str]:
    """The names of the tools a Chat Completions request carried."""
    return [tool["function"]["name"] for tool in request.get("tools", [])]


async def test_a_host_shows_the_model_the_finder_not_1223_definitions(spec: str, api: str) -> None:
    with ModelServer() as model:
        model.script(
            Reply(tool_calls=[ToolCall("find_tools", {"query": CREATE_AN_ISSUE})]),
            Reply(tool_calls=[ToolCall("issues_create", {"owner": "ada", "repo": "engine", "title": "Gears"})]),
            Reply(text="Issue 7 is open."),
        )
        provider = OpenAIProvider("deepseek-chat", api_key="test", base_url=model.openai_url, max_retries=0)
        server = ServerSpec("github", [*TOOLWIRE, "openapi", spec, "--base-url", api])
        async with Host([server], provider=provider) as host:
            assert host.deferring and len(host.tools) == OPERATIONS
            conversation = host.conversation()
            events = []
            async for event in conversation.send("open an issue 'Gears' in ada/engine"):
                events.append(event)
                if isinstance(event, ApprovalNeeded):  # a POST is not read-only: the person is asked
                    event.allow()
        assert conversation.text == "Issue 7 is open."
    first, second, _ = model.requests
    assert sent(first) == ["find_tools"] and len(orjson.dumps(first["tools"])) < 2_000
    assert "issues_create" in sent(second) and len(sent(second)) == 6  # the 5 found, and find_tools
    called = [event for event in events if isinstance(event, ToolResult) and event.tool == "issues_create"]
    assert [event.is_error for event in called] == [False]
