"""Authorization, server side: a toolwire HTTP server as an OAuth 2.1 protected resource, in
both eras, against tokens from a real HTTP token issuer (keys fetched over HTTP)."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support.httpserve import (
    BASE,
    InProcess,
    fresh_server,
    legacy_call,
    modern_call,
    modern_headers,
    toolwire_http,
)
from tests.support.tokenissuer import TokenIssuer
from toolwire import Server
from toolwire.auth import Identity, IntrospectionVerifier, ProtectedResource
from toolwire.auth.client.challenge import read_challenge
from toolwire.client import Client, ServerError

ERAS = ["2025-11-25", "2026-07-28"]
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


VAULT = str(Path(__file__).resolve().parents[1] / "servers" / "vault.py")


def protected_server() -> Server:
    return fresh_server(VAULT)  # type: ignore[no-any-return]


class Protected:
    """The vault server behind ``auth``, served on this loop; ``url`` and ``resource``."""

    def __init__(self, issuer: TokenIssuer, **options: Any) -> None:
        self.issuer = issuer
        self.options = options
        self.url = ""

    async def __aenter__(self) -> Protected:
        listener = socket.socket()  # the resource URI is known before the app exists
        listener.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
        verifier = self.options.pop("verifier", None)
        if verifier is None:
            self.auth = ProtectedResource.for_issuer(self.issuer.url, self.url, **self.options)
        else:
            self.auth = ProtectedResource(self.url, [self.issuer.url], verifier, **self.options)
        self._served = InProcess(protected_server().http_app(auth=self.auth), listener=listener)
        await self._served.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._served.__aexit__(*exc)


@pytest.fixture
async def issuer() -> AsyncIterator[TokenIssuer]:
    async with TokenIssuer() as running:
        yield running


@pytest.fixture
async def vault(issuer: TokenIssuer) -> AsyncIterator[Protected]:
    async with Protected(issuer, scopes_supported=["tools", "admin"]) as running:
        yield running


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def challenge(response: httpx.Response) -> dict[str, str]:
    """The parameters of the ``Bearer`` challenge in ``WWW-Authenticate``."""
    found = read_challenge(response.headers["www-authenticate"])
    assert found is not None and found[0] == "bearer", response.headers["www-authenticate"]
    return found[1]


async def test_the_metadata_is_served_at_both_well_known_paths(vault: Protected, issuer: TokenIssuer) -> None:
    origin = vault.url.removesuffix("/mcp")
    async with httpx.AsyncClient() as http:
        for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
            response = await http.get(origin + path)
            assert response.status_code == 200, path
            assert response.headers["access-control-allow-origin"] == "*"
            assert response.json() == {
                "resource": vault.url,
                "authorization_servers": [issuer.url],
                "bearer_methods_supported": ["header"],
                "scopes_supported": ["tools", "admin"],
            }
        refused = await http.post(origin + "/.well-known/oauth-protected-resource")
        assert refused.status_code == 405 and refused.headers["allow"] == "GET, HEAD"


@pytest.mark.parametrize("era", ERAS)
async def test_a_request_without_a_token_gets_401_and_where_to_get_one(vault: Protected, era: str) -> None:
    body, headers = (
        (INIT, BASE) if era != "2026-07-28" else (modern_call("whoami"), modern_headers("tools/call", "whoami"))
    )
    async with httpx.AsyncClient() as http:
        response = await http.post(vault.url, json=body, headers=headers)
    assert response.status_code == 401
    assert challenge(response) == {
        "scope": "tools admin",
        "resource_metadata": vault.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"),
    }
    assert response.json()["error"]["message"] == "Unauthorized: this server needs an OAuth access token"


@pytest.mark.parametrize("era", ERAS)
async def test_the_caller_reaches_tools_through_the_context(vault: Protected, issuer: TokenIssuer, era: str) -> None:
    token = issuer.token(vault.url, scope="tools")
    async with Client(vault.url, protocol=era, headers=bearer(token)) as client:
        result = await client.call_tool("whoami", {})
        assert result.content[0].text == "alice via test-client with tools"


@pytest.mark.parametrize("era", ERAS)
async def test_what_needs_a_scope_is_hidden_and_refused_with_403_until_granted(
    vault: Protected, issuer: TokenIssuer, era: str
) -> None:
    plain = issuer.token(vault.url, scope="tools")
    async with Client(vault.url, protocol=era, headers=bearer(plain)) as client:
        assert [tool.name for tool in await client.list_tools()] == ["whoami"]
        assert [resource.uri for resource in await client.list_resources()] == ["public://notes"]
        assert await client.list_prompts() == []
        with pytest.raises(ServerError, match="the tool 'reset' needs the scope admin"):
            await client.call_tool("reset", {})
    admin = issuer.token(vault.url, scope="tools admin")
    async with Client(vault.url, protocol=era, headers=bearer(admin)) as client:
        assert [tool.name for tool in await client.list_tools()] == ["whoami", "reset"]
        assert (await client.call_tool("reset", {})).content[0].text == "reset done"
        assert (await client.read_resource("secret://plans"))[0].text == "the plans"
        assert [prompt.name for prompt in await client.list_prompts()] == ["audit_prompt"]


@pytest.mark.parametrize("era", ERAS)
async def test_insufficient_scope_names_every_scope_the_call_needs(
    vault: Protected, issuer: TokenIssuer, era: str
) -> None:
    token = issuer.token(vault.url, scope="tools")
    async with httpx.AsyncClient(headers=bearer(token)) as http:
        if era == "2026-07-28":
            response = await http.post(
                vault.url, json=modern_call("reset"), headers=modern_headers("tools/call", "reset")
            )
        else:
            opened = await http.post(vault.url, json=INIT, headers=BASE)
            session = {"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": era}
            response = await http.post(vault.url, json=legacy_call("reset"), headers={**BASE, **session})
    assert response.status_code == 403
    assert challenge(response) == {
        "error": "insufficient_scope",
        "scope": "admin",
        "resource_metadata": vault.auth.metadata_url,
        "error_description": "the tool 'reset' needs the scope admin",
    }
    assert response.json()["id"] == 1


def bad_token(kind: str, issuer: TokenIssuer, audience: str) -> str:
    """A token of the ``kind`` that must be refused."""
    forever = 2**31
    if kind == "expired":
        return issuer.token(audience, lifetime=-120)
    if kind == "not yet valid":
        return issuer.token(audience, nbf=int(time.time()) + 600)
    if kind == "for another server":
        return issuer.token("http://127.0.0.1:1/mcp")
    if kind == "from another issuer":
        return issuer.token(audience, iss="http://evil.example")
    if kind == "unsigned":
        return jwt.encode({"sub": "x", "aud": audience, "iss": issuer.url, "exp": forever}, None, algorithm="none")
    if kind == "signed with a shared secret":
        claims = {"aud": audience, "iss": issuer.url, "exp": forever}
        return jwt.encode(claims, "a shared secret of thirty-two bytes!", algorithm="HS256")
    if kind == "badly signed":
        return issuer.token(audience)[:-6] + "AAAAAA"
    if kind == "signed by a key not published":
        issuer.keys["nope"] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        return issuer.token(audience, kid="nope")
    if kind == "malformed":
        return "not-a-jwt"
    if kind == "oversized":
        return "x" * 20_000
    if kind == "with an expiry that is not a number":
        return issuer.token(audience, exp="tomorrow")
    if kind == "with a critical header":
        claims = {"aud": audience, "iss": issuer.url, "exp": forever}
        return jwt.encode(
            claims, issuer.keys["rsa-1"], algorithm="RS256", headers={"kid": "rsa-1", "crit": ["x"], "x": 1}
        )
    assert kind == "without an expiry"
    return issuer.token(audience, drop=("exp",))


WHY = {
    "expired": "the token has expired",
    "not yet valid": "the token is not valid yet",
    "for another server": "the token is not for this server",
    "from another issuer": "the token was not issued by",
    "unsigned": "the token's signing algorithm 'none' is not accepted",
    "signed with a shared secret": "the token's signing algorithm 'HS256' is not accepted",
    "badly signed": "signature does not verify",
    "signed by a key not published": "key 'nope' that the authorization server does not publish",
    "malformed": "the token is malformed",
    "oversized": "the token is 20000 bytes; at most 16384 are accepted",
    "without an expiry": "the token has no 'exp' claim",
    "with an expiry that is not a number": "the token's 'exp' claim is not a number",
    "with a critical header": "critical header parameters this server does not understand",
}


@pytest.mark.parametrize("kind", list(WHY))
async def test_bad_tokens_are_refused_with_401_and_never_logged(
    vault: Protected, issuer: TokenIssuer, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    token = bad_token(kind, issuer, vault.url)
    caplog.set_level(logging.DEBUG)
    async with httpx.AsyncClient() as http:
        response = await http.post(
            vault.url, json=modern_call("whoami"), headers={**modern_headers("tools/call", "whoami"), **bearer(token)}
        )
    assert response.status_code == 401, response.text
    found = challenge(response)
    assert found["error"] == "invalid_token" and WHY[kind] in found["error_description"], found
    assert WHY[kind] in response.json()["error"]["message"]
    assert token not in caplog.text and token[-40:] not in caplog.text and token not in response.text


async def test_the_clock_leeway_applies_to_the_expiry(vault: Protected, issuer: TokenIssuer) -> None:
    """30 s of leeway by default: a token 10 s past its ``exp`` is served (and again, from the
    cache), one 40 s past is refused."""
    headers = modern_headers("tools/call", "whoami")
    async with httpx.AsyncClient() as http:
        late = bearer(issuer.token(vault.url, lifetime=-10))
        for _ in range(2):
            response = await http.post(vault.url, json=modern_call("whoami"), headers={**headers, **late})
            assert response.status_code == 200, response.text
        too_late = bearer(issuer.token(vault.url, lifetime=-40))
        response = await http.post(vault.url, json=modern_call("whoami"), headers={**headers, **too_late})
        assert response.status_code == 401 and "expired" in challenge(response)["error_description"]


async def test_a_header_that_is_not_bearer_is_refused(vault: Protected) -> None:
    async with httpx.AsyncClient() as http:
        response = await http.post(vault.url, json=INIT, headers={**BASE, "Authorization": "Basic YWxpY2U6cHc="})
    assert response.status_code == 401
    assert challenge(response)["error_description"] == "the Authorization header must be 'Bearer <access token>'"


async def test_keys_are_fetched_once_and_again_only_for_a_new_key(vault: Protected, issuer: TokenIssuer) -> None:
    for scope in ("tools", "tools admin", "tools"):
        async with Client(vault.url, protocol="2026-07-28", headers=bearer(issuer.token(vault.url, scope=scope))) as c:
            await c.call_tool("whoami", {})
    assert issuer.fetches == 1
    kid = issuer.rotate()
    async with Client(vault.url, protocol="2026-07-28", headers=bearer(issuer.token(vault.url, kid=kid))) as client:
        assert (await client.call_tool("whoami", {})).content[0].text.startswith("alice")
    assert issuer.fetches == 2
    # Made-up key ids do not make the server fetch the keys again and again.
    claims = {"aud": vault.url, "iss": issuer.url, "exp": 2**31}
    async with httpx.AsyncClient() as http:
        for number in range(3):
            forged = jwt.encode(claims, issuer.keys[kid], algorithm="RS256", headers={"kid": f"made-up-{number}"})
            headers = {**modern_headers("tools/call", "whoami"), **bearer(forged)}
            assert (await http.post(vault.url, json=modern_call("whoami"), headers=headers)).status_code == 401
    assert issuer.fetches == 2


async def test_legacy_sessions_belong_to_the_caller_that_opened_them(vault: Protected, issuer: TokenIssuer) -> None:
    alice, bob = issuer.token(vault.url, subject="alice"), issuer.token(vault.url, subject="bob")
    async with httpx.AsyncClient() as http:
        opened = await http.post(vault.url, json=INIT, headers={**BASE, **bearer(alice)})
        session = {"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        call = legacy_call("whoami")
        assert (await http.post(vault.url, json=call, headers={**BASE, **session, **bearer(alice)})).status_code == 200
        stolen = await http.post(vault.url, json=call, headers={**BASE, **session, **bearer(bob)})
        assert stolen.status_code == 404
        assert (await http.delete(vault.url, headers={**session, **bearer(bob)})).status_code == 404
        assert (await http.delete(vault.url, headers={**session, **bearer(alice)})).status_code == 200


async def test_a_broader_scope_implies_the_narrower_ones(issuer: TokenIssuer) -> None:
    async with (
        Protected(issuer, scope_hierarchy={"root": ["admin", "tools"]}) as vault,
        Client(vault.url, headers=bearer(issuer.token(vault.url, scope="root"))) as client,
    ):
        assert (await client.call_tool("reset", {})).content[0].text == "reset done"


async def test_scopes_every_request_needs_are_refused_with_403(issuer: TokenIssuer) -> None:
    async with Protected(issuer, required_scopes=["tools"]) as vault, httpx.AsyncClient() as http:
        token = issuer.token(vault.url, scope="other")
        response = await http.post(vault.url, json=INIT, headers={**BASE, **bearer(token)})
        assert response.status_code == 403
        assert challenge(response)["scope"] == "tools"
        assert challenge(response)["error_description"] == "this server needs the scope tools"


async def test_introspection_checks_each_token_with_the_authorization_server(issuer: TokenIssuer) -> None:
    verifier = IntrospectionVerifier(
        f"{issuer.url}/introspect", client_id="rs", client_secret="pw", audience="http://x"
    )
    async with Protected(issuer, verifier=verifier, cache_seconds=0) as vault:
        verifier.audiences = frozenset({vault.url})
        token = issuer.token(vault.url)
        async with Client(vault.url, protocol="2026-07-28", headers=bearer(token)) as client:
            assert (await client.call_tool("whoami", {})).content[0].text.startswith("alice")
            issuer.revoked.add(token)
            with pytest.raises(ServerError, match="not active"):
                await client.call_tool("whoami", {})
        other = issuer.token("http://127.0.0.1:1/mcp")
        async with httpx.AsyncClient() as http:
            response = await http.post(vault.url, json=INIT, headers={**BASE, **bearer(other)})
            assert response.status_code == 401 and "not for this server" in challenge(response)["error_description"]


async def test_a_verifier_of_your_own_and_the_verified_token_cache(issuer: TokenIssuer) -> None:
    seen: list[str] = []

    async def verify(token: str) -> Identity | None:
        seen.append(token)
        return Identity("carol", "cli", frozenset({"tools", "admin"})) if token == "let-me-in" else None

    async with Protected(issuer, verifier=verify) as vault:
        async with Client(vault.url, protocol="2026-07-28", headers=bearer("let-me-in")) as client:
            for _ in range(3):
                assert (await client.call_tool("whoami", {})).content[0].text == "carol via cli with admin tools"
        assert seen == ["let-me-in"]  # verified once, then cached
        async with httpx.AsyncClient() as http:
            response = await http.post(vault.url, json=INIT, headers={**BASE, **bearer("wrong")})
            assert response.status_code == 401 and challenge(response)["error_description"] == "the token is not valid"


def test_resource_identifiers_are_checked() -> None:
    with pytest.raises(ValueError, match="not an absolute http"):
        ProtectedResource("mcp.example.com", ["https://as"], lambda token: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="fragment"):
        ProtectedResource("https://mcp.example.com/mcp#x", ["https://as"], lambda token: None)  # type: ignore[arg-type,return-value]
    auth = ProtectedResource("HTTPS://MCP.Example.com/mcp/", ["https://as"], lambda token: None)  # type: ignore[arg-type,return-value]
    assert auth.resource == "https://mcp.example.com/mcp"
    assert auth.metadata_url == "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
    with pytest.raises(TypeError, match="takes a list"):
        Server("x").tool(scopes="admin", name="x")(lambda: None)  # type: ignore[arg-type]


def test_a_server_with_scopes_and_no_auth_warns(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        protected_server().http_app()
    assert "nothing checks them" in caplog.text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_official_sdk_client_reaches_a_protected_server(
    vault: Protected, issuer: TokenIssuer, mode: str
) -> None:
    import httpx2
    from mcp import Client as SdkClient
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError

    token = issuer.token(vault.url, scope="tools admin")
    async with httpx2.AsyncClient(headers=bearer(token)) as http:
        transport = streamable_http_client(vault.url, http_client=http)
        async with SdkClient(transport, mode=mode, read_timeout_seconds=10) as client:  # type: ignore[arg-type]
            assert [tool.name for tool in (await client.list_tools()).tools] == ["whoami", "reset"]
            result = await client.call_tool("whoami", {})
            assert result.content[0].text == "alice via test-client with admin tools"  # type: ignore[union-attr]
    async with httpx2.AsyncClient() as http:
        transport = streamable_http_client(vault.url, http_client=http)
        with pytest.raises(BaseExceptionGroup) as refused:
            async with SdkClient(transport, mode=mode, read_timeout_seconds=5) as client:  # type: ignore[arg-type]
                await client.list_tools()
    matched, _ = refused.value.split(MCPError)
    assert matched is not None and "Unauthorized: this server needs an OAuth access token" in str(matched.exceptions)


async def test_toolwire_run_takes_an_issuer_and_an_audience(issuer: TokenIssuer) -> None:
    options = ["--issuer", issuer.url, "--scope", "tools"]
    with toolwire_http(VAULT, *options) as (url, _process):  # the audience: http://127.0.0.1:PORT/mcp
        async with httpx.AsyncClient() as http:
            refused = await http.post(url, json=INIT, headers=BASE)
            assert refused.status_code == 401 and challenge(refused)["scope"] == "tools"
        async with Client(url, headers=bearer(issuer.token(url, scope="tools admin"))) as client:
            assert (await client.call_tool("whoami", {})).content[0].text == "alice via test-client with admin tools"


def test_auth_options_of_toolwire_run_that_do_not_fit_are_usage_errors() -> None:
    from tests.support.clirun import toolwire

    for options, said in (
        (
            ["--issuer", "https://as.example"],
            "--allow-host, --stateless, --uvicorn, --granian, --issuer, --forwarded-allow-ips and "
            "--max-connections-per-client go with --http",
        ),
        (["--http", "8", "--audience", "https://x/mcp"], "--audience and --scope go with --issuer"),
        (
            ["--http", "8", "--issuer", "https://as", "--audience", "x.example"],
            "--issuer/--audience: 'x.example' is not",
        ),
    ):
        done = toolwire("run", VAULT, *options)
        assert done.returncode == 2 and said in done.stderr, done.stderr


async def test_keys_given_in_configuration_are_never_fetched(issuer: TokenIssuer) -> None:
    async with Protected(issuer, jwks=issuer.jwks()) as vault:
        for kid in ("rsa-1", "ec-1"):
            async with Client(vault.url, headers=bearer(issuer.token(vault.url, kid=kid))) as client:
                assert (await client.call_tool("whoami", {})).content[0].text.startswith("alice")
        async with httpx.AsyncClient() as http:
            unknown = issuer.token(vault.url, kid=issuer.rotate())
            response = await http.post(vault.url, json=INIT, headers={**BASE, **bearer(unknown)})
            assert response.status_code == 401
    assert issuer.fetches == 0


async def test_a_verifier_that_fails_is_a_503_and_keys_that_cannot_be_fetched_say_so(
    issuer: TokenIssuer, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(token: str) -> Identity | None:
        raise RuntimeError("the database is down")

    async with Protected(issuer, verifier=broken) as vault, httpx.AsyncClient() as http:
        response = await http.post(vault.url, json=INIT, headers={**BASE, **bearer("some-token")})
        assert response.status_code == 503 and "could not be checked" in response.json()["error"]["message"]
    assert "the token verifier failed" in caplog.text
    async with Protected(issuer, jwks_url="http://127.0.0.1:1/jwks") as vault, httpx.AsyncClient() as http:
        response = await http.post(vault.url, json=INIT, headers={**BASE, **bearer(issuer.token(vault.url))})
        assert response.status_code == 401
        assert (
            "signing keys could not be fetched (cannot reach http://127.0.0.1:1/jwks: ConnectError)"
            in challenge(response)["error_description"]
        )


def test_lists_differ_by_caller_while_some_tool_needs_scopes() -> None:
    server = Server("gates")
    server.add_tool(lambda: "x", name="open")
    assert not server.registry.gated
    server.add_tool(lambda: "x", name="admin", scopes=["admin"])
    server.add_tool(lambda: "x", name="audit", scopes=["admin"])
    assert server.registry.gated
    server.remove_tool("admin")
    assert server.registry.gated
    server.remove_tool("audit")
    assert not server.registry.gated


def test_a_caller_without_scopes_never_gets_the_page_of_a_caller_who_sees_everything() -> None:
    import orjson

    from toolwire.protocol.codec import codec_for

    catalog = protected_server().registry
    codec = codec_for("2025-11-25")

    def names(granted: frozenset[str] | None) -> list[str]:
        page = orjson.loads(catalog.page(codec, None, lambda result: result, granted))
        return [tool["name"] for tool in page["tools"]]

    assert names(None) == ["whoami", "reset"]  # nothing authenticated (stdio, in memory): all
    assert names(frozenset()) == ["whoami"]  # a token without scopes, after that page was cached
    assert names(frozenset({"admin"})) == ["whoami", "reset"]


async def test_an_issuer_that_is_down_is_asked_once_whatever_the_traffic(issuer: TokenIssuer) -> None:
    """Tokens arriving while the issuer's metadata fails share one discovery, and the requests
    after it are refused without asking again: 50 requests, one discovery (its two URLs)."""
    issuer.down = 0.3
    with toolwire_http(VAULT, "--issuer", issuer.url) as (url, _process):
        junk = jwt.encode({"aud": url, "iss": issuer.url, "exp": 2**31}, rsa.generate_private_key(65537, 2048), "RS256")
        async with httpx.AsyncClient(timeout=30) as http:

            async def refused() -> None:
                response = await http.post(url, json=INIT, headers={**BASE, **bearer(junk)})
                assert response.status_code == 401
                assert "publishes no signing keys that could be fetched" in challenge(response)["error_description"]

            await asyncio.gather(*(refused() for _ in range(25)))  # at once: one fetch for all
            for _ in range(25):  # after it failed: none
                await refused()
    assert issuer.discoveries == 2


async def test_discovery_is_tried_again_after_discovery_retry(issuer: TokenIssuer) -> None:
    issuer.down = 0.01
    async with Protected(issuer, discovery_retry=0.5) as vault, httpx.AsyncClient() as http:
        good = {**BASE, **bearer(issuer.token(vault.url))}
        assert (await http.post(vault.url, json=INIT, headers=good)).status_code == 401
        issuer.down = 0
        assert (await http.post(vault.url, json=INIT, headers=good)).status_code == 401  # not asked yet
        assert issuer.discoveries == 2
        await asyncio.sleep(0.6)
        assert (await http.post(vault.url, json=INIT, headers=good)).status_code == 200
        assert issuer.discoveries == 3


async def test_an_introspection_endpoint_that_is_down_is_not_asked_for_every_token(issuer: TokenIssuer) -> None:
    verifier = IntrospectionVerifier(f"{issuer.url}/introspect", failure_retry=3600)  # not over within the test
    issuer.down = 0.01
    async with Protected(issuer, verifier=verifier, cache_seconds=0) as vault, httpx.AsyncClient() as http:
        for number in range(20):
            junk = {**BASE, **bearer(f"junk-{number}")}
            response = await http.post(vault.url, json=INIT, headers=junk)
            assert response.status_code == 401
            assert (
                challenge(response)["error_description"] == "the token could not be checked: introspection answered 503"
            )
        assert issuer.introspections == 1
        issuer.down = 0
        verifier.failure_retry = 0  # the window over: the next token asks again
        good = {**BASE, **bearer(issuer.token(vault.url))}
        assert (await http.post(vault.url, json=INIT, headers=good)).status_code == 200
        assert issuer.introspections == 2
