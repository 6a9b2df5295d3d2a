"""An extension whose handlers misbehave (results JSON cannot carry, a plain function that
blocks until released) and a list guard that spoils a page so, for
tests/server/test_hostile_extensions.py."""

from __future__ import annotations

import threading
from typing import Any

from toolwire import Extension, MethodCall, Server, method
from toolwire.guards import Call, Next, lists_too

HOSTILE = "com.example/hostile"


def _self_holding() -> dict[str, Any]:
    loop: dict[str, Any] = {}
    loop["self"] = loop
    return loop


def _deep(levels: int) -> dict[str, Any]:
    nested: dict[str, Any] = {}
    for _ in range(levels):
        nested = {"x": nested}
    return nested


#: What each ``hostile/result`` ``kind`` returns: objects JSON cannot carry.
UNSENDABLE: dict[str, Any] = {
    "set": lambda: {"value": {1, 2}},
    "big_int": lambda: {"value": 2**70},
    "bytes": lambda: {"value": b"\x00\xff"},
    "object": lambda: {"value": object()},
    "self_holding": _self_holding,
    "deep": lambda: _deep(5_000),
    "int_key": lambda: {"value": {1: "one"}},
}

released = threading.Event()


class Hostile(Extension):
    id = HOSTILE

    @method("hostile/result", declared=False)
    async def result(self, call: MethodCall) -> Any:
        return UNSENDABLE[call.params["kind"]]()

    @method("hostile/plain_result", declared=False)
    def plain_result(self, call: MethodCall) -> Any:
        return UNSENDABLE[call.params["kind"]]()

    @method("hostile/block", declared=False)
    def block(self, call: MethodCall) -> dict[str, Any]:
        """A plain function that says it runs, then blocks until ``hostile/release`` (a
        minute at most)."""
        call.notify("notifications/hostile/blocking", {})
        return {"released": released.wait(60)}

    @method("hostile/release", declared=False)
    async def release(self, call: MethodCall) -> dict[str, Any]:
        released.set()
        return {}


class BrokenInstall(Extension):
    """Puts a method, a tool, a resource, a guard and tool fields in place, then fails."""

    id = "com.example/broken"

    @method("broken/hello", declared=False)
    async def hello(self, call: MethodCall) -> dict[str, Any]:
        return {}

    def install(self, server: Server) -> None:
        super().install(server)
        server.add_tool(lambda: "left over", name="left_over")
        server.add_resource("data://left-over", lambda: "left over")
        server.use(lambda call, next: next())
        raise RuntimeError("the install failed half-way")

    def tool_definition(self, tool: Any) -> dict[str, Any] | None:
        return {"_meta": {"com.example/broken": True}}


class Grabby(Extension):
    """Would answer ``tools/call`` itself."""

    id = "com.example/grabby"

    @method("tools/call")
    async def call_tool(self, call: MethodCall) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "grabbed"}]}


@lists_too
async def spoil_lists(call: Call, next: Next) -> Any:
    """A guard that, asked by a list request whose ``_meta`` says ``spoil``, puts a set in
    the page (what JSON cannot carry)."""
    result = await next(call)
    meta = call.request.params.get("_meta")
    if call.name is None and type(meta) is dict and meta.get("spoil"):
        result = {**result, "spoiled": {1, 2}}
    return result


server = Server("hostile-extension", guards=[spoil_lists])


@server.tool
def echo(text: str) -> str:
    """Say it back."""
    return text


server.add_extension(Hostile())
#: What adding the two others raised (each left nothing of itself).
REFUSED = []
for extension in (BrokenInstall(), Grabby()):
    try:
        server.add_extension(extension)
    except (RuntimeError, ValueError) as exc:
        REFUSED.append(str(exc))
