"""toolwire.testing: the fixture and helper server authors use, and the example test file
they copy, run as they would run it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from toolwire import Context, Server
from toolwire.client import Client
from toolwire.testing import ERAS, client_fixture, connected

ROOT = Path(__file__).resolve().parents[2]


def fresh() -> Server:
    server = Server("counter")
    count = [0]

    @server.tool
    def bump(ctx: Context) -> int:
        count[0] += 1
        return count[0]

    return server


client = client_fixture(fresh)
legacy_only = client_fixture(fresh, eras=["2025-06-18"], name="legacy_only")
seen_eras: list[str] = []


async def test_the_fixture_gives_a_fresh_server_per_test_in_each_era(client: Client) -> None:
    assert (await client.call_tool("bump")).text == "1"  # a new server each time
    assert client.version is not None
    seen_eras.append(client.version)


def test_the_fixture_ran_in_both_eras() -> None:
    assert sorted(seen_eras) == sorted(ERAS)


async def test_eras_can_be_chosen(legacy_only: Client) -> None:
    assert legacy_only.version == "2025-06-18"


async def test_connected_is_the_same_without_pytest() -> None:
    async with connected(fresh(), "2026-07-28") as connection:
        assert connection.version == "2026-07-28"
        assert (await connection.call_tool("bump")).text == "1"


def test_the_example_test_file_passes_as_a_user_runs_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-o",
            "asyncio_mode=strict",  # the example marks its tests: it works without auto mode
            str(ROOT / "examples" / "test_seed_server.py"),
        ],
        cwd=ROOT / "examples",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "8 passed" in done.stdout
