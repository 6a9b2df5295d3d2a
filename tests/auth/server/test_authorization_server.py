"""toolwire as the authorization server, end to end: oidc-provider upstream, clients
registering and signing in over real sockets, the vault server accepting the tokens."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.auth.server.signing import (
    authorize_url,
    browse,
    deployment,
    pkce,
    provider,
    query_of,
    refresh,
    register,
    sign_in,
)
from tests.support.httpserve import BASE
from toolwire.client import Client


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    with provider() as url:
        yield url


async def test_the_metadata_sends_clients_to_this_server_and_tokens_open_the_vault(issuer: str, tmp_path: Path) -> None:
    async with deployment(issuer, tmp_path / "auth.sqlite3") as served:
        async with httpx.AsyncClient() as http:
            refused = await http.post(served.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=BASE)
            assert refused.status_code == 401
            resource = (await http.get(f"{served.issuer}/.well-known/oauth-protected-resource/mcp")).json()
            assert resource["authorization_servers"] == [served.issuer]
            metadata = (await http.get(f"{served.issuer}/.well-known/oauth-authorization-server")).json()
        assert metadata["issuer"] == served.issuer
        assert metadata["code_challenge_methods_supported"] == ["S256"]
        assert metadata["client_id_metadata_document_supported"] is True
        _client_id, tokens = await sign_in(served.issuer)
        assert tokens["token_type"] == "Bearer" and tokens["refresh_token"] and tokens["scope"] == "tools"
        headers = {"Authorization": f"Bearer {tokens['access_token']}"}
        async with Client(served.url, headers=headers) as client:
            answer = (await client.call_tool("whoami", {})).content[0].text
        assert answer.startswith("alice via ") and answer.endswith(" with tools")
        identity = await served.auth.tokens.verify(tokens["access_token"])
        assert identity.subject == "alice" and identity.claims["email"] == "alice@example.com"
        assert identity.claims["name"] == "Alice" and identity.claims["groups"] == ["staff", "alice-team"]


async def test_a_refresh_rotates_and_a_reused_refresh_token_revokes_the_sign_in(issuer: str, tmp_path: Path) -> None:
    async with deployment(issuer, tmp_path / "auth.sqlite3") as served:
        client_id, first = await sign_in(served.issuer)
        second = (await refresh(served.issuer, client_id, first["refresh_token"])).json()
        assert second["refresh_token"] != first["refresh_token"]
        third = (await refresh(served.issuer, client_id, second["refresh_token"])).json()
        reused = await refresh(served.issuer, client_id, first["refresh_token"])
        assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
        assert "already used" in reused.json()["error_description"]
        after = await refresh(served.issuer, client_id, third["refresh_token"])
        assert after.json()["error"] == "invalid_grant" and "revoked" in after.json()["error_description"]
        with pytest.raises(Exception, match="revoked"):
            await served.auth.tokens.verify(third["access_token"])


async def test_a_replayed_code_is_refused_and_revokes_what_it_gave(issuer: str, tmp_path: Path) -> None:
    async with deployment(issuer, tmp_path / "auth.sqlite3") as served:
        redirect_uri = "http://127.0.0.1:9/callback"
        client = await register(served.issuer, redirect_uri)
        verifier, challenge = pkce()
        async with httpx.AsyncClient() as browser:
            url = authorize_url(served.issuer, client["client_id"], redirect_uri, challenge)
            code = query_of(await browse(browser, url, redirect_uri))["code"]
            exchange = {
                "grant_type": "authorization_code",
                "code": code,
                "redirect_uri": redirect_uri,
                "code_verifier": verifier,
                "client_id": client["client_id"],
            }
            first = await browser.post(f"{served.issuer}/oauth/token", data=exchange)
            again = await browser.post(f"{served.issuer}/oauth/token", data=exchange)
        assert first.status_code == 200
        assert again.status_code == 400 and "already used" in again.json()["error_description"]
        refused = await refresh(served.issuer, client["client_id"], first.json()["refresh_token"])
        assert refused.json()["error"] == "invalid_grant"


async def test_a_wrong_verifier_or_redirect_uri_gets_no_tokens(issuer: str, tmp_path: Path) -> None:
    async with deployment(issuer, tmp_path / "auth.sqlite3") as served:
        redirect_uri = "http://127.0.0.1:9/callback"
        client = await register(served.issuer, redirect_uri)
        _verifier, challenge = pkce()
        async with httpx.AsyncClient() as browser:
            url = authorize_url(served.issuer, client["client_id"], redirect_uri, challenge)
            code = query_of(await browse(browser, url, redirect_uri))["code"]
            wrong = await browser.post(
                f"{served.issuer}/oauth/token",
                data={
                    "grant_type": "authorization_code",
                    "code": code,
                    "redirect_uri": redirect_uri,
                    "code_verifier": pkce()[0],
                    "client_id": client["client_id"],
                },
            )
        assert wrong.status_code == 400 and "PKCE" in wrong.json()["error_description"]


async def test_an_unregistered_redirect_uri_gets_a_page_and_nothing_is_sent_there(issuer: str, tmp_path: Path) -> None:
    async with deployment(issuer, tmp_path / "auth.sqlite3") as served:
        client = await register(served.issuer, "https://app.example.com/callback")
        _verifier, challenge = pkce()
        async with httpx.AsyncClient() as browser:
            evil = authorize_url(served.issuer, client["client_id"], "https://evil.example.com/callback", challenge)
            page = await browser.get(evil)
            loopback = await register(served.issuer, "http://127.0.0.1/callback")
            other_port = authorize_url(
                served.issuer, loopback["client_id"], "http://127.0.0.1:5555/callback", challenge
            )
            accepted = await browser.get(other_port)
            other_path = authorize_url(served.issuer, loopback["client_id"], "http://127.0.0.1:5555/other", challenge)
            refused = await browser.get(other_path)
        assert page.status_code == 400 and "location" not in page.headers
        assert "did not register" in page.text and "evil.example.com" in page.text
        assert accepted.status_code == 200 and "Allow" in accepted.text  # loopback: any port (RFC 8252)
        assert refused.status_code == 400


async def test_registration_refuses_redirect_uris_that_are_not_https_or_loopback(issuer: str, tmp_path: Path) -> None:
    async with deployment(issuer, tmp_path / "auth.sqlite3") as served, httpx.AsyncClient() as http:
        for uri in ("http://app.example.com/callback", "https://app.example.com/cb#fragment", "javascript:alert(1)"):
            answer = await http.post(f"{served.issuer}/oauth/register", json={"redirect_uris": [uri]})
            assert answer.status_code == 400 and answer.json()["error"] == "invalid_redirect_uri", uri
        confidential = await http.post(
            f"{served.issuer}/oauth/register", json={"redirect_uris": ["https://app.example.com/cb"]}
        )
        assert confidential.status_code == 201 and confidential.json()["client_secret"]


async def test_a_forged_state_at_the_callback_gets_a_page(issuer: str, tmp_path: Path) -> None:
    async with deployment(issuer, tmp_path / "auth.sqlite3") as served, httpx.AsyncClient() as browser:
        forged = await browser.get(f"{served.issuer}/oauth/callback", params={"code": "x", "state": "forged"})
        assert forged.status_code == 400 and "did not start" in forged.text
        assert "frame-ancestors 'none'" in forged.headers["content-security-policy"]


async def test_a_consent_posted_without_the_browser_that_was_shown_it_is_refused(issuer: str, tmp_path: Path) -> None:
    import re

    async with deployment(issuer, tmp_path / "auth.sqlite3") as served:
        client = await register(served.issuer, "http://127.0.0.1:9/callback")
        _verifier, challenge = pkce()
        async with httpx.AsyncClient() as victim:
            page = await victim.get(
                authorize_url(served.issuer, client["client_id"], "http://127.0.0.1:9/callback", challenge)
            )
        form = dict(re.findall(r'type="hidden" name="([^"]+)" value="([^"]*)"', page.text))
        async with httpx.AsyncClient() as attacker:
            posted = await attacker.post(f"{served.issuer}/oauth/consent", data={**form, "decision": "allow"})
        assert posted.status_code == 400 and "location" not in posted.headers


async def test_a_provider_that_is_down_gets_a_clear_page(issuer: str, tmp_path: Path) -> None:
    import re

    from tests.auth.server.signing import upstream_at
    from tests.support.httpserve import free_port

    down = upstream_at(f"http://127.0.0.1:{free_port()}", "x", "y")
    async with deployment(issuer, tmp_path / "auth.sqlite3", upstream=down) as served:
        redirect_uri = "http://127.0.0.1:9/callback"
        client = await register(served.issuer, redirect_uri)
        _verifier, challenge = pkce()
        async with httpx.AsyncClient(timeout=30.0) as browser:
            page = await browser.get(authorize_url(served.issuer, client["client_id"], redirect_uri, challenge))
            form = dict(re.findall(r'type="hidden" name="([^"]+)" value="([^"]*)"', page.text))
            failed = await browser.post(f"{served.issuer}/oauth/consent", data={**form, "decision": "allow"})
        assert failed.status_code == 502 and "location" not in failed.headers
        assert "The identity provider oidc-provider could not be used" in failed.text
        assert "try again later" in failed.text.lower()


async def test_revoking_a_refresh_token_ends_the_sign_in(issuer: str, tmp_path: Path) -> None:
    async with deployment(issuer, tmp_path / "auth.sqlite3") as served:
        client_id, tokens = await sign_in(served.issuer)
        async with httpx.AsyncClient() as http:
            revoked = await http.post(
                f"{served.issuer}/oauth/revoke", data={"token": tokens["refresh_token"], "client_id": client_id}
            )
            unknown = await http.post(
                f"{served.issuer}/oauth/revoke", data={"token": "nonsense", "client_id": client_id}
            )
        assert revoked.status_code == 200 and unknown.status_code == 200
        assert (await refresh(served.issuer, client_id, tokens["refresh_token"])).json()["error"] == "invalid_grant"
        with pytest.raises(Exception, match="revoked"):
            await served.auth.tokens.verify(tokens["access_token"])


async def test_registration_refuses_what_is_not_a_client_saying_why(issuer: str, tmp_path: Path) -> None:
    async with deployment(issuer, tmp_path / "auth.sqlite3") as served, httpx.AsyncClient() as http:
        register_at = f"{served.issuer}/oauth/register"
        cases = [
            ({"redirect_uris": [f"https://app.example.com/{index}" for index in range(21)]}, "1 to 20 URIs"),
            ({"redirect_uris": ["https://app.example.com/" + "x" * 2000]}, "at most 2000 characters"),
            (
                {"redirect_uris": ["https://a.example/cb"], "token_endpoint_auth_method": "private_key_jwt"},
                "not supported",
            ),
            ({"redirect_uris": ["https://a.example/cb"], "grant_types": ["client_credentials"]}, "grant_types"),
            ([], "a JSON object"),
        ]
        for registration, said in cases:
            answer = await http.post(register_at, json=registration)
            assert answer.status_code == 400 and said in answer.json()["error_description"], registration
        not_json = await http.post(register_at, content=b"{", headers={"content-type": "application/json"})
        assert not_json.status_code == 400 and not_json.json()["error"] == "invalid_client_metadata"
        wrong_method = await http.get(register_at)
        assert wrong_method.status_code == 405 and wrong_method.headers["allow"] == "POST"


async def test_toolwires_client_steps_up_to_a_scope_the_person_then_allows(issuer: str, tmp_path: Path) -> None:
    from toolwire.auth import OAuth

    redirect_uri = "http://127.0.0.1:9/callback"
    asked: list[str] = []
    async with deployment(issuer, tmp_path / "auth.sqlite3") as served, httpx.AsyncClient(timeout=30.0) as browser:

        async def authorize(url: str) -> str:
            asked.append(query_of(url)["scope"])
            return await browse(browser, url, redirect_uri)

        auth = OAuth(redirect_uri=redirect_uri, authorize=authorize, scopes=["tools"])
        async with Client(served.url, auth=auth) as client:
            assert (await client.call_tool("reset", {})).content[0].text == "reset done"
            assert (await client.call_tool("whoami", {})).content[0].text.endswith("with admin tools")
    assert asked == ["tools", "tools admin"]  # the first sign-in, then the step-up the 403 asked for


@pytest.mark.parametrize("path", ["/.well-known/oauth-authorization-server", "/oauth/jwks"])
async def test_head_on_the_metadata_and_keys_answers_the_headers_of_get_without_a_body(
    issuer: str, tmp_path: Path, path: str
) -> None:
    """At the ASGI level: toolwire's HTTP server and uvicorn drop a HEAD body themselves, but
    not every ASGI server does."""
    async with deployment(issuer, tmp_path / "auth.sqlite3") as served:
        host = served.issuer.removeprefix("http://")
        answers = {method: await asgi_request(served.app, method, path, host) for method in ("GET", "HEAD")}
    (get_start, get_body), (head_start, head_body) = answers["GET"], answers["HEAD"]
    assert get_body and head_body == b""
    assert head_start == get_start  # the same status and headers, Content-Length the GET body's
    assert (b"content-length", str(len(get_body)).encode()) in head_start["headers"]


async def asgi_request(app: Any, method: str, path: str, host: str) -> tuple[dict[str, Any], bytes]:
    """One request to the ASGI ``app``: (its ``http.response.start`` message, the body sent)."""
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", host.encode())],
        "client": ("127.0.0.1", 50000),
        "http_version": "1.1",
        "scheme": "http",
    }
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent[0], b"".join(message.get("body", b"") for message in sent[1:])
