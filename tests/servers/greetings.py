"""A server offering an extension of its own (com.example/greetings), for the extension tests."""

from __future__ import annotations

from typing import Any

from toolwire import Extension, MethodCall, ProtocolError, Server, method

GREETINGS = "com.example/greetings"


class Greetings(Extension):
    id = GREETINGS

    def settings(self) -> dict[str, Any]:
        return {"languages": ["en", "fr"]}

    @method("greetings/hello")
    async def hello(self, call: MethodCall) -> dict[str, Any]:
        name = call.params.get("name")
        if type(name) is not str:
            raise ProtocolError(-32602, 'Invalid params: "name" must be a string')
        call.notify("notifications/greetings/said", {"to": name})
        return {"text": f"Hello, {name}", "declared": call.declared, "version": call.version}

    @method("greetings/count", declared=False)
    def count(self, call: MethodCall) -> dict[str, Any]:
        return {"count": 1}

    @method("greetings/broken")
    async def broken(self, call: MethodCall) -> dict[str, Any]:
        raise RuntimeError("the secret is 42")

    @method("greetings/wrong")
    async def wrong(self, call: MethodCall) -> Any:
        return ["not", "an", "object"]

    def tool_definition(self, tool: Any) -> dict[str, Any] | None:
        return {"_meta": {"com.example/greetings/polite": True}}


server = Server("greeter")


@server.tool(meta={"com.example/own": 1})
def wave(to: str) -> str:
    """Wave at someone."""
    return f"*waves at {to}*"


server.add_extension(Greetings())
