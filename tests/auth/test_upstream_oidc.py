"""An OpenID provider as the authorization server's upstream, end to end against a real one:
oidc-provider (npm, a certified OpenID provider) in a process of its own. The upstream's
client registers there (Dynamic Client Registration), a person signs in through the
provider's own pages (scripted), and the code comes back to be exchanged for a verified
identity and the provider's tokens. The failures a provider can cause (down, slow, a
document for another issuer, a refused code, an ID token for another sign-in or client)
each give an :class:`UpstreamError` that says which."""

from __future__ import annotations

import secrets
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from tests.support.httpserve import free_port, process_http
from tests.support.oidcserve import oidc_provider, scripted_login
from toolwire.auth.server.upstream import UpstreamError, UpstreamTokens
from toolwire.auth.server.upstreams import OIDCUpstream, resolve_upstream
from toolwire.auth.server.upstreams.exchange import s256
from toolwire.auth.server.upstreams.oidc import claim

CALLBACK = "http://127.0.0.1:9/oauth/callback"  # where the provider sends the browser back; never served
SCOPES = ("openid", "email", "profile", "groups")
HOSTILE = str(Path(__file__).resolve().parents[1] / "servers" / "hostile_cards.py")


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    with oidc_provider() as url:
        yield url


def register(issuer: str, method: str = "client_secret_basic") -> tuple[str, str]:
    """A confidential client registered at the provider: (its id, its secret)."""
    answer = httpx.post(
        f"{issuer}/reg",
        json={
            "redirect_uris": [CALLBACK],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
        },
    )
    answer.raise_for_status()
    client = answer.json()
    return client["client_id"], client["client_secret"]


async def sign_in(upstream: OIDCUpstream, login: str = "alice") -> tuple[str, str]:
    """A person signs in at the provider: (the code it sent back, the PKCE verifier)."""
    verifier = secrets.token_urlsafe(48)
    state = secrets.token_urlsafe(16)
    url = await upstream.authorization_url(state=state, redirect_uri=CALLBACK, code_challenge=s256(verifier))
    back = parse_qs(urlsplit(await scripted_login(url, CALLBACK, login)).query)
    assert back["state"] == [state]
    return back["code"][0], verifier


async def test_a_person_signs_in_and_their_identity_and_tokens_come_back(issuer: str) -> None:
    upstream = OIDCUpstream(issuer, *register(issuer), scopes=SCOPES)
    code, verifier = await sign_in(upstream, "alice")
    identity, tokens = await upstream.exchange(code=code, redirect_uri=CALLBACK, code_verifier=verifier)
    assert identity.subject == "alice"
    assert identity.email == "alice@example.com" and identity.name == "Alice"  # from the user-info endpoint
    assert identity.groups == ("staff", "alice-team")
    assert identity.claims["iss"] == issuer
    assert tokens.access_token and tokens.id_token and tokens.refresh_token
    assert tokens.expires_at is not None and tokens.expires_at > time.time()
    assert upstream.name == "127.0.0.1"


async def test_the_authorization_url_asks_for_pkce_s256_a_nonce_and_the_scopes(issuer: str) -> None:
    upstream = OIDCUpstream(issuer, "some-client", scopes=SCOPES, extra_authorization_parameters={"prompt": "login"})
    url = await upstream.authorization_url(state="s", redirect_uri=CALLBACK, code_challenge="c" * 43)
    query = {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}
    assert url.startswith(f"{issuer}/auth?")
    assert query["code_challenge"] == "c" * 43 and query["code_challenge_method"] == "S256"
    assert query["scope"] == "openid email profile groups" and query["nonce"] and query["prompt"] == "login"
    narrower = await upstream.authorization_url(
        state="s", redirect_uri=CALLBACK, code_challenge="c" * 43, scopes=["openid"]
    )
    assert parse_qs(urlsplit(narrower).query)["scope"] == ["openid"]


