"""A small token issuer for the authorization tests: it signs access tokens with keys of its
own and serves its metadata, its keys (JWKS) and token introspection over real HTTP on
127.0.0.1, so a server under test fetches and verifies exactly as it would in production.
Tokens of every kind a test needs (expired, for another audience, badly signed...) are made
with :meth:`TokenIssuer.token`. The end-to-end tests use a real authorization server
(oidc-provider) instead."""

from __future__ import annotations

import asyncio
import base64
import time
from typing import Any
from urllib.parse import parse_qs

import jwt
import orjson
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from tests.support.httpserve import InProcess


class TokenIssuer:
    """``async with TokenIssuer() as issuer``: serving at ``issuer.url``. ``fetches`` counts
    JWKS requests, ``discoveries`` requests for its metadata, ``introspections`` those for
    introspection; while ``down`` is set, both are a 503 after ``down`` seconds; ``rotate()`` publishes a new key; ``revoke(token)`` makes introspection
    call it inactive."""

    def __init__(self) -> None:
        self.keys: dict[str, Any] = {
            "rsa-1": rsa.generate_private_key(public_exponent=65537, key_size=2048),
            "ec-1": ec.generate_private_key(ec.SECP256R1()),
        }
        self.published = ["rsa-1", "ec-1"]
        self.fetches = 0
        self.discoveries = 0
        self.introspections = 0
        self.down = 0.0
        self.revoked: set[str] = set()
        self.url = ""

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            await self.app(scope, receive, send)

        self._server = InProcess(app)

    async def __aenter__(self) -> TokenIssuer:
        endpoint = await self._server.__aenter__()
        self.url = endpoint.removesuffix("/mcp")
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._server.__aexit__(*exc)

    def rotate(self) -> str:
        """Publish a new RSA key; its kid."""
        kid = f"rsa-{len(self.keys) + 1}"
        self.keys[kid] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.published.append(kid)
        return kid

    def token(
        self,
        audience: Any,
        *,
        subject: str = "alice",
        scope: str | None = "tools",
        lifetime: float = 300,
        kid: str = "rsa-1",
        algorithm: str | None = None,
        drop: tuple[str, ...] = (),
        **claims: Any,
    ) -> str:
        """A signed access token (RFC 9068 shape); ``claims`` override or add, ``drop`` removes."""
        now = int(time.time())
        body: dict[str, Any] = {
            "iss": self.url,
            "sub": subject,
            "aud": audience,
            "client_id": "test-client",
            "iat": now,
            "exp": now + int(lifetime),
            "jti": base64.urlsafe_b64encode(orjson.dumps([now, subject, time.perf_counter()])).decode(),
        }
        if scope is not None:
            body["scope"] = scope
        body.update(claims)
        for name in drop:
            body.pop(name, None)
        key = self.keys[kid]
        algorithm = algorithm or ("ES256" if isinstance(key, ec.EllipticCurvePrivateKey) else "RS256")
        return jwt.encode(body, key, algorithm=algorithm, headers={"kid": kid, "typ": "at+jwt"})

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid in self.published:
            public = self.keys[kid].public_key()
            algorithm = jwt.algorithms.ECAlgorithm if kid.startswith("ec") else jwt.algorithms.RSAAlgorithm
            data = orjson.loads(algorithm.to_jwk(public))
            data.update(kid=kid, use="sig", alg="ES256" if kid.startswith("ec") else "RS256")
            keys.append(data)
        return {"keys": keys}

    def introspect(self, token: str) -> dict[str, Any]:
        if token in self.revoked:
            return {"active": False}
        try:
            claims = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            return {"active": False}
        return {"active": claims.get("exp", 0) > time.time(), **claims}

    async def app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (message := await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        path = scope["path"]
        if path.startswith("/.well-known/"):
            self.discoveries += 1
        elif path == "/introspect":
            self.introspections += 1
        if (path.startswith("/.well-known/") or path == "/introspect") and self.down:
            await asyncio.sleep(self.down)
            await send({"type": "http.response.start", "status": 503, "headers": []})
            await send({"type": "http.response.body", "body": b"down for maintenance"})
            return
        if path == "/.well-known/oauth-authorization-server":
            answer: Any = {
                "issuer": self.url,
                "jwks_uri": f"{self.url}/jwks",
                "introspection_endpoint": f"{self.url}/introspect",
                "token_endpoint": f"{self.url}/token",
                "authorization_endpoint": f"{self.url}/authorize",
            }
        elif path == "/jwks":
            self.fetches += 1
            answer = self.jwks()
        elif path == "/introspect" and scope["method"] == "POST":
            token = parse_qs(body.decode()).get("token", [""])[0]
            answer = self.introspect(token)
        else:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        data = orjson.dumps(answer)
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": data})
