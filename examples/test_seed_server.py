"""Tests of the seed server, as a server author writes them: copy this file next to your
server and change the import and the calls.

    pip install pytest pytest-asyncio
    pytest examples/test_seed_server.py

Each test runs twice: once over 2025-11-25 (the handshake era), once over 2026-07-28.
"""

from __future__ import annotations

import pytest
from seed_server import server

from toolwire.client import Client, ServerError
from toolwire.testing import client_fixture

client = client_fixture(server)


@pytest.mark.asyncio
async def test_the_calculator_adds(client: Client) -> None:
    result = await client.call_tool("calculator", {"operation": "add", "a": 2, "b": 3})
    assert result.text == "5"  # structured content too: 5, or {"result": 5} before 2026-07-28


@pytest.mark.asyncio
async def test_dividing_by_zero_is_a_tool_error_the_model_can_read(client: Client) -> None:
    result = await client.call_tool("calculator", {"operation": "divide", "a": 1, "b": 0})
    assert result.is_error and result.text == "Cannot divide by zero"


@pytest.mark.asyncio
async def test_a_bad_argument_is_refused_before_the_tool_runs(client: Client) -> None:
    try:
        result = await client.call_tool("calculator", {"operation": "power", "a": 2, "b": 3})
    except ServerError as refused:  # versions before 2025-11-25 refuse with -32602
        assert refused.code == -32602
    else:  # 2025-11-25 and later: an isError result naming the problem
        assert result.is_error and "operation" in result.text


@pytest.mark.asyncio
async def test_the_tools_are_listed_with_their_schemas(client: Client) -> None:
    tools = {tool.name: tool for tool in await client.list_tools()}
    assert tools["calculator"].input_schema["required"] == ["operation", "a", "b"]
    assert tools["calculator"].hint("readOnlyHint")
