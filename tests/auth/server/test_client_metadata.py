"""Client ID Metadata Documents: a client whose ID is the URL of its metadata signs in, and
the fetch of such documents keeps to its bounds (no private addresses unless allowed, no
redirects, a size cap, a time cap, the document naming itself)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from tests.auth.server.signing import authorize_url, browse, deployment, pkce, provider, query_of
from tests.support.httpserve import InProcess


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    with provider() as url:
        yield url


class Documents:
    """An HTTP server of client metadata documents on 127.0.0.1: ``/good.json`` (naming
    itself), ``/other.json`` (naming another client), ``/large.json``, ``/moved.json`` (a
    redirect) and ``/slow.json`` (never answered); it counts the requests it gets."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.base = ""
        self.release = asyncio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        path = scope["path"]
        self.requests.append(path)
        status, headers, body = 200, [(b"content-type", b"application/json")], b""
        if path == "/good.json":
            body = orjson.dumps(
                {
                    "client_id": f"{self.base}/good.json",
                    "client_name": "Metadata Client",
                    "redirect_uris": [REDIRECT],
                    "token_endpoint_auth_method": "none",
                }
            )
        elif path == "/other.json":
            body = orjson.dumps({"client_id": f"{self.base}/good.json", "redirect_uris": [REDIRECT]})
        elif path == "/large.json":
            body = b" " * (200 * 1024) + b"{}"
        elif path == "/moved.json":
            status, headers = 302, [(b"location", f"{self.base}/good.json".encode())]
        else:
            await self.release.wait()
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


REDIRECT = "http://127.0.0.1:9/callback"


@pytest.fixture
async def documents() -> AsyncIterator[Documents]:
    served = Documents()
    async with InProcess(served, lifespan="off") as url:
        served.base = url.removesuffix("/mcp")
        yield served
        served.release.set()


async def test_a_client_named_by_its_metadata_document_signs_in(
    issuer: str, tmp_path: Path, documents: Documents
) -> None:
    async with deployment(issuer, tmp_path / "auth.sqlite3", allow_private_client_metadata=True) as served:
        client_id = f"{documents.base}/good.json"
        verifier, challenge = pkce()
        async with httpx.AsyncClient(timeout=30.0) as browser:
            consent = await browser.get(authorize_url(served.issuer, client_id, REDIRECT, challenge))
            assert "Metadata Client" in consent.text
            back = await browse(browser, authorize_url(served.issuer, client_id, REDIRECT, challenge), REDIRECT)
            exchange = {
                "grant_type": "authorization_code",
                "code": query_of(back)["code"],
                "redirect_uri": REDIRECT,
                "code_verifier": verifier,
                "client_id": client_id,
            }
            tokens = await browser.post(f"{served.issuer}/oauth/token", data=exchange)
        assert tokens.status_code == 200 and tokens.json()["access_token"]
        assert documents.requests.count("/good.json") == 1  # fetched once, then cached


async def page_for(issuer: str, client_id: str) -> httpx.Response:
    _verifier, challenge = pkce()
    async with httpx.AsyncClient(timeout=30.0) as browser:
        return await browser.get(authorize_url(issuer, client_id, REDIRECT, challenge))


async def test_a_document_on_a_private_address_is_not_fetched(
    issuer: str, tmp_path: Path, documents: Documents
) -> None:
    port = documents.base.rsplit(":", 1)[1]
    async with deployment(issuer, tmp_path / "auth.sqlite3") as served:
        refused = await page_for(served.issuer, f"https://localhost:{port}/good.json")
        plain = await page_for(served.issuer, f"{documents.base}/good.json")
    assert refused.status_code == 400 and "non-public address 127.0.0.1" in refused.text
    assert plain.status_code == 400 and "is not an https URL" in plain.text
    assert documents.requests == []


@pytest.mark.parametrize(
    ("path", "said"),
    [
        ("/other.json", "names another client_id"),
        ("/large.json", "more than 65536 bytes"),
        ("/moved.json", "answered 302"),
        ("/slow.json", "did not arrive within 0.5 s"),
    ],
)
async def test_a_bad_document_is_refused_saying_why(
    issuer: str, tmp_path: Path, documents: Documents, path: str, said: str
) -> None:
    async with deployment(issuer, tmp_path / "auth.sqlite3", allow_private_client_metadata=True) as served:
        served.auth.clients.timeout = 0.5
        refused = await page_for(served.issuer, f"{documents.base}{path}")
    assert refused.status_code == 400 and said in refused.text
    assert "location" not in refused.headers
