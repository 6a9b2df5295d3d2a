"""Shared fixtures: a raw stdio client factory."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.rawclient import RawClient, toolwire_command


@pytest.fixture
def serve() -> Iterator[object]:
    """``serve(target, env=None)``: a :class:`RawClient` on ``toolwire run target``, closed after."""
    clients: list[RawClient] = []

    def start(target: str, env: dict[str, str] | None = None) -> RawClient:
        client = RawClient(toolwire_command(target), env=env)
        client.notifications = []
        clients.append(client)
        return client

    yield start
    for client in clients:
        client.__exit__()
