"""Revoking a sign-in and the provider's tokens kept for the person (one record per person
and provider, shared by all their clients): they stay while another of the person's sign-ins
is live, and are forgotten with the last one, whether it was revoked (RFC 7009) or ended by
a reused refresh token."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from tests.auth.server.signing import deployment, provider, refresh, sign_in
from toolwire.auth.server.vault import NoUpstreamToken, TokenVault, VaultKeys


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    with provider() as url:
        yield url


async def revoke(issuer: str, client_id: str, token: str) -> None:
    async with httpx.AsyncClient() as http:
        answer = await http.post(f"{issuer}/oauth/revoke", data={"token": token, "client_id": client_id})
    assert answer.status_code == 200


@contextlib.asynccontextmanager
async def keeping_tokens(issuer: str, tmp_path: Path) -> AsyncIterator[tuple[str, TokenVault]]:
    """A deployment that keeps the provider's tokens: its issuer URL and its vault."""
    keys = VaultKeys.parse(f"1:{VaultKeys.generate()}")
    async with deployment(issuer, tmp_path / "auth.sqlite3", allow_upstream_token=True, vault_keys=keys) as served:
        assert served.auth.vault is not None
        yield served.issuer, served.auth.vault


async def test_the_provider_tokens_go_with_the_last_revoked_sign_in(issuer: str, tmp_path: Path) -> None:
    async with keeping_tokens(issuer, tmp_path) as (server, vault):
        laptop, laptop_tokens = await sign_in(server)
        phone, phone_tokens = await sign_in(server)
        await revoke(server, laptop, laptop_tokens["refresh_token"])
        assert await vault.access_token("alice")  # the phone still signs in as alice
        await revoke(server, phone, phone_tokens["access_token"])
        with pytest.raises(NoUpstreamToken, match="sign in again"):
            await vault.access_token("alice")


async def test_a_reused_refresh_token_ending_the_last_sign_in_forgets_them_too(issuer: str, tmp_path: Path) -> None:
    async with keeping_tokens(issuer, tmp_path) as (server, vault):
        client_id, first = await sign_in(server)
        second = (await refresh(server, client_id, first["refresh_token"])).json()
        await refresh(server, client_id, second["refresh_token"])  # the first is now reuse, not a race
        assert await vault.access_token("alice")
        reused = await refresh(server, client_id, first["refresh_token"])
        assert "already used" in reused.json()["error_description"]
        with pytest.raises(NoUpstreamToken):
            await vault.access_token("alice")
