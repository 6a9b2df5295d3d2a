"""The Host and MCP Apps: a tool only a view may call (``_meta.ui.visibility: ["app"]``) is
never handed to the model, in the first request or after the list changes; the host can
still call it, as it would for a view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.httpserve import fresh_server
from tests.support.model_server import ModelServer, Reply
from toolwire.host import Host, ServerSpec
from toolwire.host.providers import OpenAIProvider

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "apps_server.py")


@pytest.fixture
def model() -> Any:
    with ModelServer() as server:
        yield server


def sent(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools", [])]


async def test_an_app_only_tool_is_kept_from_the_model_and_stays_callable(model: ModelServer) -> None:
    model.script(Reply(text="Started."), Reply(text="Still here."))
    server = fresh_server(EXAMPLE)
    provider = OpenAIProvider("deepseek-chat", api_key="test", base_url=model.openai_url, max_retries=0)
    async with Host([ServerSpec("polls", server)], provider=provider) as host:
        assert [tool.name for tool in host.tools] == ["start_poll", "poll_results"]
        conversation = host.conversation()
        async for _ in conversation.send("start a poll"):
            pass
        await host.call("polls", "start_poll", {"question": "Q", "options": ["a", "b"]})
        voted = await host.call("polls", "vote", {"question": "Q", "option": "a"})  # as a view would
        assert voted.structured == {"question": "Q", "tallies": {"a": 1, "b": 0}}

        @server.tool
        def added() -> str:
            """Added later."""
            return "new"

        async for _ in conversation.send("and now?"):
            pass
    first, second = model.requests
    assert "vote" not in sent(first) and {"start_poll", "poll_results"} <= set(sent(first))
    assert "vote" not in sent(second) and "added" in sent(second)
