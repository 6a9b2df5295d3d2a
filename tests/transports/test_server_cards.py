"""Server cards (SEP-2127) over real HTTP: served at ``<endpoint>/server-card`` with the media
type, CORS, caching and ``ETag`` that the extension's discovery rules ask for, valid against
the extension's own JSON Schema, public even behind ``auth=`` (whose needs the card
describes), and read back by ``fetch_card``; also the general hook the card is built on
(:meth:`Extension.documents`).

What is served is checked against the card's format written as a JSON Schema in
``tests/cards/schema.py``, apart from the code that builds and reads cards.
"""

from __future__ import annotations

import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cards.schema import CARDS as OFFICIAL
from tests.support.httpserve import InProcess, toolwire_http
from toolwire import Client, Extension, Server
from toolwire.auth import ProtectedResource
from toolwire.cards import CARD_MEDIA_TYPE, CardInvalid, ServerCards, card_url
from toolwire.client.cards import CardUnavailable, fetch_card
from toolwire.protocol.versions import SUPPORTED_VERSIONS
from toolwire.server.extensions import Document, Endpoint

CARDED = str(Path(__file__).parents[1] / "servers" / "carded.py")


@pytest.fixture(scope="module")
def served() -> Any:
    with toolwire_http(CARDED) as (url, _process):
        yield url


def official_errors(card: dict[str, Any]) -> list[str]:
    return [str(error) for error in OFFICIAL.iter_errors(card)]


