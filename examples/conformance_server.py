"""The server the official MCP conformance suite is run against, built with toolwire's public
API: every tool, resource, prompt and completion its server scenarios expect, for the
2025-11-25 wire and the 2026-07-28 wire at once, and the skills of ``conformance_skills/``
beside it (the skills extension's scenarios).

    python examples/conformance_server.py [PORT]      # http://127.0.0.1:PORT/mcp (default 3001)

``scripts/conformance.sh`` starts it and runs the suite; see docs/conformance.md.
"""

from __future__ import annotations

import asyncio
import base64
import sys
from pathlib import Path
from typing import Any

from toolwire import (
    Context,
    ProtocolError,
    Server,
    ToolError,
    audio,
    embedded_resource,
    image,
    text,
    user_message,
)

#: A 1x1 PNG and a tiny WAV file.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = base64.b64decode("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")

server = Server("toolwire-conformance", "1.0.0", instructions="The toolwire server the MCP conformance suite checks.")


# -- tools, both wires -------------------------------------------------------------------------


@server.tool
def test_simple_text() -> str:
    """Returns a simple text response."""
    return "This is a simple text response for testing."


@server.tool
def test_image_content() -> Any:
    """Returns an image."""
    return image(PNG, mime_type="image/png")


@server.tool
def test_audio_content() -> Any:
    """Returns audio."""
    return audio(WAV, mime_type="audio/wav")


@server.tool
def test_embedded_resource() -> Any:
    """Returns an embedded resource."""
    return embedded_resource(
        "test://embedded-resource", text="This is an embedded resource content.", mime_type="text/plain"
    )


@server.tool
def test_multiple_content_types() -> list[Any]:
    """Returns text, an image and an embedded resource."""
    return [
        text("Multiple content types test:"),
        image(PNG, mime_type="image/png"),
        embedded_resource(
            "test://mixed-content-resource", text='{"test":"data","value":123}', mime_type="application/json"
        ),
    ]


@server.tool
def test_error_handling() -> str:
    """Always fails, as an execution error the model can read."""
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress three times."""
    for step, progress in enumerate((0, 50, 100)):
        if step:
            await asyncio.sleep(0.05)
        ctx.report_progress(progress, 100)
    return "Progress test completed"


@server.tool
async def test_tool_with_logging(ctx: Context) -> str:
    """Logs three messages while it works."""
    for step, message in enumerate(("Tool execution started", "Tool processing data", "Tool execution completed")):
        if step:
            await asyncio.sleep(0.05)
        ctx.info(message)
    return "Logging test completed"


@server.tool
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's model."""
    answer = await ctx.sample(prompt, max_tokens=100)
    content = answer.get("content") or {}
    return f"LLM response: {content.get('text', '') if isinstance(content, dict) else content}"


@server.tool
async def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the user for a name and an email address."""
    schema = {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    }
    answer = await ctx.elicit(message, schema)
    return f"User response: action={answer.action}, content={answer.content}"


@server.tool
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Asks the user, with a default for every field."""
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": True},
        },
    }
    answer = await ctx.elicit("Please review and update the form fields with defaults", schema)
    return f"Elicitation completed: action={answer.action}, content={answer.content}"