async def test_the_tokens_are_refreshed_and_the_refresh_token_rotated(issuer: str) -> None:
    upstream = OIDCUpstream(issuer, *register(issuer), scopes=SCOPES)
    code, verifier = await sign_in(upstream)
    _identity, tokens = await upstream.exchange(code=code, redirect_uri=CALLBACK, code_verifier=verifier)
    fresh = await upstream.refresh(tokens)
    assert fresh.access_token != tokens.access_token and fresh.refresh_token
    with pytest.raises(UpstreamError, match="gave no refresh token: the person must sign in again"):
        await upstream.refresh(UpstreamTokens(access_token="x"))
    with pytest.raises(UpstreamError, match=r"refused the token request: invalid_grant"):
        await upstream.refresh(UpstreamTokens(access_token="x", refresh_token="not-one-it-issued"))


async def test_a_client_authenticating_with_the_form_and_one_with_a_wrong_secret(issuer: str) -> None:
    client_id, secret = register(issuer, "client_secret_post")
    upstream = OIDCUpstream(issuer, client_id, secret, scopes=SCOPES, token_auth_method="client_secret_post")
    code, verifier = await sign_in(upstream, "bob")
    identity, _tokens = await upstream.exchange(code=code, redirect_uri=CALLBACK, code_verifier=verifier)
    assert identity.subject == "bob"
    wrong = OIDCUpstream(issuer, client_id, "not-the-secret", scopes=SCOPES)
    code, verifier = await sign_in(wrong)
    with pytest.raises(UpstreamError, match=r"127.0.0.1 refused the token request: invalid_client \(client "):
        await wrong.exchange(code=code, redirect_uri=CALLBACK, code_verifier=verifier)


async def test_without_user_info_the_identity_is_what_the_id_token_says(issuer: str) -> None:
    upstream = OIDCUpstream(issuer, *register(issuer), scopes=SCOPES, userinfo=False)
    code, verifier = await sign_in(upstream, "carol")
    identity, _tokens = await upstream.exchange(code=code, redirect_uri=CALLBACK, code_verifier=verifier)
    assert identity.subject == "carol" and identity.email is None and identity.groups == ()


async def test_a_wrong_verifier_is_refused_by_the_provider(issuer: str) -> None:
    upstream = OIDCUpstream(issuer, *register(issuer), scopes=SCOPES)
    code, _verifier = await sign_in(upstream)
    with pytest.raises(UpstreamError, match="refused the token request: invalid_grant"):
        await upstream.exchange(code=code, redirect_uri=CALLBACK, code_verifier=secrets.token_urlsafe(48))


async def test_an_id_token_of_another_sign_in_or_client_is_refused(issuer: str) -> None:
    client_id, secret = register(issuer)
    upstream = OIDCUpstream(issuer, client_id, secret, scopes=SCOPES)
    code, verifier = await sign_in(upstream)
    _identity, tokens = await upstream.exchange(code=code, redirect_uri=CALLBACK, code_verifier=verifier)
    assert tokens.id_token is not None
    with pytest.raises(UpstreamError, match="was not issued for this sign-in"):
        await upstream.verify_id_token(tokens.id_token, nonce="another-sign-in")
    someone_else = OIDCUpstream(issuer, "another-client", scopes=SCOPES)
    with pytest.raises(UpstreamError, match="ID token was refused: Audience doesn't match"):
        await someone_else.verify_id_token(tokens.id_token, nonce=None)
    forged = tokens.id_token[:-4] + ("AAAA" if not tokens.id_token.endswith("AAAA") else "BBBB")
    with pytest.raises(UpstreamError, match="ID token was refused: Signature verification failed"):
        await upstream.verify_id_token(forged, nonce=None)


async def test_a_discovery_document_of_another_issuer_is_not_used(issuer: str) -> None:
    elsewhere = issuer.replace("127.0.0.1", "localhost")  # the same provider; its document names 127.0.0.1
    upstream = OIDCUpstream(elsewhere, "app")
    with pytest.raises(UpstreamError, match=r"names the issuer .* which it does not belong to: not used"):
        await upstream.authorization_url(state="s", redirect_uri=CALLBACK, code_challenge="c" * 43)


