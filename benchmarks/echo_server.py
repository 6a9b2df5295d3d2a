"""The toolwire server under benchmark: ``python -m toolwire run benchmarks/echo_server.py``.

``echo`` (async), ``echo_sync`` (a plain function: toolwire runs it on a worker thread) and
``echo_inline`` (a plain function with ``inline=True``: called on the event loop) return
their text. With ``BENCH_TOOLS=N`` in the environment, N more tools ``tool_0`` ...
``tool_{N-1}`` are registered, each with three typed parameters and a docstring (about 230
bytes of JSON each, like the floor server's ``--tools N``), for the ``tools/list`` benchmark.
"""

from __future__ import annotations

import os

from toolwire import Server

server = Server("bench")


@server.tool
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool
def echo_sync(text: str) -> str:
    """Echo the text back (sync: runs on a worker thread)."""
    return text


@server.tool(inline=True)
def echo_inline(text: str) -> str:
    """Echo the text back (sync, called on the event loop: it never blocks)."""
    return text


def _forecast_tool(index: int) -> None:
    async def forecast(city: str, days: int = 3, metric: bool = True) -> str:
        return city

    forecast.__doc__ = f"Weather forecast {index} for a city."
    server.tool(name=f"tool_{index}")(forecast)


for _index in range(int(os.environ.get("BENCH_TOOLS", "0") or 0)):
    _forecast_tool(_index)
