"""Several versions of one tool: the newest listed unless another is exposed, the versions
named in the definition's ``_meta``, a call choosing one through its ``_meta``, in both eras."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.helpers import LEGACY, MODERN, open_peer
from toolwire import Client, Server
from toolwire.server.versions import VERSION_META, VERSIONS_META, version_order


def payments() -> Server:
    server = Server("payments")

    @server.tool(version="1.9")
    def charge(amount: int) -> str:
        return f"v1.9 charged {amount}"

    @server.tool(version="1.10")
    def charge(amount: int, currency: str = "EUR") -> str:  # noqa: F811
        return f"v1.10 charged {amount} {currency}"

    @server.tool
    def refund(amount: int) -> str:
        return f"refunded {amount}"

    return server


async def tools_and_calls(server: Server, version: str, *calls: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    peer = await open_peer(server, version)
    try:
        tools = {tool["name"]: tool for tool in (await peer.request("tools/list"))["result"]["tools"]}
        answers = [await peer.request("tools/call", call) for call in calls]
    finally:
        await peer.connection.close()
    said = [a["result"]["content"][0]["text"] if "result" in a else a["error"]["message"] for a in answers]
    return tools, said


@pytest.mark.parametrize("version", [LEGACY[0], LEGACY[-1], MODERN])
async def test_the_newest_version_is_listed_once_and_another_is_called_by_naming_it(version: str) -> None:
    older = {VERSION_META: "1.9"}
    tools, said = await tools_and_calls(
        payments(),
        version,
        {"name": "charge", "arguments": {"amount": 5}},
        {"name": "charge", "arguments": {"amount": 5}, "_meta": older},
        {"name": "charge", "arguments": {"amount": 5}, "_meta": {VERSION_META: "7"}},
    )
    assert list(tools) == ["charge", "refund"]
    if version >= "2025-06-18":  # definitions carry _meta from 2025-06-18 on; calls choose in every version
        assert tools["charge"]["_meta"] == {VERSION_META: "1.10", VERSIONS_META: ["1.9", "1.10"]}
    assert "currency" in tools["charge"]["inputSchema"]["properties"]
    assert "_meta" not in tools["refund"]
    assert said[:2] == ["v1.10 charged 5 EUR", "v1.9 charged 5"]
    assert "has no version '7'" in said[2]


async def test_an_exposed_version_is_listed_until_the_newest_is_asked_for_again() -> None:
    server = payments()
    server.expose_version("charge", "1.9")
    tools, said = await tools_and_calls(server, LEGACY[-1], {"name": "charge", "arguments": {"amount": 1}})
    assert tools["charge"]["_meta"][VERSION_META] == "1.9" and said == ["v1.9 charged 1"]
    server.expose_version("charge", None)
    tools, _ = await tools_and_calls(server, LEGACY[-1])
    assert tools["charge"]["_meta"][VERSION_META] == "1.10"
    with pytest.raises(KeyError):
        server.expose_version("charge", "3")


async def test_the_client_asks_for_a_version_through_meta() -> None:
    async with Client(payments()) as client:
        result = await client.call_tool("charge", {"amount": 2}, meta={VERSION_META: "1.9"})
    assert result.content[0].text == "v1.9 charged 2"


async def test_a_disabled_or_removed_tool_is_unknown_whatever_version_is_asked() -> None:
    server = payments()
    server.disable_tool("charge")
    _, said = await tools_and_calls(
        server, MODERN, {"name": "charge", "arguments": {"amount": 1}, "_meta": {VERSION_META: "1.9"}}
    )
    assert said == ["Unknown tool: charge"]
    server.remove_tool("charge")
    assert server.tool_versions.all("charge") == []


def test_versions_are_checked_and_ordered() -> None:
    server = payments()
    with pytest.raises(ValueError, match=r"version '1\.9' already"):
        server.add_tool(lambda amount: amount, name="charge", version="1.9")
    with pytest.raises(ValueError, match="without a version"):
        server.add_tool(lambda amount: amount, name="refund", version="2")
    with pytest.raises(ValueError, match="already registered"):
        server.add_tool(lambda amount: amount, name="charge")
    with pytest.raises(ValueError, match="non-empty string"):
        server.add_tool(lambda: None, name="x", version="")
    assert sorted(["2", "1.10", "1.9", "1.9b", "10"], key=version_order) == ["1.9", "1.9b", "1.10", "2", "10"]
