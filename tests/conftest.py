"""Shared fixtures: a raw stdio client factory; a data folder of the session's own. And SIGINT
as a user's Ctrl-C finds it in every process the tests start, however the suite was started
(see :func:`pytest_configure`)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from tests.support.rawclient import RawClient, toolwire_command


def pytest_configure(config: pytest.Config) -> None:
    """Started in the background (``nohup``, ``cmd &`` in a script: SIGINT ignored), the suite
    takes SIGINT's default back, since an ignored signal is inherited by every process it
    starts, and the tests interrupt theirs (Ctrl-C) and expect them to stop."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


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
