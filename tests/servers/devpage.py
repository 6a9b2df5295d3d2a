"""A server for the inspector's browser tests (tests/cli/test_dev.py): progress (slow, and a
fast burst), an image, a question, a tool that prints and fails, and a hostile tool whose
name, description and result carry HTML and script."""

from __future__ import annotations

import asyncio
import base64

from toolwire import Context, Server, image

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)

server = Server("devpage", "1.0.0")


@server.tool
async def count(to: int, ctx: Context) -> str:
    """Counts slowly, reporting progress."""
    for step in range(1, to + 1):
        await asyncio.sleep(0.15)
        await ctx.report_progress(step, to, f"step {step} of {to}")
    return f"counted to {to}"


@server.tool
async def burst(times: int, ctx: Context) -> str:
    """Reports progress ``times`` times as fast as it can, as a quick tool over a large file does."""
    for step in range(1, times + 1):
        await ctx.report_progress(step, times, f"chunk {step}")
    return f"{times} chunks"


def tenth(x: int) -> int:
    return 10 // x


@server.tool
def divide(x: int) -> int:
    """Prints, then fails in a helper when ``x`` is 0."""
    print(f"dividing 10 by {x}")
    return tenth(x)


@server.tool
def picture() -> object:
    """A tiny picture."""
    return image(PNG, mime_type="image/png")


@server.tool
async def ask_name(ctx: Context) -> str:
    """Asks the user's name."""
    answer = await ctx.elicit("What is your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"Hello, {(answer.content or {}).get('name')}"


@server.tool
async def haiku(topic: str, ctx: Context) -> str:
    """Asks the client's model for a haiku."""
    reply = await ctx.sample(f"A haiku about {topic}", max_tokens=60)
    return f"the model wrote: {reply['content']['text']}"


VIEW = """<!doctype html>
<html><head><title>counter view</title></head><body>
<p id="input">waiting</p><p id="result"></p>
<button id="again">count to 2</button><p id="again-result"></p>
<script>
let next = 1;
const pending = {};
function request(method, params) {
  const id = next++;
  parent.postMessage({jsonrpc: "2.0", id, method, params}, "*");
  return new Promise((resolve, reject) => { pending[id] = {resolve, reject}; });
}
window.addEventListener("message", (event) => {
  const m = event.data;
  if (m.id !== undefined && pending[m.id]) {
    const waiting = pending[m.id];
    delete pending[m.id];
    if (m.error) { waiting.reject(m.error); } else { waiting.resolve(m.result); }
    return;
  }
  if (m.method === "ui/notifications/tool-input") {
    document.getElementById("input").textContent = "input: " + JSON.stringify(m.params.arguments);
  }
  if (m.method === "ui/notifications/tool-result") {
    document.getElementById("result").textContent = "result: " + m.params.content[0].text;
  }
});
document.getElementById("again").onclick = async () => {
  const answer = await request("tools/call", {name: "count", arguments: {to: 2}});
  document.getElementById("again-result").textContent = "again: " + answer.content[0].text;
};
request("ui/initialize", {protocolVersion: "2025-06-18", appCapabilities: {}, clientInfo: {name: "counter", version: "1"}})
  .then(() => parent.postMessage({jsonrpc: "2.0", method: "ui/notifications/initialized", params: {}}, "*"));
</script>
</body></html>
"""


@server.resource("ui://devpage/counter", mime_type="text/html;profile=mcp-app")
def counter_view() -> str:
    """The interactive view of show_counter (MCP Apps)."""
    return VIEW


@server.tool(meta={"ui": {"resourceUri": "ui://devpage/counter"}})
def show_counter(start: int) -> str:
    """Shows a counter in an interactive view."""
    return f"started at {start}"


@server.tool(title="<script>window.__pwned = 1</script>")
def hostile() -> str:
    """<img src=x onerror="window.__pwned = 2"> a description with HTML in it."""
    return "<script>window.__pwned = 3</script><b>bold?</b>"
