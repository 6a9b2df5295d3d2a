"""The public API is what ``toolwire.__all__`` says, every name in it resolves, and the
examples in the README and docs run."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import toolwire
from tests.support.helpers import open_peer

ROOT = Path(__file__).resolve().parents[2]

PUBLIC = {
    "LATEST",
    "SUPPORTED_VERSIONS",
    "CapabilityMissing",
    "Client",
    "ClientRequestFailed",
    "Content",
    "Context",
    "Elicitation",
    "Extension",
    "MethodCall",
    "method",
    "Param",
    "ProtocolError",
    "Server",
    "Tool",
    "ToolError",
    "ToolResult",
    "ToolwireError",
    "annotations",
    "audio",
    "embedded_resource",
    "image",
    "resource_link",
    "text",
    "Completion",
    "Prompt",
    "PromptResult",
    "Resource",
    "ResourceNotFound",
    "ResourceTemplate",
    "UriTemplate",
    "assistant_message",
    "resource_contents",
    "user_message",
}


def test_all_is_the_public_api() -> None:
    assert set(toolwire.__all__) == PUBLIC
    for name in toolwire.__all__:
        assert getattr(toolwire, name) is not None
    assert callable(toolwire.annotations)  # not the __future__ feature of the same name


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


async def run_example(source: str, tool: str, arguments: dict[str, object]) -> dict[str, object]:
    module = types.ModuleType("docs_example")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, "<docs>", "exec"), module.__dict__)
    server = module.server
    assert isinstance(server, toolwire.Server)
    peer = await open_peer(server, "2025-11-25")
    return await peer.call(tool, arguments)


async def test_readme_example_runs() -> None:
    [source] = python_blocks(ROOT / "README.md")
    ok = await run_example(source, "get_weather_data", {"location": "Paris"})
    assert ok["result"]["structuredContent"] == {"temperature": 22.5, "conditions": "Partly cloudy"}
    refused = await run_example(source, "get_weather_data", {"location": "Atlantis"})
    assert refused["result"]["isError"] is True


async def test_docs_index_example_runs() -> None:
    source = python_blocks(ROOT / "docs" / "index.md")[0]
    answer = await run_example(source, "greet", {"name": "Ada"})
    assert answer["result"]["content"][0]["text"] == "Hello, Ada!"


async def test_resources_and_prompts_docs_examples_run() -> None:
    resources_source = python_blocks(ROOT / "docs" / "resources.md")[0]
    module = types.ModuleType("docs_resources")
    exec(compile(resources_source, "<docs>", "exec"), module.__dict__)
    peer = await open_peer(module.server, "2026-07-28")
    read = await peer.request("resources/read", {"uri": "library://books/2"})
    assert read["result"]["contents"][0]["text"] == "Emma"
    assert (await peer.request("resources/read", {"uri": "library://books/3"}))["error"]["code"] == -32602
    assert (await peer.call("recommend"))["result"]["content"][0]["uri"] == "library://readme"

    first, second = python_blocks(ROOT / "docs" / "prompts.md")
    for source, name, arguments in [
        (first, "code_review", {"code": "x = 1"}),
        (second, "plan_trip", {"country": "it", "city": "rome"}),
    ]:
        module = types.ModuleType("docs_prompts")
        exec(compile(source, "<docs>", "exec"), module.__dict__)
        peer = await open_peer(module.server, "2025-11-25")
        got = await peer.request("prompts/get", {"name": name, "arguments": arguments})
        assert got["result"]["messages"][0]["role"] == "user"
    ref = {"type": "ref/prompt", "name": "plan_trip"}
    params = {"ref": ref, "argument": {"name": "city", "value": "r"}, "context": {"arguments": {"country": "it"}}}
    completion = (await peer.request("completion/complete", params))["result"]["completion"]
    assert completion == {"values": ["rome"], "total": 1, "hasMore": False}


HOST_PUBLIC = {
    "ApprovalNeeded",
    "ApprovalPolicy",
    "Approvals",
    "Change",
    "ConfigError",
    "Conversation",
    "Done",
    "ElicitationNeeded",
    "Event",
    "ExposedTool",
    "Failed",
    "Host",
    "HostServer",
    "ModelError",
    "ModelRequest",
    "ModelTurn",
    "Provider",
    "SamplingNeeded",
    "SandboxLimits",
    "SandboxUnavailable",
    "ServerSpec",
    "TextDelta",
    "ToolCallDecided",
    "ToolCallProposed",
    "ToolCallRequest",
    "ToolDeferral",
    "ToolProgress",
    "ToolResult",
    "ToolSpec",
    "ToolsChanged",
    "ToolsLoaded",
    "Usage",
    "Verdict",
    "load_config",
}


def test_the_hosts_public_api() -> None:
    import toolwire.host
    import toolwire.host.providers

    assert set(toolwire.host.__all__) == HOST_PUBLIC
    for name in toolwire.host.__all__:
        assert getattr(toolwire.host, name) is not None
    assert {"OpenAIProvider", "AnthropicProvider"} <= set(toolwire.host.providers.__all__)
