"""Registration (RFC 7591) cannot be used to fill the store: one address registers at most so
many clients (429 with Retry-After past that, per address, shared by replicas through Redis),
and a client never used (no code issued to it) is kept a day, one used a year."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.auth.server.signing import deployment, provider, sign_in, upstream_at
from tests.support.redisserve import redis_server
from toolwire.auth.server.authorization import AuthorizationServer
from toolwire.auth.server.authorization.registration import CLIENT_TTL, UNUSED_CLIENT_TTL
from toolwire.auth.server.authorization.web import OAuthError

CLIENT = {"redirect_uris": ["http://127.0.0.1:9/callback"], "token_endpoint_auth_method": "none"}


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    with provider() as url:
        yield url


async def test_an_address_over_its_registration_limit_gets_429_with_retry_after(issuer: str, tmp_path: Path) -> None:
    async with (
        deployment(issuer, tmp_path / "auth.sqlite3", registration_rate="3/hour", registration_burst=3) as served,
        httpx.AsyncClient() as http,
    ):
        answers = [await http.post(f"{served.issuer}/oauth/register", json=CLIENT) for _ in range(4)]
    assert [answer.status_code for answer in answers] == [201, 201, 201, 429]
    refused = answers[-1]
    assert refused.json()["error"] == "too_many_requests"
    assert "at most 3 times" in refused.json()["error_description"]
    assert 1100 <= int(refused.headers["retry-after"]) <= 1200  # a third of an hour for the next one


async def test_replicas_sharing_redis_count_the_same_registrations(tmp_path: Path) -> None:
    with redis_server() as url:
        upstream = upstream_at("https://idp.example.com", "id", "secret")  # never called: this stops at registering
        first, second = (
            AuthorizationServer(
                upstream, "http://127.0.0.1:1/mcp", state=url, registration_rate="2/hour", registration_burst=2
            )
            for _ in range(2)
        )
        try:
            await first.registrations.check("192.0.2.7")
            await second.registrations.check("192.0.2.7")
            with pytest.raises(OAuthError, match="too many registrations from this address") as refused:
                await first.registrations.check("192.0.2.7")
            assert refused.value.status == 429
            await second.registrations.check("192.0.2.8")  # another address has its own
        finally:
            await first.close()
            await second.close()


async def test_a_client_never_used_is_kept_a_day_and_one_used_a_year(issuer: str, tmp_path: Path) -> None:
    path = tmp_path / "auth.sqlite3"
    async with deployment(issuer, path) as served:
        async with httpx.AsyncClient() as http:
            unused = (await http.post(f"{served.issuer}/oauth/register", json=CLIENT)).json()["client_id"]
        used, _tokens = await sign_in(served.issuer)
    with sqlite3.connect(path) as db:
        expires = dict(db.execute("SELECT key, expires FROM auth_state WHERE kind = 'client'").fetchall())
    now = time.time()
    assert now < expires[unused] <= now + UNUSED_CLIENT_TTL
    assert now + CLIENT_TTL - 3600 < expires[used] <= now + CLIENT_TTL
