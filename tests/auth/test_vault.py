"""The vault of the provider's tokens, in the authorization server's own stores (an SQLite
file; a real redis-server for replicas) with the local GitHub (``servers/github_api.py``)
as the provider: a GitHub App's tokens expire and each refresh token works once, so a
second refresh of the same token fails there as it does at GitHub.

Sealed at rest (neither token is in the store's bytes; a record moved to another person's
slot does not open); keys rotated by id; refreshed once however many ask at the same time,
in one process or in two replicas racing on one store; and ``ctx.upstream_token()`` in a
tool, only where the operator allows it."""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.auth.server.signing import listener, sign_in
from tests.support.httpserve import InProcess, github_api
from tests.support.redisserve import redis_server
from toolwire import Context, Server
from toolwire.auth.server.authorization import AuthorizationServer
from toolwire.auth.server.authorization.state import SQLiteAuthState, open_auth_state
from toolwire.auth.server.upstream import UpstreamTokens
from toolwire.auth.server.upstreams import GitHubUpstream
from toolwire.auth.server.upstreams.exchange import s256
from toolwire.auth.server.vault import (
    KEYS_FILE_VARIABLE,
    KEYS_VARIABLE,
    TOKENS_KIND,
    NoUpstreamToken,
    TokenVault,
    VaultError,
    VaultKeys,
)
from toolwire.client import Client

REPLICA = str(Path(__file__).resolve().parents[1] / "servers" / "vault_replica.py")
CALLBACK = "http://127.0.0.1:9/oauth/callback"
KEY_1, KEY_2 = VaultKeys.generate(), VaultKeys.generate()
NO_KEYS = {KEYS_VARIABLE: "", KEYS_FILE_VARIABLE: ""}


@pytest.fixture(scope="module")
def github() -> Iterator[str]:
    with github_api() as url:
        yield url


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture
async def state(tmp_path: Path) -> AsyncIterator[SQLiteAuthState]:
    store = SQLiteAuthState(tmp_path / "authorization.sqlite3")
    yield store
    await store.close()


def app_upstream(github: str) -> GitHubUpstream:
    return GitHubUpstream("Iv23-github-app", "app-secret", base_url=github, api_url=f"{github}/api")


async def signed_in(github: str, expires_in: float = 8 * 3600) -> UpstreamTokens:
    """Octocat's tokens from a sign-in at the local GitHub, said to expire in ``expires_in`` s."""
    upstream = app_upstream(github)
    verifier = "v" * 43
    url = await upstream.authorization_url(state="st", redirect_uri=CALLBACK, code_challenge=s256(verifier))
    async with httpx.AsyncClient() as browser:
        code = parse_qs(urlsplit((await browser.get(url)).headers["location"]).query)["code"][0]
    _identity, tokens = await upstream.exchange(code=code, redirect_uri=CALLBACK, code_verifier=verifier)
    return dataclasses.replace(tokens, expires_at=time.time() + expires_in)


async def refreshes(github: str) -> int:
    async with httpx.AsyncClient() as http:
        return int((await http.get(f"{github}/stats")).json()["refreshes"])


async def test_the_tokens_are_sealed_at_rest_and_bound_to_their_slot(
    github: str, state: SQLiteAuthState, tmp_path: Path
) -> None:
    vault = TokenVault(state, app_upstream(github), VaultKeys.parse(f"1:{KEY_1}"))
    tokens = await signed_in(github)
    await vault.keep("583231", tokens)
    assert await vault.tokens("583231") == tokens
    stored = b"".join(path.read_bytes() for path in tmp_path.glob("authorization.sqlite3*"))
    assert tokens.access_token.encode() not in stored and str(tokens.refresh_token).encode() not in stored
    record = await state.get(TOKENS_KIND, vault.slot("583231"))
    assert record is not None and record["kid"] == "1"
    await state.put(TOKENS_KIND, vault.slot("480938"), record, 60)  # someone else's slot
    with pytest.raises(VaultError, match="the record was altered or moved"):
        await vault.tokens("480938")
    await state.put(TOKENS_KIND, vault.slot("480938"), {**record, "sealed": 7}, 60)  # not even base64
    with pytest.raises(VaultError, match="the record was altered or moved"):
        await vault.tokens("480938")
    await vault.forget("583231")
    with pytest.raises(NoUpstreamToken, match="no github token is kept for this person: they must sign in again"):
        await vault.access_token("583231")


