"""The authorization server's signing key in its store: sealed with the vault keys when
they are given (a second replica with the same keys signs with it, a wrong key stops the
server at start), kept in the clear with a warning otherwise."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from tests.auth.server.signing import upstream_at
from toolwire.auth.server.authorization import AuthorizationServer
from toolwire.auth.server.authorization.state import SQLiteAuthState
from toolwire.auth.server.authorization.tokens import Tokens
from toolwire.auth.server.vault import VaultError, VaultKeys

ISSUER = "https://mcp.example.com"
RESOURCE = f"{ISSUER}/mcp"


def keys(*pairs: str) -> VaultKeys:
    return VaultKeys.parse(",".join(pairs))


def private_numbers(tokens: Tokens) -> list[bytes]:
    """The private key as its PEM and its secret scalar's digits: neither may be in the store."""
    assert tokens._key is not None
    key = tokens._key[1]
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return [pem, str(key.private_numbers().private_value).encode()]


async def test_with_vault_keys_the_key_is_sealed_and_a_second_replica_signs_with_it(tmp_path: Path) -> None:
    first_key = VaultKeys.generate()
    path = tmp_path / "auth.sqlite3"
    first = Tokens(ISSUER, RESOURCE, SQLiteAuthState(path), keys=keys(f"1:{first_key}"))
    token = await first.access_token(
        {"subject": "alice", "resource": RESOURCE, "client_id": "c", "scope": "tools", "family": "f"}
    )
    record = await first.state.get("signing", "current")
    assert record is not None and "jwk" not in record and record["sealed"]["kid"] == "1"
    stored = path.read_bytes() + (tmp_path / "auth.sqlite3-wal").read_bytes()
    import jwt

    d = jwt.algorithms.ECAlgorithm.to_jwk(first._key[1], as_dict=True)["d"]  # type: ignore[index]
    assert d.encode() not in stored and not any(secret in stored for secret in private_numbers(first))
    replica = Tokens(ISSUER, RESOURCE, SQLiteAuthState(path), keys=keys(f"2:{VaultKeys.generate()}", f"1:{first_key}"))
    assert await replica.jwks() == await first.jwks()
    assert (await replica.verify(token)).subject == "alice"


async def test_a_wrong_vault_key_stops_the_server_at_start(tmp_path: Path) -> None:
    path = tmp_path / "auth.sqlite3"
    await Tokens(ISSUER, RESOURCE, SQLiteAuthState(path), keys=keys(f"1:{VaultKeys.generate()}")).load()
    upstream = upstream_at("https://idp.example.com", "id", "secret")
    wrong = AuthorizationServer(upstream, RESOURCE, state=path, vault_keys=keys(f"1:{VaultKeys.generate()}"))
    with pytest.raises(VaultError, match=r"the signing key cannot be opened: .*the key is wrong"):
        await wrong.start()
    unknown = AuthorizationServer(upstream, RESOURCE, state=path, vault_keys=keys(f"9:{VaultKeys.generate()}"))
    with pytest.raises(VaultError, match="sealed with the key '1', no longer given"):
        await unknown.start()
    none = Tokens(ISSUER, RESOURCE, SQLiteAuthState(path))
    with pytest.raises(VaultError, match="is sealed: set TOOLWIRE_VAULT_KEYS"):
        await none.load()


async def test_without_vault_keys_the_key_is_kept_in_the_clear_with_a_warning_then_sealed_when_keys_come(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "auth.sqlite3"
    clear = Tokens(ISSUER, RESOURCE, SQLiteAuthState(path))
    with caplog.at_level(logging.WARNING, logger="toolwire.auth"):
        published = await clear.jwks()
        await clear.jwks()
    warnings = [record.getMessage() for record in caplog.records if "unencrypted" in record.getMessage()]
    assert len(warnings) == 1 and "TOOLWIRE_VAULT_KEYS" in warnings[0]
    sealing = Tokens(ISSUER, RESOURCE, SQLiteAuthState(path), keys=keys(f"1:{VaultKeys.generate()}"))
    assert await sealing.jwks() == published
    record = await sealing.state.get("signing", "current")
    assert record is not None and "jwk" not in record and "sealed" in record
