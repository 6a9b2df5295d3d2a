"""The authorization server's own tokens: access tokens are JWTs (RFC 9068) signed ES256 with
a key of the server's, short-lived and bound to one client, one resource and one family (the
sign-in they descend from); refresh tokens are opaque random strings kept (as their digest)
in the state store.

The signing key is made once and kept in the store, so every replica signs and verifies
with the same one (or given as ``signing_key``, a PEM EC P-256 private key). Access tokens
are verified in-process by the resource server's own :class:`~..verifiers.JWTVerifier`, and
their family must not have been revoked (revocation, a reused refresh token or a replayed
code revoke the family): :class:`InvalidToken` otherwise.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import Any

from ...identity import Identity
from ..verifiers import InvalidToken, JWTVerifier
from .state import AuthState

#: A signing key is kept (practically) for ever: tokens signed with it must stay verifiable.
KEY_TTL = 10 * 365 * 24 * 3600.0


def random_token() -> str:
    """A fresh unguessable string (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def digest(secret: str) -> str:
    """How a secret (a code, a refresh token, a client secret) is kept: its SHA-256, in hex."""
    return hashlib.sha256(secret.encode()).hexdigest()


class Tokens:
    """Issues and verifies the access tokens of ``issuer`` for ``resource`` (see the module)."""

    def __init__(
        self,
        issuer: str,
        resource: str,
        state: AuthState,
        *,
        access_token_ttl: float = 900.0,
        signing_key: str | bytes | None = None,
    ) -> None:
        self.issuer = issuer
        self.resource = resource
        self.state = state
        self.access_token_ttl = access_token_ttl
        self._given = signing_key.encode() if isinstance(signing_key, str) else signing_key
        self._key: tuple[str, Any] | None = None  # (kid, private key)
        self._verifier: JWTVerifier | None = None

    async def _signing_key(self) -> tuple[str, Any]:
        if self._key is None:
            import jwt
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import ec

            if self._given is not None:
                key: Any = serialization.load_pem_private_key(self._given, password=None)
                kid = digest(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))[:16]
            else:
                fresh = ec.generate_private_key(ec.SECP256R1())
                record = {"kid": random_token()[:16], "jwk": jwt.algorithms.ECAlgorithm.to_jwk(fresh)}
                await self.state.add("signing", "current", record, KEY_TTL)  # the first replica's wins
                kept = await self.state.get("signing", "current")
                if kept is None:
                    raise RuntimeError("the state store lost the signing key it was just given")
                key, kid = jwt.algorithms.ECAlgorithm.from_jwk(kept["jwk"]), kept["kid"]
            self._key = (kid, key)
        return self._key

    async def jwks(self) -> dict[str, Any]:
        """The public keys, as a JWKS document."""
        import jwt
        import orjson

        kid, key = await self._signing_key()
        public = orjson.loads(jwt.algorithms.ECAlgorithm.to_jwk(key.public_key()))
        return {"keys": [{**public, "kid": kid, "use": "sig", "alg": "ES256"}]}

    async def access_token(self, grant: dict[str, Any]) -> str:
        """A signed access token for a grant (``subject``, ``client_id``, ``scope``,
        ``resource``, ``family`` and what the person's identity said: ``email``, ``name``,
        ``groups``)."""
        import jwt

        kid, key = await self._signing_key()
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": grant["subject"],
            "aud": grant["resource"],
            "client_id": grant["client_id"],
            "scope": grant["scope"],
            "iat": now,
            "exp": now + int(self.access_token_ttl),
            "jti": random_token(),
            "fam": grant["family"],
        }
        for name in ("email", "name", "groups"):
            if grant.get(name):
                claims[name] = grant[name]
        return jwt.encode(claims, key, algorithm="ES256", headers={"kid": kid, "typ": "at+jwt"})

    async def verify(self, token: str) -> Identity:
        """The identity of one of this server's access tokens; :class:`InvalidToken` when it
        does not verify, is for another resource, or its family was revoked."""
        if self._verifier is None:
            self._verifier = JWTVerifier(self.issuer, self.resource, jwks=await self.jwks(), algorithms=["ES256"])
        identity = await self._verifier.verify(token)
        family = identity.claims.get("fam")
        if not isinstance(family, str) or await self.state.get("revoked", family) is not None:
            raise InvalidToken("the token was revoked: sign in again")
        return identity

    async def revoke_family(self, family: str, lifetime: float) -> None:
        """Revoke every token of a sign-in (kept as long as any of its tokens could live)."""
        await self.state.put("revoked", family, {"at": time.time()}, lifetime)