async def test_a_new_key_seals_from_then_on_and_the_old_one_still_opens(github: str, state: SQLiteAuthState) -> None:
    old = TokenVault(state, app_upstream(github), VaultKeys.parse(f"1:{KEY_1}"))
    await old.keep("583231", await signed_in(github, expires_in=5))
    rotated = TokenVault(state, app_upstream(github), VaultKeys.parse(f"2:{KEY_2},1:{KEY_1}"))
    fresh = await rotated.tokens("583231")  # opened with key 1, refreshed, sealed with key 2
    record = await state.get(TOKENS_KIND, rotated.slot("583231"))
    assert record is not None and record["kid"] == "2"
    only_new = TokenVault(state, app_upstream(github), VaultKeys.parse(f"2:{KEY_2}"))
    assert await only_new.tokens("583231") == fresh
    with pytest.raises(VaultError, match="sealed with the key '2', no longer given"):
        await old.tokens("583231")


async def test_concurrent_requests_in_one_process_share_one_refresh(github: str, state: SQLiteAuthState) -> None:
    vault = TokenVault(state, app_upstream(github), VaultKeys.parse(f"1:{KEY_1}"))
    old = await signed_in(github, expires_in=5)  # within the refresh margin
    await vault.keep("583231", old)
    before = await refreshes(github)
    tokens = await asyncio.gather(*(vault.access_token("583231") for _ in range(5)))
    assert len(set(tokens)) == 1 and tokens[0] != old.access_token
    assert await refreshes(github) == before + 1
    assert await vault.access_token("583231") == tokens[0]  # fresh now: no refresh


async def test_tokens_without_a_refresh_token_serve_until_they_expire(github: str, state: SQLiteAuthState) -> None:
    vault = TokenVault(state, app_upstream(github), VaultKeys.parse(f"1:{KEY_1}"))
    await vault.keep("a", UpstreamTokens(access_token="gho_a", expires_at=time.time() + 5))
    assert await vault.access_token("a") == "gho_a"
    await vault.keep("b", UpstreamTokens(access_token="gho_b", expires_at=time.time() - 1))
    with pytest.raises(NoUpstreamToken, match="expired and the provider gave no refresh token: sign in again"):
        await vault.access_token("b")
    await vault.keep("c", UpstreamTokens(access_token="gho_c"))  # an OAuth app's: it never expires
    assert await vault.access_token("c") == "gho_c"


