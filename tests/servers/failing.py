"""Tools and a resource template that fail in the ways the command line must report well."""

import os
import traceback

from toolwire import Context, Server, ToolError

server = Server("probs")


@server.tool
def boom() -> str:
    raise RuntimeError("kaput")


def tenth(x: int) -> int:
    return 10 // x


@server.tool
def divide(x: int) -> int:
    """Print, then fail in a helper when ``x`` is 0."""
    print(f"dividing 10 by {x}")
    return tenth(x)


@server.tool
def crash() -> str:
    """Print, then end the process over a failure in a helper."""
    print("about to crash")
    try:
        tenth(0)
    except ZeroDivisionError:
        traceback.print_exc()
        os._exit(3)
    return "not reached"


@server.tool
def fail() -> str:
    raise ToolError("nope, not today")


@server.tool
def ratio(ratio: float) -> str:
    return str(ratio)


@server.resource("notes://{name}")
def note(name: str) -> str:
    from toolwire.resources.resource import ResourceNotFound

    raise ResourceNotFound(f"notes://{name}", f"there is no note called {name}")


@server.tool
async def chatty(ctx: Context) -> str:
    """Log at two levels, then answer."""
    await ctx.info("working on it")
    await ctx.debug("the details")
    return "done"
