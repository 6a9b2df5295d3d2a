"""A server whose view is written with the official MCP Apps SDK: the ``App`` class of npm's
``@modelcontextprotocol/ext-apps`` (tests/interop/node), its self-contained browser bundle
inlined in the page (the view may load nothing from outside). For tests/cli/test_dev.py:
``toolwire dev`` hosts a view the SDK drives, and the view calls an app-only tool."""

import re
from pathlib import Path

from toolwire import Server
from toolwire.apps import App

BUNDLE = (
    Path(__file__).resolve().parents[1]
    / "interop/node/node_modules/@modelcontextprotocol/ext-apps/dist/src/app-with-deps.js"
).read_text()
#: The bundle's own name for the class it exports as ``App`` (an inline module exports to no one).
APP_CLASS = re.findall(r"\b([\w$]+) as App\b", BUNDLE.rsplit("export{", 1)[1])[0]

USE = """
const app = new APP_CLASS({ name: "sdk-view", version: "1.0.0" });
app.ontoolinput = (params) => {
  document.getElementById("input").textContent = "input: " + JSON.stringify(params.arguments);
};
app.ontoolresult = (result) => {
  document.getElementById("result").textContent = "result: " + result.content[0].text;
};
await app.connect();
document.getElementById("host").textContent = "host: " + app.getHostVersion().name;
document.getElementById("double").addEventListener("click", async () => {
  const answer = await app.callServerTool({ name: "double", arguments: { n: 21 } });
  document.getElementById("doubled").textContent = "doubled: " + answer.content[0].text;
});
""".replace("APP_CLASS", APP_CLASS)

PAGE = (
    '<!doctype html><html><head><meta charset="utf-8"><title>SDK view</title></head><body>'
    '<p id="host"></p><p id="input"></p><p id="result"></p>'
    '<button id="double">double 21</button><p id="doubled"></p>'
    f'<script type="module">{BUNDLE}\n{USE}</script></body></html>'
)

server = Server("sdk-app-view")
view = App("ui://sdk-app-view/view.html", html=PAGE, name="SDK view")


@server.tool(app=view)
def greet(name: str) -> str:
    """Greets someone, in a view where the host shows one."""
    return f"hello {name}"


@server.tool(app=view.visible_to("app"))
def double(n: int) -> str:
    """Doubles a number (for the view only)."""
    return str(2 * n)
