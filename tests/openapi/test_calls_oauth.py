"""Upstream OAuth with client credentials, through the client's own OAuth: an API (FastAPI,
over uvicorn on 127.0.0.1) that is a protected resource of a real authorization server
(oidc-provider) and verifies its JWTs; the OpenAPI server gets a token of its own for it."""

from __future__ import annotations

import socket
from typing import Annotated, Any

from fastapi import FastAPI, Header
from fastapi.responses import JSONResponse

from tests.support.httpserve import InProcess
from tests.support.oidcserve import oidc_provider
from toolwire import Server
from toolwire.auth import InvalidToken, JWTVerifier, OAuth
from toolwire.client import Client


def protected_api(resource: str, issuer: str) -> FastAPI:
    """An API whose ``GET /orders`` wants a JWT from ``issuer`` for ``resource`` (RFC 9728
    metadata says where to get one)."""
    app = FastAPI(title="Orders", version="1")
    verifier = JWTVerifier(issuer, resource)
    metadata_url = f"{resource}.well-known/oauth-protected-resource"

    @app.get("/.well-known/oauth-protected-resource", include_in_schema=False)
    async def metadata() -> dict[str, Any]:
        return {"resource": resource, "authorization_servers": [issuer], "scopes_supported": ["tools"]}

    @app.get("/orders", operation_id="list_orders")
    async def orders(authorization: Annotated[str | None, Header()] = None) -> Any:
        try:
            identity = await verifier.verify((authorization or "").removeprefix("Bearer "))
        except InvalidToken:
            challenge = f'Bearer resource_metadata="{metadata_url}"'
            return JSONResponse({"detail": "a token is needed"}, 401, headers={"WWW-Authenticate": challenge})
        return {"orders": ["tea"], "client": identity.client_id}

    return app


async def test_the_server_gets_its_own_token_with_client_credentials() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    resource = f"http://127.0.0.1:{listener.getsockname()[1]}/"
    with oidc_provider(resource) as issuer:
        async with InProcess(protected_api(resource, issuer), listener=listener, runner="uvicorn"):
            app = protected_api(resource, issuer)
            auth = OAuth(client_id="service", client_secret="service-secret", grant="client_credentials")
            server = Server.from_openapi(app.openapi(), base_url=resource.rstrip("/"), auth=auth)
            first, again = await list_orders(server), await list_orders(server)
            without = await list_orders(Server.from_openapi(app.openapi(), base_url=resource.rstrip("/")))
    assert first.structured == {"result": {"orders": ["tea"], "client": "service"}} == again.structured
    assert without.is_error and "HTTP 401 Unauthorized" in without.text


async def list_orders(server: Server) -> Any:
    async with Client(server) as client:
        return await client.call_tool("list_orders", {})
