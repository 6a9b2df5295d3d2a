"""Every kind of token a server hands out and takes back: tools listed two to a page, a tool
that asks (2026-07-28 ``requestState``), tasks listed two to a page, and the skills of the
folder ``HANDED_OUT_SKILLS`` names (``skills/list`` cursors past fifty of them)."""

import os

from toolwire import Context, Server

server = Server("handed-out", page_size=2, state_key=b"k" * 32)

for number in range(5):

    def tool(text: str) -> str:
        return text

    server.tool(tool, name=f"tool_{number}", description=f"Tool number {number}.")


@server.tool
async def ask(ctx: Context) -> str:
    """Asks the user's name, then says hello."""
    answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"Hello, {(answer.content or {}).get('name')}"


@server.tool(task=True)
async def job() -> str:
    """A task that is done at once."""
    return "done"


if os.environ.get("HANDED_OUT_SKILLS"):
    server.add_skills(os.environ["HANDED_OUT_SKILLS"])