@pytest.mark.parametrize("store", ["sqlite", "redis"])
async def test_two_replicas_racing_to_refresh_make_one_refresh(
    github: str, redis_url: str, tmp_path: Path, store: str
) -> None:
    where = str(tmp_path / "authorization.sqlite3") if store == "sqlite" else redis_url
    keys = f"1:{KEY_1}"
    shared = open_auth_state(where)
    vault = TokenVault(shared, app_upstream(github), VaultKeys.parse(keys))
    old = await signed_in(github, expires_in=5)
    await vault.keep(f"racer-{store}", old)
    before = await refreshes(github)
    replicas = [
        subprocess.Popen(
            [sys.executable, REPLICA, where, github, f"racer-{store}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**_environment(), KEYS_VARIABLE: keys},
        )
        for _ in range(2)
    ]
    try:
        for replica in replicas:
            assert replica.stdout is not None and replica.stdout.readline().strip() == b"ready"
        for replica in replicas:
            assert replica.stdin is not None
            replica.stdin.write(b"go\n")
            replica.stdin.flush()
        answers = [replica.communicate(timeout=60)[0].decode().strip() for replica in replicas]
    finally:
        for replica in replicas:
            replica.kill()
            replica.wait(10)
    assert answers[0] == answers[1] and answers[0].startswith("ghu_"), answers
    assert answers[0] != old.access_token
    assert await refreshes(github) == before + 1
    assert await vault.access_token(f"racer-{store}") == answers[0]
    await shared.close()


def _environment() -> dict[str, str]:
    import os

    return {**os.environ, **NO_KEYS}


def test_the_keys_come_from_the_environment_or_a_file(tmp_path: Path) -> None:
    with pytest.raises(VaultError, match=f"keeping the provider's tokens needs a key: set {KEYS_VARIABLE}=1:KEY"):
        VaultKeys.from_env({})
    assert VaultKeys.from_env({KEYS_VARIABLE: f"2:{KEY_2}, 1:{KEY_1}"}).current == "2"
    written = tmp_path / "vault-keys"
    written.write_text(f"7:{KEY_1}\n6:{KEY_2}\n")
    assert VaultKeys.from_env({KEYS_FILE_VARIABLE: str(written)}).current == "7"
    with pytest.raises(VaultError, match="cannot read the vault keys from"):
        VaultKeys.from_env({KEYS_FILE_VARIABLE: str(tmp_path / "missing")})
    with pytest.raises(VaultError, match="the vault key '1' is 16 bytes, not 32"):
        VaultKeys.parse("1:" + "A" * 22)
    with pytest.raises(VaultError, match="a vault key is written ID:KEY"):
        VaultKeys.parse(KEY_1)
    with pytest.raises(VaultError, match="the vault key id '1' is given twice"):
        VaultKeys.parse(f"1:{KEY_1},1:{KEY_2}")


# -- ctx.upstream_token(), behind the authorization server ---------------------------------------


def tool_server(github: str) -> Server:
    server = Server("upstream-caller")

    @server.tool
    async def my_github_login(ctx: Context) -> str:
        """The caller's GitHub login, asked of GitHub with their own token."""
        token = await ctx.upstream_token()
        async with httpx.AsyncClient() as http:
            user = (await http.get(f"{github}/api/user", headers={"Authorization": f"Bearer {token}"})).json()
        return str(user["login"])

    return server


async def signed_in_call(github: str, state: Path, **options: Any) -> Any:
    """Octocat signs in through an authorization server federating to the local GitHub, and
    calls ``my_github_login`` with the token it issued; the server's state in the file ``state``."""
    sock = listener()
    origin = f"http://127.0.0.1:{sock.getsockname()[1]}"
    auth = AuthorizationServer(app_upstream(github), f"{origin}/mcp", state=state, **options)
    async with InProcess(tool_server(github).http_app(auth=auth), listener=sock) as url:
        _client_id, tokens = await sign_in(origin)
        async with Client(url, headers={"Authorization": f"Bearer {tokens['access_token']}"}) as client:
            return await client.call_tool("my_github_login", {})


async def test_a_tool_calls_the_provider_as_the_person_who_signed_in(github: str, tmp_path: Path) -> None:
    where = tmp_path / "authorization.sqlite3"
    keys = VaultKeys.parse(f"1:{KEY_1}")
    allowed = await signed_in_call(github, where, allow_upstream_token=True, vault_keys=keys)
    assert not allowed.is_error and allowed.content[0].text == "octocat"
    state = SQLiteAuthState(where)
    record = await state.get(TOKENS_KIND, "github\n583231")  # kept at sign-in, sealed
    await state.close()
    assert record is not None and record["kid"] == "1"


async def test_without_the_operators_permission_a_tool_gets_no_token(github: str, tmp_path: Path) -> None:
    where = tmp_path / "authorization.sqlite3"
    refused = await signed_in_call(github, where)
    assert refused.is_error
    assert (
        "does not hand out the identity provider's tokens: the operator allows it with allow_upstream_token=True"
        in (refused.content[0].text)
    )
    state = SQLiteAuthState(where)
    assert await state.get(TOKENS_KIND, "github\n583231") is None  # nothing kept
    await state.close()


def test_keeping_tokens_without_a_key_is_refused_at_start(
    github: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEYS_VARIABLE, raising=False)
    monkeypatch.delenv(KEYS_FILE_VARIABLE, raising=False)
    with pytest.raises(VaultError, match="keeping the provider's tokens needs a key"):
        AuthorizationServer(
            app_upstream(github), "http://127.0.0.1:1/mcp", state=tmp_path / "state", allow_upstream_token=True
        )


def test_the_command_line_allows_it_only_with_a_key(tmp_path: Path) -> None:
    from tests.support.clirun import toolwire

    server = str(Path(__file__).resolve().parents[1] / "servers" / "vault.py")
    signing_in = ["--http", "8", "--oauth-upstream", "github", "--oauth-client-id", "Ov23-x"]
    state = ["--oauth-state", str(tmp_path / "authorization.sqlite3")]
    done = toolwire(
        "run", server, *signing_in, *state, "--allow-upstream-token", TOOLWIRE_OAUTH_CLIENT_SECRET="s", **NO_KEYS
    )
    assert done.returncode == 2
    assert "--allow-upstream-token: keeping the provider's tokens needs a key: set TOOLWIRE_VAULT_KEYS" in done.stderr
    done = toolwire("run", server, "--http", "8", "--allow-upstream-token")
    assert done.returncode == 2 and "--allow-upstream-token go with --oauth-upstream" in done.stderr