@server.tool
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Asks the user to pick from enums of every kind."""
    schema = {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {
                "type": "string",
                "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"},
                ],
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"},
                    ]
                },
            },
        },
    }
    answer = await ctx.elicit("Please select options from the enum fields", schema)
    return f"Elicitation completed: action={answer.action}, content={answer.content}"


@server.raw_tool(
    "json_schema_2020_12_tool",
    description="Tool with JSON Schema 2020-12 features",
    input_schema={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": False,
    },
)
def json_schema_2020_12_tool(arguments: dict[str, Any]) -> str:
    return f"Received: {arguments}"


@server.tool
async def test_reconnection(ctx: Context) -> str:
    """Closes its response stream mid-call; the answer reaches the client when it resumes."""
    await ctx.close_stream()
    await asyncio.sleep(0.2)
    return "Reconnection test completed"


# -- tools, 2026-07-28 wire ----------------------------------------------------------------------


@server.tool
async def test_missing_capability(ctx: Context) -> str:
    """Needs sampling: refused with -32021 when the client does not offer it."""
    answer = await ctx.sample("Say something", max_tokens=10)
    return str(answer.get("content"))


@server.tool
async def test_streaming_elicitation(ctx: Context) -> str:
    """Asks the user (through an InputRequiredResult on 2026-07-28)."""
    answer = await ctx.elicit("Please confirm", {"type": "object", "properties": {"ok": {"type": "boolean"}}})
    return f"Confirmed: {answer.content}"


@server.tool
def test_logging_tool(ctx: Context) -> str:
    """Logs once (only clients that asked for a log level hear it)."""
    ctx.info("A log message")
    return "Logged"


@server.tool
def test_trigger_tool_change() -> str:
    """Adds or removes a tool: subscribers hear that the list changed."""
    if "test_dynamic_tool" in server.registry:
        server.remove_tool("test_dynamic_tool")
    else:
        server.add_tool(lambda: "dynamic", name="test_dynamic_tool", description="Appears and disappears.")
    return "Tool list changed"


@server.tool
def test_trigger_prompt_change() -> str:
    """Adds or removes a prompt: subscribers hear that the list changed."""
    if "test_dynamic_prompt" in server.prompts:
        server.remove_prompt("test_dynamic_prompt")
    else:
        server.add_prompt(lambda: "dynamic", name="test_dynamic_prompt", description="Appears and disappears.")
    return "Prompt list changed"


NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@server.tool
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks the user's name, then greets them."""
    answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
    return f"Hello, {(answer.content or {}).get('name')}!"


@server.tool
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's model a question."""
    answer = await ctx.sample("What is the capital of France?", max_tokens=100, key="capital_question")
    return f"The model says: {(answer.get('content') or {}).get('text')}"


@server.tool
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Asks the client for its roots."""
    roots = await ctx.list_roots(key="client_roots")
    return "Roots: " + ", ".join(root["uri"] for root in roots)


@server.tool
async def test_input_required_result_request_state(ctx: Context) -> str:
    """Asks for a confirmation, carrying state between the rounds."""
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    answer = await ctx.elicit("Please confirm", schema, key="confirm")
    return "state-ok" if (answer.content or {}).get("ok") else "not confirmed"


@server.tool
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Asks the user, the model and the roots in one round."""
    name, greeting, roots = await ctx.ask_all(
        ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name"),
        ctx.sample("Generate a greeting", max_tokens=50, key="greeting"),
        ctx.list_roots(key="client_roots"),
    )
    return f"{(greeting.get('content') or {}).get('text')} {(name.content or {}).get('name')} ({len(roots)} roots)"


@server.tool
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Asks two questions, one round each."""
    first = await ctx.elicit("Step 1: What is your name?", NAME_SCHEMA, key="step1")
    color = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
    second = await ctx.elicit("Step 2: What is your favorite color?", color, key="step2")
    return f"{(first.content or {}).get('name')} likes {(second.content or {}).get('color')}"


@server.tool
async def test_input_required_result_tampered_state(ctx: Context) -> str:
    """Asks a question; a retry whose requestState was altered is refused."""
    answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
    return f"Hello, {(answer.content or {}).get('name')}!"


@server.tool
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks only what the client can answer: the model, never the user when it cannot elicit."""
    if "elicitation" in ctx.client_capabilities:
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
        return f"Hello, {(answer.content or {}).get('name')}!"
    sampled = await ctx.sample("Pick a name", max_tokens=20, key="name_suggestion")
    return f"Hello, {(sampled.get('content') or {}).get('text')}!"


@server.raw_tool(
    "test_x_mcp_header",
    description="Mirrors its region parameter into the Mcp-Param-Region header.",
    input_schema={
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "query": {"type": "string"}},
        "required": ["region"],
    },
)
def test_x_mcp_header(arguments: dict[str, Any]) -> str:
    return f"Region: {arguments['region']}"


# -- resources -----------------------------------------------------------------------------------


# -- tasks (the 2026-07-28 tasks extension; 2025-11-25 clients call them with "task") --------


@server.tool
def greet(name: str) -> str:
    """Greets someone, at once (never a task)."""
    return f"Hello, {name}!"


