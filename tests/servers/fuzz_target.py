"""What the fuzzer's messages name: a tool, two resources, a prompt."""

from toolwire import Server

server = Server("fuzz-target")


@server.tool
async def echo(text: str) -> str:
    """Echo."""
    return text


@server.resource("note://one", mime_type="text/plain")
def one() -> str:
    return "one"


@server.resource("note://{name}")
def note(name: str) -> str:
    return name


@server.prompt
def review(code: str) -> str:
    return f"review {code}"
