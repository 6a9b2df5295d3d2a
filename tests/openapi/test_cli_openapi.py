"""``toolwire openapi SPEC``: the shop's document served over a real stdio pipe to a client
session, calling the shop over a real socket (uvicorn on 127.0.0.1); and the same command
line given to ``proxy``, ``tools``, ``search`` and ``install`` as any server's."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest

from tests.openapi import shop
from tests.support.clirun import TOOLWIRE, failed, toolwire
from tests.support.httpserve import InProcess, process_http
from toolwire.client import Client


@pytest.fixture
def spec(tmp_path: Path) -> str:
    """The shop's document as a file."""
    path = tmp_path / "shop.json"
    path.write_bytes(orjson.dumps(shop.app.openapi()))
    return str(path)


@pytest.fixture
async def api() -> AsyncIterator[str]:
    """The shop on a real socket; its base URL."""
    async with InProcess(shop.app, runner="uvicorn") as url:
        yield url.removesuffix("/mcp")


async def test_served_over_stdio_with_upstream_headers_and_a_bearer(spec: str, api: str) -> None:
    command = [*TOOLWIRE, "openapi", spec, "--base-url", api, "--header", "X-Api-Key: from-the-command-line"]
    async with Client(command) as client:
        assert (await client.call_tool("get_item", {"item_id": 1})).structured["name"] == "kettle"
        received = await client.call_tool("received", {})
    assert received.structured["x_api_key"] == "from-the-command-line"
    environment = {**os.environ, "SHOP_TOKEN": shop.SECRET}
    async with Client(
        [*TOOLWIRE, "openapi", spec, "--base-url", api, "--bearer-env", "SHOP_TOKEN"], env=environment
    ) as client:
        assert (await client.call_tool("private", {})).structured == {"secret": "the shop opens at nine"}


async def test_tags_choose_the_tools_and_get_operations_may_be_resources(spec: str, api: str) -> None:
    async with Client([*TOOLWIRE, "openapi", spec, "--base-url", api, "--include-tag", "forms"]) as client:
        assert sorted(tool.name for tool in await client.list_tools()) == ["feedback", "login"]
    async with Client(
        [*TOOLWIRE, "openapi", spec, "--base-url", api, "--exclude-tag", "oddities", "--resources"]
    ) as client:
        tools = sorted(tool.name for tool in await client.list_tools())
        templates = [template.uri_template for template in await client.list_resource_templates()]
        resources = [resource.uri for resource in await client.list_resources()]
        item = await client.read_resource("openapi://shop/items/1")
    assert tools == ["add_item", "delete_item", "feedback", "login"] and resources == ["openapi://shop/items"]
    assert templates == ["openapi://shop/items/{item_id}"] and '"kettle"' in (item[0].text or "")


async def test_proxy_serves_it_as_any_server(spec: str, api: str) -> None:
    async with Client([*TOOLWIRE, "proxy", "--", *TOOLWIRE, "openapi", spec, "--base-url", api]) as client:
        assert (await client.call_tool("get_item", {"item_id": 2})).structured["name"] == "lamp"


def test_tools_and_search_take_it_after_double_dash(spec: str) -> None:
    served = [*TOOLWIRE, "openapi", spec, "--base-url", "http://127.0.0.1:9"]
    listed = toolwire("tools", "--json", "--", *served)
    assert listed.returncode == 0, listed.stderr
    assert "get_item" in {tool["name"] for tool in json.loads(listed.stdout)}
    found = toolwire("search", "add a new item to the shop", "--json", "--", *served)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)[0]["name"] == "add_item"


def test_install_writes_the_command_line_with_the_document_made_absolute(spec: str, tmp_path: Path) -> None:
    home = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / ".config")}
    relative = os.path.relpath(spec, tmp_path)
    done = toolwire(
        "install",
        "cursor",
        "--print",
        "--",
        "toolwire",
        "openapi",
        relative,
        "--base-url",
        "http://127.0.0.1:9",
        cwd=tmp_path,
        **home,
    )
    assert done.returncode == 0, done.stderr
    entry = json.loads(done.stdout.split("\n", 1)[1])["mcpServers"]["shop"]
    assert entry == {
        "command": sys.executable,
        "args": ["-m", "toolwire", "openapi", str(Path(spec).resolve()), "--base-url", "http://127.0.0.1:9"],
    }
    refused = toolwire("install", "cursor", "--", "toolwire", "openapi", relative, cwd=tmp_path, **home)
    assert (
        failed(refused, 1)
        == "toolwire: the document's server URL '/' is relative and the document was not read from a URL: give base_url= (--base-url on the command line)"
    )


def test_documents_that_cannot_be_served_get_one_line(tmp_path: Path) -> None:
    swagger = tmp_path / "old.json"
    swagger.write_text('{"swagger": "2.0", "info": {"title": "old", "version": "1"}, "paths": {}}')
    assert "toolwire reads OpenAPI 3.0 and 3.1" in failed(
        toolwire("openapi", str(swagger), "--base-url", "http://x"), 1
    )
    assert (
        failed(toolwire("openapi"), 2)
        == "toolwire: openapi needs a SPEC: an OpenAPI document's file or URL (see toolwire openapi -h)"
    )
    missing = failed(toolwire("openapi", str(tmp_path / "none.json")), 1)
    assert missing.startswith(f"toolwire: cannot read the OpenAPI document {tmp_path / 'none.json'}")
    bad_header = failed(toolwire("openapi", str(swagger), "--header", "no-colon"), 2)
    assert "expected 'NAME: VALUE', not 'no-colon'" in bad_header


def test_dev_inspects_it_and_its_calls_reach_the_api(spec: str) -> None:
    import httpx

    from tests.cli.test_dev import inspector

    shop_process = (sys.executable, "-m", "uvicorn", "tests.openapi.shop:app", "--port")
    with (
        process_http(*shop_process, path="") as api,
        inspector("--", *TOOLWIRE, "openapi", spec, "--base-url", api) as url,
    ):
        base, token = url.split("?")[0], url.split("token=")[1]
        state = httpx.post(base + "api/state", headers={"X-Toolwire-Token": token}, timeout=30).json()["ok"]
        assert state["server"]["name"] == "Shop"
        answer = httpx.post(
            base + "api/call",
            headers={"X-Toolwire-Token": token},
            json={"name": "get_item", "arguments": {"item_id": 1}, "call": "c1"},
            timeout=30,
        ).json()["ok"]
    assert answer["result"]["structuredContent"]["name"] == "kettle"
