"""The client the official MCP conformance suite drives, built on toolwire's ``Client``.

    python examples/conformance_client.py URL

The suite starts it once per client scenario, with the scenario's name in
``MCP_CONFORMANCE_SCENARIO``, the protocol version to speak in
``MCP_CONFORMANCE_PROTOCOL_VERSION`` and, for some scenarios, details in
``MCP_CONFORMANCE_CONTEXT`` (JSON). It connects, lists the tools and does what the scenario
asks; any error exits non-zero. ``scripts/conformance.sh`` runs it; see docs/conformance.md.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from toolwire.auth.client.authorize import follow_redirect
from toolwire.auth.client.id_jag import IdJagExchange
from toolwire.auth.client.oauth import OAuth
from toolwire.client import Client


async def answer_with_defaults(params: dict[str, Any]) -> dict[str, Any]:
    """Accept every form, filled in with the defaults its schema gives."""
    properties = (params.get("requestedSchema") or {}).get("properties") or {}
    content = {name: schema["default"] for name, schema in properties.items() if "default" in schema}
    return {"action": "accept", "content": content}


async def sample(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "A sampled answer."}, "model": "toolwire-test"}


ROOTS = [{"uri": "file:///tmp/conformance", "name": "Conformance"}]


async def tools_call(client: Client) -> None:
    await client.call_tool("add_numbers", {"a": 5, "b": 3}, raise_on_error=True)


async def elicitation_defaults(client: Client) -> None:
    await client.call_tool("test_client_elicitation_defaults", {})


async def sse_retry(client: Client) -> None:
    await client.call_tool("test_reconnection", {})


async def schema_preservation(client: Client) -> None:
    tools = {tool.name: tool for tool in await client.list_tools()}
    schema = tools["json_schema_2020_12_tool"].raw["inputSchema"]
    await client.call_tool("json_schema_echo", {"schema": schema})


async def request_state(client: Client) -> None:
    for name in ("test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type"):
        await client.call_tool(name, {})


async def standard_headers(client: Client) -> None:
    for tool in await client.list_tools():
        await client.call_tool(tool.name, {})
    for resource in await client.list_resources():
        await client.read_resource(resource.uri)
    for prompt in await client.list_prompts():
        await client.get_prompt(prompt.name, {})


async def custom_headers(client: Client) -> None:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    for call in context.get("toolCalls") or []:
        await client.call_tool(call["name"], call.get("arguments") or {})


async def invalid_tool_headers(client: Client) -> None:
    listed = {tool.name for tool in await client.list_tools()}
    if "valid_tool" in listed:
        await client.call_tool("valid_tool", {"region": "us-west1"})


async def call_every_tool(client: Client) -> None:
    """The authorization scenarios: calls may need more scopes than listing (step-up)."""
    for tool in await client.list_tools():
        await client.call_tool(tool.name, {})


async def list_skills(client: Client) -> None:
    """What a host does on connecting: learn the skills' names, read none of their files."""
    await client.list_skills()


async def load_first_skill(client: Client) -> None:
    """What a host does when the model asks for a skill: read its SKILL.md, verified, then
    the files it lists. A read that fails verification raises, and nothing more is read."""
    skills = await client.list_skills()
    loaded = await client.load_skill(skills[0])
    for listed in loaded.entry.files or []:
        if listed.uri != loaded.entry.uri:
            await client.read_skill_file(loaded.entry, listed.uri)


SCENARIOS: dict[str, Callable[[Client], Awaitable[None]]] = {
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "json-schema-2020-12-preservation": schema_preservation,
    "sep-2322-client-request-state": request_state,
    "http-standard-headers": standard_headers,
    "http-custom-headers": custom_headers,
    "http-invalid-tool-headers": invalid_tool_headers,
    "sep-2640-client-no-prefetch": list_skills,
    "sep-2640-client-verify-digest": load_first_skill,
    "sep-2640-client-verify-size": load_first_skill,
    "sep-2640-client-verify-frontmatter": load_first_skill,
}


def authorization(scenario: str) -> OAuth | None:
    """OAuth for the authorization scenarios: the suite's authorization server redirects at
    once (no person), and the context names pre-registered credentials when there are some."""
    if not scenario.startswith("auth/"):
        return None
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    options: dict[str, Any] = {"authorize": follow_redirect, "redirect_uri": REDIRECT}
    if context.get("client_id"):
        options.update(client_id=context["client_id"], client_secret=context.get("client_secret"))
    if context.get("private_key_pem"):
        options.update(
            private_key=context["private_key_pem"], signing_algorithm=context.get("signing_algorithm", "ES256")
        )
    if scenario.startswith("auth/client-credentials"):
        options["grant"] = "client_credentials"
    if "valid_jwt" in context:  # workload identity federation
        options.update(grant="jwt_bearer", assertion=context["valid_jwt"])
    if "idp_id_token" in context:  # enterprise-managed authorization
        exchange = IdJagExchange(context["idp_token_endpoint"], context["idp_id_token"], context["idp_client_id"])
        options.update(grant="jwt_bearer", assertion=exchange)
    return OAuth(client_metadata_url=CLIENT_METADATA_URL, **options)


REDIRECT = "http://localhost:3000/callback"
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


async def main(url: str) -> None:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    version = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") or None
    async with Client(
        url,
        auth=authorization(scenario),
        protocol=version,
        name="toolwire-conformance-client",
        elicitation=answer_with_defaults,
        sampling=sample,
        roots=ROOTS,
        timeout=20,
    ) as client:
        await client.list_tools()
        action = SCENARIOS.get(scenario, call_every_tool if scenario.startswith("auth/") else None)
        if action is not None:
            await action(client)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: conformance_client.py URL")
    asyncio.run(main(sys.argv[-1]))
