"""The OAuth client's parts that need no servers: challenges, the token store, the options,
the resource check. The flows themselves are tested against oidc-provider
(tests/auth/test_auth_oidc.py) and by the conformance suite's authorization scenarios."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolwire.auth import FileTokenStore, OAuth
from toolwire.auth.client.challenge import read_challenge
from toolwire.auth.client.discovery import covers
from toolwire.auth.client.dpop import DPoPKey
from toolwire.client import Client, ClientError


def test_challenges_are_read_as_rfc_9110_writes_them() -> None:
    header = 'Basic realm="x", Bearer error="insufficient_scope", scope="a b", error_description="say \\"hi\\""'
    assert read_challenge(header) == (
        "bearer",
        {"error": "insufficient_scope", "scope": "a b", "error_description": 'say "hi"'},
    )
    assert read_challenge('DPoP error="use_dpop_nonce", resource_metadata="https://x/m"') == (
        "dpop",
        {"error": "use_dpop_nonce", "resource_metadata": "https://x/m"},
    )
    assert read_challenge("Bearer") == ("bearer", {})
    assert read_challenge("Bearer realm=example,error=invalid_token, Basic realm=y") == (
        "bearer",
        {"realm": "example", "error": "invalid_token"},
    )
    assert read_challenge('Basic realm="x"') is None
    assert read_challenge(None) is None


@given(st.text(max_size=200))
def test_reading_a_challenge_never_fails(header: str) -> None:
    found = read_challenge(header)
    assert found is None or (found[0] in ("bearer", "dpop") and isinstance(found[1], dict))


def test_the_file_store_is_for_the_user_alone_and_survives_a_bad_file(tmp_path: Path) -> None:
    path = tmp_path / "config" / "oauth.json"
    store = FileTokenStore(path)
    assert store.load("tokens x") is None
    store.save("tokens x", {"access_token": "a"})
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert FileTokenStore(path).load("tokens x") == {"access_token": "a"}
    path.write_text("not json")
    assert store.load("tokens x") is None
    store.save("tokens y", {"access_token": "b"})
    assert store.names() == ["tokens y"]
    store.delete("tokens y")
    assert store.names() == []


def test_options_that_do_not_fit_are_refused() -> None:
    with pytest.raises(ValueError, match="needs a client_id"):
        OAuth(grant="client_credentials")
    with pytest.raises(ValueError, match="assertion= goes with"):
        OAuth(client_id="c", grant="jwt_bearer")
    with pytest.raises(ValueError, match="grant must be"):
        OAuth(grant="password")
    with pytest.raises(ClientError, match="auth= is for http"):
        Client(["python", "server.py"], auth=OAuth())


def test_resource_metadata_must_be_for_the_server_or_a_parent() -> None:
    assert covers("https://mcp.example.com/mcp", "https://mcp.example.com/mcp")
    assert covers("https://MCP.example.com", "https://mcp.example.com/mcp")
    assert covers("https://mcp.example.com/api", "https://mcp.example.com/api/mcp")
    assert not covers("https://mcp.example.com/api", "https://mcp.example.com/apikeys/mcp")
    assert not covers("https://evil.example.com/mcp", "https://mcp.example.com/mcp")
    assert not covers("http://mcp.example.com/mcp", "https://mcp.example.com/mcp")


def test_dpop_proofs_are_fresh_bound_and_keep_no_private_key_in_the_header() -> None:
    import jwt

    key = DPoPKey()
    first = key.proof("post", "https://mcp.example.com/mcp?x=1#f", "token", nonce="n1")
    second = key.proof("POST", "https://mcp.example.com/mcp", "token")
    header = jwt.get_unverified_header(first)
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256" and "d" not in header["jwk"]
    public = jwt.PyJWK(header["jwk"]).key
    claims = jwt.decode(first, public, algorithms=["ES256"])
    assert claims["htm"] == "POST" and claims["htu"] == "https://mcp.example.com/mcp" and claims["nonce"] == "n1"
    assert claims["ath"] == "PEaenWxYddN6Q_NT1PiOYfz4EsZu7jRXRlpAsNpBU-A"  # base64url(sha256("token"))
    assert claims["jti"] != jwt.decode(second, public, algorithms=["ES256"])["jti"]
    assert DPoPKey(key.pem).jwk == key.jwk


def test_the_keyring_store_keeps_records_and_their_names(tmp_path: Path) -> None:
    import keyring
    from keyrings.alt.file import PlaintextKeyring

    from toolwire.auth.client.tokenstore import KeyringTokenStore, user_store

    backend = PlaintextKeyring()
    backend.file_path = str(tmp_path / "keyring.cfg")  # a real backend, in a file of this test's
    previous = keyring.get_keyring()
    keyring.set_keyring(backend)
    try:
        store = KeyringTokenStore(service="toolwire-test")
        assert store.load("tokens a") is None and store.names() == []
        store.save("tokens a", {"access_token": "x"})
        store.save("tokens b", {"access_token": "y"})
        store.save("tokens a", {"access_token": "z"})
        assert store.load("tokens a") == {"access_token": "z"} and store.names() == ["tokens a", "tokens b"]
        store.delete("tokens a")
        store.delete("tokens never")
        assert store.load("tokens a") is None and store.names() == ["tokens b"]
        assert isinstance(user_store(), FileTokenStore)  # plain files are no system keyring
    finally:
        keyring.set_keyring(previous)


async def test_a_redirect_port_in_use_is_one_clear_error_not_a_hang() -> None:
    import socket

    from toolwire.auth.client.authorize import browser_authorize
    from toolwire.auth.client.errors import AuthorizationError

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        authorize = browser_authorize(f"http://127.0.0.1:{port}/callback", timeout=5)
        with pytest.raises(AuthorizationError, match=f"cannot wait for the browser's redirect on 127.0.0.1:{port}"):
            await authorize("http://127.0.0.1:1/authorize")
