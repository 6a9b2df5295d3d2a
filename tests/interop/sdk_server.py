"""An MCP server built with the official Python SDK (``mcp``), for toolwire's Client to talk to.

Run as ``python tests/interop/sdk_server.py``: ``MCPServer.run()`` serves stdio in the era the
client opens with (``server/discover`` with a 2026-07-28 ``_meta``: modern; ``initialize``:
legacy). Elicitation and sampling go through the SDK's resolvers, which send requests to the
client in legacy versions and return an ``InputRequiredResult`` in 2026-07-28. Resources,
a resource template, prompts and completion are declared with ``@server.resource``,
``@server.prompt`` and ``@server.completion``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.server.mcpserver.prompts.base import AssistantMessage, UserMessage
from mcp.server.mcpserver.resolve import Elicit, Resolve, Sample
from mcp.server.mcpserver.utilities.types import Image
from mcp_types import (
    Completion,
    CompletionArgument,
    CompletionContext,
    CreateMessageResult,
    EmbeddedResource,
    PromptReference,
    ResourceTemplateReference,
    SamplingMessage,
    TextContent,
    TextResourceContents,
)
from pydantic import BaseModel

#: Only critical records reach stderr: the SDK logs each failed request with a rich traceback,
#: which takes it about a second to render.
server = MCPServer("sdk-interop", version="9.8.7", instructions="Tools for interop tests.", log_level="CRITICAL")


class Weather(BaseModel):
    city: str
    celsius: float


class Name(BaseModel):
    name: str


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers (the SDK wraps the integer as {"result": ...})."""
    return a + b


@server.tool()
def weather(city: str) -> Weather:
    """A structured (object) result."""
    return Weather(city=city, celsius=21.5)


@server.tool()
async def countdown(n: int, ctx: Context) -> str:
    """Count down, reporting progress at each step."""
    for i in range(n):
        await ctx.report_progress(i + 1, n, f"{n - i - 1} left")
    return "liftoff"


@server.tool()
def fail() -> str:
    """Always fails with a tool execution error."""
    raise ToolError("the external API is down")


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@server.tool()
def greet(who: Annotated[Name, Resolve(ask_name)]) -> str:
    """Ask the user's name (elicitation), then greet them."""
    return f"Hello, {who.name}!"


def ask_model(topic: str) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=f"Summarize {topic}"))
    return Sample([message], max_tokens=50)


@server.tool()
def summarize(topic: str, reply: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Ask the client's model (sampling)."""
    assert isinstance(reply.content, TextContent)
    return f"summary of {topic}: {reply.content.text}"


@server.tool()
async def slow(seconds: float, marker: str = "") -> str:
    """Sleep; if cancelled first, write ``cancelled`` to the file ``marker``."""
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        if marker:
            Path(marker).write_text("cancelled")
        raise
    return "done"


@server.tool()
async def unlock(ctx: Context) -> str:
    """Add the tool ``secret`` and announce that the tool list changed, as each era does."""
    server.add_tool(lambda: "psst", name="secret")
    if ctx.protocol_version == "2026-07-28":
        await ctx.notify_tools_changed()  # to subscriptions/listen streams
    else:
        await ctx.session.send_tool_list_changed()
    return "unlocked"


@server.tool()
async def chatty(ctx: Context) -> str:
    """Log at info and debug level (the SDK deprecates logging as of 2026-07-28)."""
    await ctx.info("hello from the SDK")
    await ctx.debug("too quiet")
    return "said"


@server.tool()
def crash() -> str:
    """The server process dies in the middle of the call."""
    os._exit(3)


@server.tool()
def lying(city: str) -> Weather:
    """Its structuredContent is replaced on the wire by one that breaks its outputSchema."""
    return Weather(city=city, celsius=0)


@server.tool()
def mute(city: str) -> Weather:
    """Its structuredContent is removed on the wire, although it lists an outputSchema."""
    return Weather(city=city, celsius=0)


async def tamper(ctx: Any, call_next: Any) -> Any:
    """Make ``lying`` and ``mute`` misbehave as a buggy server would (the SDK itself won't)."""
    result = await call_next(ctx)
    name = (ctx.params or {}).get("name") if ctx.method == "tools/call" else None
    if name == "lying":
        result["structuredContent"] = {"city": 5}
    elif name == "mute":
        result.pop("structuredContent", None)
    return result


server.middleware.append(tamper)

#: A 1x1 PNG, served as a binary resource and shown in a prompt.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)
BOOKS = {"1": "Dune", "2": "Emma", "10": "Beloved"}
LANGUAGES = ["python", "rust", "typescript"]


@server.resource("interop://readme", title="Read me", mime_type="text/markdown")
def readme() -> str:
    """How to use the interop server."""
    return "# Interop\nRead books by id."


@server.resource("interop://logo", mime_type="image/png")
def logo() -> bytes:
    return PNG


@server.resource("interop://books/{id}", mime_type="text/plain")
def book(id: str) -> str:
    """A book's title by its id."""
    if id not in BOOKS:
        raise ResourceNotFoundError(f"no book {id}")
    return BOOKS[id]


@server.prompt(title="Review code")
def review(code: str, language: str = "python") -> list[UserMessage | AssistantMessage]:
    """Ask for a code review."""
    return [UserMessage(f"Review this {language} code:\n{code}"), AssistantMessage("Here is my review:")]


@server.prompt()
def cover() -> list[Any]:
    """An image and an embedded resource."""
    note = TextResourceContents(uri="interop://readme", mime_type="text/markdown", text="# Interop")
    return [Image(data=PNG, format="png"), EmbeddedResource(type="resource", resource=note), "What is this?"]


@server.completion()
async def complete(
    ref: PromptReference | ResourceTemplateReference, argument: CompletionArgument, context: CompletionContext | None
) -> Completion | None:
    """Languages for the prompt ``review``, book ids for the template ``interop://books/{id}``."""
    if isinstance(ref, PromptReference) and ref.name == "review" and argument.name == "language":
        found = [name for name in LANGUAGES if name.startswith(argument.value)]
        return Completion(values=found, total=len(found), has_more=False)
    if isinstance(ref, ResourceTemplateReference) and ref.uri == "interop://books/{id}" and argument.name == "id":
        found = [key for key in BOOKS if key.startswith(argument.value)]
        return Completion(values=found, total=len(found), has_more=False)
    return None


@server.tool()
async def touch(uri: str, ctx: Context) -> str:
    """Publish that a resource changed, to the ``subscriptions/listen`` streams naming it
    (2026-07-28). MCPServer serves no legacy ``resources/subscribe``, so it keeps no legacy
    subscribers to tell."""
    await ctx.notify_resource_updated(uri)
    return "touched"


if __name__ == "__main__":
    server.run()