@server.tool(task=True)
async def slow_compute(seconds: float, label: str = "") -> str:
    """Waits ``seconds``, then reports; runs as a task for clients that take one."""
    await asyncio.sleep(seconds)
    return f"Computed {label or 'result'} after {seconds:g} s"


@server.tool(task="required")
async def failing_job() -> str:
    """A job that fails after a second (a tool error: the task still completes)."""
    await asyncio.sleep(1)
    raise ToolError("The job failed: the input could not be processed")


@server.tool(task=True)
async def protocol_error_job() -> str:
    """A job that ends with a JSON-RPC error (the task fails)."""
    await asyncio.sleep(0.2)
    raise ProtocolError(-32603, "Internal error: the job's backend is unavailable")


CONFIRM_SCHEMA = {"type": "object", "properties": {"confirm": {"type": "boolean"}}}


@server.tool(task=True)
async def confirm_delete(filename: str, ctx: Context) -> str:
    """Asks before deleting ``filename`` (the task waits for the answer)."""
    answer = await ctx.elicit(f"Delete {filename}?", CONFIRM_SCHEMA)
    confirmed = answer.accepted and (answer.content or {}).get("confirm")
    return f"Deleted {filename}" if confirmed else f"Kept {filename}"


@server.tool(task=True)
async def multi_input(ctx: Context) -> str:
    """Asks two questions at once (both wait in the task together)."""
    name, confirmation = await ctx.ask_all(
        ctx.elicit("What is your name?", {"type": "object", "properties": {"name": {"type": "string"}}}),
        ctx.elicit("Proceed?", CONFIRM_SCHEMA),
    )
    return f"name={(name.content or {}).get('name')} confirm={(confirmation.content or {}).get('confirm')}"


@server.tool(task="required", defer_task=True)
async def test_tool_with_task(ctx: Context) -> str:
    """Asks the user's name in the request, then finishes as a task."""
    answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
    await ctx.start_task()
    await asyncio.sleep(0.2)
    return f"Hello, {(answer.content or {}).get('name')}, from a task!"


@server.resource("test://static-text", mime_type="text/plain", description="A static text resource")
def static_text() -> str:
    return "This is the content of the static text resource."


@server.resource("test://static-binary", mime_type="image/png", description="A static binary resource (a PNG)")
def static_binary() -> bytes:
    return PNG


@server.resource("test://watched-resource", mime_type="text/plain", description="A resource clients may watch")
def watched_resource() -> str:
    return "Watched resource content"


@server.resource(
    "test://template/{id}/data",
    mime_type="application/json",
    description="Data by id",
    complete={"id": ["1", "2", "3"]},
)
def template_data(id: str) -> str:
    return f'{{"id":"{id}","templateTest":true,"data":"Data for ID: {id}"}}'


# -- prompts -------------------------------------------------------------------------------------


@server.prompt
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@server.prompt(complete={"arg1": ["paris", "park", "party"], "arg2": ["first", "second"]})
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments.

    Args:
        arg1: First test argument
        arg2: Second test argument
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt
def test_prompt_with_embedded_resource(resourceUri: str) -> list[Any]:
    """A prompt that embeds a resource.

    Args:
        resourceUri: URI of the resource to embed
    """
    return [
        user_message(
            embedded_resource(resourceUri, text="Embedded resource content for testing.", mime_type="text/plain")
        ),
        user_message("Please process the embedded resource above."),
    ]


@server.prompt
def test_prompt_with_image() -> list[Any]:
    """A prompt with an image."""
    return [user_message(image(PNG, mime_type="image/png")), user_message("Please analyze the image above.")]


@server.prompt
async def test_input_required_result_prompt(ctx: Context) -> str:
    """A prompt that asks the user for context first."""
    schema = {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}
    answer = await ctx.elicit("What context should the prompt use?", schema, key="user_context")
    return f"Use this context: {(answer.content or {}).get('context')}"


# -- skills (SEP-2640) -------------------------------------------------------------------------

server.add_skills(Path(__file__).parent / "conformance_skills")


if __name__ == "__main__":
    server.run_http("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 3001)
