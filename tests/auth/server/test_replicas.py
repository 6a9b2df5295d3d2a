"""Two processes of one server sharing the authorization server's state (one Redis, or one
SQLite file): a sign-in on one is good on the other, and the same refresh token sent to both
at once gives one rotation, both answers usable, and nobody locked out. Also the store's
atomic steps under contention, for both backends."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.auth.server.signing import provider, refresh, register_at_provider, sign_in
from tests.support.httpserve import ROOT, free_port, wait_for_port
from tests.support.redisserve import redis_server
from toolwire.auth.server.authorization.state import open_auth_state
from toolwire.client import Client

SIGNIN = str(ROOT / "tests" / "servers" / "signin.py")


@contextlib.contextmanager
def replica(issuer: str, client: tuple[str, str], state: str, public_url: str, port: int) -> Iterator[str]:
    """One process of the server; yields its own origin."""
    environment = {**os.environ, "TOOLWIRE_OAUTH_CLIENT_SECRET": client[1]}
    command = [sys.executable, SIGNIN, issuer, client[0], state, public_url, str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment)
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.kill()
        process.wait(10)


@contextlib.contextmanager
def stores(kind: str, tmp_path: Path) -> Iterator[str]:
    if kind == "redis":
        with redis_server() as url:
            yield url
    else:
        yield str(tmp_path / "shared.sqlite3")


@pytest.mark.parametrize("kind", ["redis", "sqlite"])
async def test_refreshes_racing_on_two_replicas_give_one_rotation_and_no_lock_out(kind: str, tmp_path: Path) -> None:
    with provider() as issuer, stores(kind, tmp_path) as state:
        first_port, second_port = free_port(), free_port()
        public = f"http://127.0.0.1:{first_port}"
        client = register_at_provider(issuer, f"{public}/oauth/callback")
        with (
            replica(issuer, client, state, f"{public}/mcp", first_port) as one,
            replica(issuer, client, state, f"{public}/mcp", second_port) as two,
        ):
            client_id, tokens = await sign_in(one)
            current = tokens["refresh_token"]
            for _ in range(8):
                answers = await asyncio.gather(refresh(one, client_id, current), refresh(two, client_id, current))
                assert [answer.status_code for answer in answers] == [200, 200], [a.text for a in answers]
                rotated = {answer.json()["refresh_token"] for answer in answers}
                assert len(rotated) == 1 and current not in rotated  # one winner, whose successor both got
                current = rotated.pop()
                for origin, answer in zip((one, two), answers, strict=True):
                    headers = {"Authorization": f"Bearer {answer.json()['access_token']}"}
                    async with Client(f"{origin}/mcp", protocol="2026-07-28", headers=headers) as mcp:
                        assert (await mcp.call_tool("whoami", {})).content[0].text.startswith("alice via ")
            last = await refresh(two, client_id, current)
            assert last.status_code == 200  # the family was never revoked by the races
            reused = await refresh(one, client_id, tokens["refresh_token"])
            assert reused.json()["error"] == "invalid_grant"  # an old one, used again: reuse


@pytest.mark.parametrize("kind", ["redis", "sqlite"])
async def test_take_and_add_have_one_winner_among_many(kind: str, tmp_path: Path) -> None:
    with stores(kind, tmp_path) as where:
        first, second = open_auth_state(where), open_auth_state(where)
        for round in range(20):
            await first.put("code", f"c{round}", {"n": round}, 60)
        takes = await asyncio.gather(*(store.take("code", f"c{n}") for n in range(20) for store in (first, second)))
        assert sum(taken is not None for taken in takes) == 20
        adds = await asyncio.gather(
            *(store.add("rotated", "one", {"by": i}, 60) for i, store in enumerate([first, second] * 5))
        )
        assert adds.count(True) == 1
        assert await first.get("missing", "x") is None
        await first.close()
        await second.close()
