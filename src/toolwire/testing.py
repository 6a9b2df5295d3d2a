"""Testing a server: a connected in-memory :class:`~toolwire.client.Client` in one line, in
every protocol era.

    from toolwire.testing import client_fixture
    from my_server import server

    client = client_fixture(server)          # a pytest fixture: each test runs once per era

    async def test_greet(client):
        assert (await client.call_tool("greet", {"name": "Ada"})).text == "Hello, Ada!"

The client talks to the server in this process, through the same codec, validation and
dispatch as over stdio or HTTP (messages cross as encoded JSON), and the server's lifespan
runs around it. Outside pytest, ``async with connected(server, era) as client:`` does the same.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from .client import Client
from .server.server import Server

#: The eras a test runs in by default: the last handshake version and the stateless one.
ERAS: tuple[str, ...] = ("2025-11-25", "2026-07-28")


@contextlib.asynccontextmanager
async def connected(server: Server, era: str | None = None, **options: Any) -> AsyncIterator[Client]:
    """A :class:`~toolwire.client.Client` connected in memory to ``server``, speaking ``era``
    (``None``: the newest); ``options`` go to the Client (``elicitation=``, ``sampling=``...)."""
    async with Client(server, protocol=era, **options) as client:
        yield client


def client_fixture(
    server: Server | Callable[[], Server],
    *,
    eras: Sequence[str] = ERAS,
    name: str = "client",
    **options: Any,
) -> Any:
    """A pytest fixture named ``name`` giving each test a connected Client, once per era in
    ``eras``. ``server``: a Server, or a function making a fresh one for each test (for
    servers that keep state). ``options`` go to the Client. Needs pytest-asyncio (or another
    plugin that runs async fixtures); assign the result to a module-level name."""
    import pytest

    try:
        import pytest_asyncio

        fixture: Any = pytest_asyncio.fixture
    except ImportError:  # another plugin (anyio's) runs async fixtures declared plainly
        fixture = pytest.fixture

    async def client(request: Any) -> AsyncIterator[Client]:
        target = server if isinstance(server, Server) else server()
        async with connected(target, request.param, **options) as connection:
            yield connection

    return fixture(client, params=list(eras), ids=list(eras), name=name)
