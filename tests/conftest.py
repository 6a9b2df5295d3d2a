"""Shared fixtures: paths and a raw stdio client factory."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from rawclient import RawClient, toolwire_command  # noqa: E402


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