async def test_a_provider_that_is_down_gives_a_clear_error_and_is_asked_again_later(issuer: str) -> None:
    port = free_port()
    upstream = OIDCUpstream(f"http://127.0.0.1:{port}", "app", timeout=5)
    with pytest.raises(UpstreamError, match=f"127.0.0.1 could not be reached: cannot reach http://127.0.0.1:{port}"):
        await upstream.authorization_url(state="s", redirect_uri=CALLBACK, code_challenge="c" * 43)
    upstream.discovery_url = f"{issuer}/.well-known/openid-configuration"  # the provider is back
    assert (await upstream.authorization_url(state="s", redirect_uri=CALLBACK, code_challenge="c" * 43)).startswith(
        f"{issuer}/auth?"
    )


async def test_a_slow_or_huge_discovery_document_is_given_up() -> None:
    with process_http(sys.executable, HOSTILE, path="") as base:
        started = time.monotonic()
        with pytest.raises(UpstreamError, match="did not answer in full within 1 s"):
            await OIDCUpstream(f"{base}/trickle", "app", timeout=1).metadata()
        assert time.monotonic() - started < 5
        with pytest.raises(UpstreamError, match="answered more than 262144 bytes"):
            await OIDCUpstream(f"{base}/huge", "app").metadata()


def test_resolve_upstream_takes_a_discovery_url_or_a_preset_with_its_parameters() -> None:
    by_url = resolve_upstream("https://id.example.com/oidc", "cid", None)
    assert isinstance(by_url, OIDCUpstream)
    assert by_url.discovery_url == "https://id.example.com/oidc/.well-known/openid-configuration"
    realm = resolve_upstream("keycloak", "cid", "secret", base_url="https://sso.example.com/", realm="staff")
    assert isinstance(realm, OIDCUpstream) and realm.name == "keycloak"
    assert realm.discovery_url == "https://sso.example.com/realms/staff/.well-known/openid-configuration"
    assert realm.groups_claim == ("realm_access", "roles")
    tenant = resolve_upstream("Entra", "cid", "secret", tenant="contoso.onmicrosoft.com", groups_claim="groups")
    assert isinstance(tenant, OIDCUpstream) and tenant.subject_claim == "oid" and tenant.groups_claim == "groups"
    assert tenant.discovery_url == (
        "https://login.microsoftonline.com/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration"
    )
    written = resolve_upstream("keycloak:base_url=https://sso.example.com, realm=staff", "cid", None)
    assert isinstance(written, OIDCUpstream) and written.discovery_url == realm.discovery_url
    with pytest.raises(ValueError, match="'realm': a preset's parameters are written key=value"):
        resolve_upstream("keycloak:base_url=https://sso.example.com,realm", "cid", None)
    with pytest.raises(ValueError, match="the keycloak preset: missing 1 required keyword-only argument: 'realm'"):
        resolve_upstream("keycloak", "cid", None, base_url="https://sso.example.com")
    with pytest.raises(ValueError, match="unknown identity provider 'gitlub': give a discovery URL or one of"):
        resolve_upstream("gitlub", "cid", None)


def test_the_identity_takes_the_configured_claims_and_only_a_verified_email() -> None:
    upstream = OIDCUpstream("https://sso.example.com/realms/staff", "cid", groups_claim=("realm_access", "roles"))
    claims = {"sub": "u-1", "email": "a@example.com", "email_verified": False, "realm_access": {"roles": ["ops"]}}
    identity = upstream.identity(claims)
    assert (identity.subject, identity.email, identity.groups) == ("u-1", None, ("ops",))
    assert claim({"https://example.com/roles": ["x"]}, "https://example.com/roles") == ["x"]
    with pytest.raises(UpstreamError, match=r"did not say who signed in \(no oid claim\)"):
        OIDCUpstream("https://login.example.com", "cid", subject_claim="oid").identity({"sub": "s"})
