"""Shared fixtures: a raw stdio client factory; a data folder of the session's own."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.support.rawclient import RawClient, toolwire_command


@pytest.fixture(autouse=True, scope="session")
def _session_data_folder(tmp_path_factory: pytest.TempPathFactory) -> None:
    """What the tests' processes keep in the user's data folder (the seed example's
    workspace) goes to a folder of the session's, never to the user's own."""
    os.environ["XDG_DATA_HOME"] = str(tmp_path_factory.mktemp("data"))


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