async def test_the_card_is_served_where_the_sep_reserves_it(served: str) -> None:
    async with httpx.AsyncClient() as http:
        response = await http.get(card_url(served), headers={"Accept": CARD_MEDIA_TYPE})
    assert response.status_code == 200
    assert response.headers["content-type"] == CARD_MEDIA_TYPE
    assert response.headers["access-control-allow-origin"] == "*"
    assert response.headers["access-control-expose-headers"] == "ETag"
    assert response.headers["cache-control"] == "public, max-age=3600"
    assert response.headers["etag"].startswith('"')
    card = response.json()
    assert official_errors(card) == []
    assert card == {
        "$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
        "name": "com.example/weather",
        "version": "1.4.2",
        "description": "Forecasts and alerts for any city.",
        "title": "Weather",
        "websiteUrl": "https://weather.example.com",
        "repository": {"url": "https://github.com/example/weather", "source": "github"},
        "icons": [{"src": "https://weather.example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}],
        "remotes": [
            {
                "type": "streamable-http",
                "url": served,
                "headers": [
                    {"name": "X-Units", "description": "metric or imperial", "choices": ["metric", "imperial"]}
                ],
                "supportedProtocolVersions": list(SUPPORTED_VERSIONS),
            }
        ],
    }


async def test_the_etag_revalidates_and_browsers_may_ask(served: str) -> None:
    url = card_url(served)
    async with httpx.AsyncClient() as http:
        first = await http.get(url)
        tag = first.headers["etag"]
        unchanged = await http.get(url, headers={"If-None-Match": f'"other", W/{tag}'})
        changed = await http.get(url, headers={"If-None-Match": '"other"'})
        head = await http.head(url)
        preflight = await http.options(
            url, headers={"Origin": "https://elsewhere.example", "Access-Control-Request-Method": "GET"}
        )
        posted = await http.post(url, json={})
    assert unchanged.status_code == 304 and unchanged.content == b""
    assert unchanged.headers["etag"] == tag and unchanged.headers["cache-control"] == "public, max-age=3600"
    assert changed.status_code == 200 and changed.json() == first.json()
    assert head.status_code == 200 and head.content == b"" and head.headers["etag"] == tag
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == "*"
    assert preflight.headers["access-control-allow-methods"] == "GET"
    assert preflight.headers["access-control-allow-headers"] == "Content-Type, If-None-Match"
    assert posted.status_code == 405 and posted.headers["allow"] == "GET, HEAD, OPTIONS"


async def test_a_foreign_host_is_refused_as_at_the_endpoint(served: str) -> None:
    async with httpx.AsyncClient() as http:
        response = await http.get(card_url(served), headers={"Host": "evil.example"})
    assert response.status_code == 403


def raw_get(url: str, host: str) -> bytes:
    """The whole answer to a GET of ``url`` with the ``Host`` header ``host``, as sent."""
    parts = httpx.URL(url)
    with socket.create_connection((parts.host, parts.port or 80), timeout=10) as sock:
        sock.sendall(f"GET {parts.raw_path.decode()} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


@pytest.mark.parametrize("host", ["localhost:1@evil.example", "localhost:80/evil-path", "localhost#@evil.example"])
def test_a_host_that_is_not_one_never_reaches_the_card(served: str, host: str) -> None:
    answer = raw_get(card_url(served), host)
    assert answer.startswith(b"HTTP/1.1 400 ") and b"remotes" not in answer


def test_the_card_names_the_host_it_was_asked_at_when_that_is_one(served: str) -> None:
    answer = raw_get(card_url(served), "localhost:8000")
    card = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert card["remotes"][0]["url"] == "http://localhost:8000/mcp"


async def test_fetch_card_reads_it_from_the_card_or_the_endpoint(served: str) -> None:
    for url in (card_url(served), served, served + "/"):
        card = await fetch_card(url)
        assert card.name == "com.example/weather" and card.version == "1.4.2" and card.title == "Weather"
        assert card.repository is not None and card.repository.source == "github"
        (remote,) = card.remotes
        assert remote.type == "streamable-http" and remote.url == served
        assert remote.supported_protocol_versions == SUPPORTED_VERSIONS
        assert remote.headers[0].name == "X-Units" and remote.headers[0].choices == ("metric", "imperial")
    assert (await Client.fetch_card(served)).raw == card.raw


async def test_the_card_agrees_with_the_live_connection(served: str) -> None:
    card = await fetch_card(served)
    for protocol in ("2025-11-25", "2026-07-28"):
        async with Client(card.remotes[0].url, protocol=protocol) as client:
            assert client.server_info["version"] == card.version
            assert client.server_info.get("title") == card.title
            assert client.version in (card.remotes[0].supported_protocol_versions or ())
            assert client.server_extensions == {}  # the card extension has nothing to negotiate


async def test_fetch_card_says_why_there_is_none(served: str) -> None:
    origin = served.removesuffix("/mcp")
    with pytest.raises(CardUnavailable, match=r"no server card at .*/nowhere: HTTP 404, nor at .*/nowhere/server-card"):
        await fetch_card(origin + "/nowhere")
    with pytest.raises(CardUnavailable, match="HTTP 404"):
        await fetch_card(origin + "/nowhere/server-card")
    with pytest.raises(CardUnavailable, match="http"):
        await fetch_card("file:///etc/passwd")
    with pytest.raises(CardUnavailable, match="ConnectError"):
        await fetch_card(f"http://127.0.0.1:{_closed_port()}/mcp/server-card")


# -- behind auth= ---------------------------------------------------------------------------


@pytest.fixture
async def protected() -> AsyncIterator[str]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    auth = ProtectedResource(url, ["https://login.example.com"], _refuse, required_scopes=["weather:read"])
    server = Server("com.example/vault", "2.0.0", instructions="Secrets, kept.")
    server.add_extension(ServerCards())
    async with InProcess(server.http_app(auth=auth), listener=listener):
        yield url


async def test_the_card_is_public_behind_auth_and_says_what_it_needs(protected: str) -> None:
    async with httpx.AsyncClient() as http:
        endpoint = await http.post(protected, json={})
        response = await http.get(card_url(protected))
    assert endpoint.status_code == 401
    assert response.status_code == 200
    card = response.json()
    assert official_errors(card) == []
    (remote,) = card["remotes"]
    assert remote["url"] == protected
    (authorization,) = remote["headers"]
    metadata = protected.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    assert authorization["name"] == "Authorization" and authorization["value"] == "Bearer {token}"
    assert authorization["isRequired"] is True and authorization["isSecret"] is True
    assert metadata in authorization["description"] and "weather:read" in authorization["description"]
    assert authorization["variables"]["token"]["isSecret"] is True
    assert "Bearer" not in json.dumps(card["remotes"][0]["headers"][0]["variables"])  # no credential in it


def _refuse(token: str) -> None:
    return None


# -- options and mistakes -------------------------------------------------------------------


def test_options_the_server_cannot_know() -> None:
    server = Server("weather", "3.0.0")
    extension = ServerCards(
        name="com.example/weather",
        description="Forecasts.",
        url="https://{region}.weather.example.com/mcp",
        variables={"region": {"description": "where", "choices": ["eu", "us"], "default": "eu"}},
        meta={"com.example/tier": "free"},
        repository={"url": "https://git.example.com/weather", "source": "gitea", "subfolder": "server"},
    )
    server.add_extension(extension)
    card = extension.card(Endpoint("http://127.0.0.1:9/mcp", SUPPORTED_VERSIONS, None))
    assert official_errors(card) == []
    assert card["remotes"][0]["url"] == "https://{region}.weather.example.com/mcp"
    assert card["remotes"][0]["variables"]["region"]["choices"] == ["eu", "us"]
    assert card["_meta"] == {"com.example/tier": "free"}
    assert card["repository"]["subfolder"] == "server"


@pytest.mark.parametrize(
    ("server", "options", "problem"),
    [
        (Server("weather", instructions="Forecasts."), {}, "the server's name 'weather' is not reverse-DNS"),
        (Server("com.example/w"), {}, "description: needed"),
        (Server("com.example/w", instructions="x" * 101), {}, "description: needed"),
        (Server("com.example/w"), {"description": "x" * 101}, "description: has 101 characters, more than 100"),
        (Server("com.example/w", "^1.0"), {"description": "d"}, "version: '^1.0' is a range"),
        (Server("com.example/w"), {"description": "d", "url": "ftp://x"}, "remotes[0].url: 'ftp://x' does not start"),
        (
            Server("com.example/w"),
            {"description": "d", "headers": [{"value": "v"}]},
            r"remotes[0].headers[0].name: is required",
        ),
    ],
)
def test_a_card_that_would_not_be_valid_is_refused_when_added(
    server: Server, options: dict[str, Any], problem: str
) -> None:
    with pytest.raises(CardInvalid) as caught:
        server.add_extension(ServerCards(**options))
    assert any(problem in said for said in caught.value.problems), caught.value.problems


# -- the general hook --------------------------------------------------------------------------


class Catalog(Extension):
    """An extension of one public document at an absolute path, and one that fails."""

    id = "com.example/catalog"

    def documents(self) -> list[Document]:
        return [
            Document("/.well-known/example-catalog.json", "application/example+json", self.render, max_age=60),
            Document("broken", "application/json", self.broken),
        ]

    def render(self, endpoint: Endpoint) -> dict[str, Any]:
        return {"entries": [{"url": endpoint.url, "versions": len(endpoint.versions)}]}

    def broken(self, endpoint: Endpoint) -> dict[str, Any]:
        raise RuntimeError("boom")


async def test_an_extension_serves_documents_of_its_own() -> None:
    server = Server("documented")
    server.add_extension(Catalog())
    async with InProcess(server.http_app()) as url:
        origin = url.removesuffix("/mcp")
        async with httpx.AsyncClient() as http:
            found = await http.get(origin + "/.well-known/example-catalog.json")
            broken = await http.get(url + "/broken")
            missing = await http.get(url + "/server-card")
    assert found.status_code == 200 and found.headers["content-type"] == "application/example+json"
    assert found.headers["cache-control"] == "public, max-age=60"
    assert found.json() == {"entries": [{"url": url, "versions": len(SUPPORTED_VERSIONS)}]}
    assert broken.status_code == 500 and "boom" not in broken.text
    assert missing.status_code == 404


async def test_a_document_that_is_no_card_is_named_as_such() -> None:
    class NotACard(Extension):
        id = "com.example/not-a-card"

        def documents(self) -> list[Document]:
            return [Document("server-card", CARD_MEDIA_TYPE, lambda endpoint: {"name": "x", "remotes": "none"})]

    server = Server("odd")
    server.add_extension(NotACard())
    async with InProcess(server.http_app()) as url:
        with pytest.raises(CardInvalid) as caught:
            await fetch_card(url)
    said = str(caught.value)
    assert said.startswith(f"the server card at {url}/server-card is not valid: ")
    for problem in (
        "$schema: is missing",
        "name: needs at least 3 characters",
        "version: is required",
        "remotes: must be a list",
    ):
        assert problem in said


@pytest.mark.parametrize("path", ["", "/", "a/", "/a//b"])
def test_a_document_path_is_checked(path: str) -> None:
    with pytest.raises(ValueError, match="a document's path"):
        Document(path, "application/json", lambda endpoint: {})


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
