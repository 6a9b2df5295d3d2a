"""The authorization server's own tokens: access tokens are JWTs (RFC 9068) signed ES256 with
a key of the server's, short-lived and bound to one client, one resource and one family (the
sign-in they descend from); refresh tokens are opaque random strings kept (as their digest)
in the state store.

The signing key is made once and kept in the store, so every replica signs and verifies
with the same one (or given as ``signing_key``, a PEM EC P-256 private key). With vault keys
(``keys``, :class:`~..vault.VaultKeys`) it is kept sealed as the provider's tokens are; a
key kept in the clear is sealed the first time a server with keys reads it. Without them it
is kept in the clear, and a warning says so once. A sealed key the keys do not open (or no
keys given) is a :class:`~..vault.VaultError` when the server starts. Access tokens
are verified in-process by the resource server's own :class:`~..verifiers.JWTVerifier`, and
their family must not have been revoked (revocation, a reused refresh token or a replayed
code revoke the family): :class:`InvalidToken` otherwise.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from typing import Any

from ....logs import get_logger
from ...identity import Identity
from ..vault import KEYS_VARIABLE, VaultError, VaultKeys
from ..verifiers import InvalidToken, JWTVerifier
from .state import AuthState

log = get_logger("toolwire.auth")

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
        keys: VaultKeys | None = None,
    ) -> None:
        self.issuer = issuer
        self.resource = resource
        self.state = state
        self.access_token_ttl = access_token_ttl
        self._given = signing_key.encode() if isinstance(signing_key, str) else signing_key
        self.keys = keys
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
                kid = random_token()[:16]
                await self.state.add("signing", "current", self._kept_key(kid, fresh), KEY_TTL)  # the first's wins
                kept = await self.state.get("signing", "current")
                if kept is None:
                    raise RuntimeError("the state store lost the signing key it was just given")
                key, kid = self._open_key(kept), kept["kid"]
                if "jwk" in kept and self.keys is not None:  # kept in the clear before keys were given
                    await self.state.put("signing", "current", self._kept_key(kid, key), KEY_TTL)
                elif self.keys is None:
                    log.warning(
                        "the authorization server's signing key is kept unencrypted in its store: set %s "
                        "(ID:KEY, as for the provider's tokens; see docs/authorization.md) to keep it sealed",
                        KEYS_VARIABLE,
                    )
            self._key = (kid, key)
        return self._key

    def _kept_key(self, kid: str, key: Any) -> dict[str, Any]:
        """The record of the signing key: sealed with the vault keys, or in the clear (said once)."""
        import jwt

        jwk = jwt.algorithms.ECAlgorithm.to_jwk(key)
        if self.keys is None:
            return {"kid": kid, "jwk": jwk}
        return {"kid": kid, "sealed": self.keys.seal(jwk.encode(), _slot(kid))}

    def _open_key(self, kept: dict[str, Any]) -> Any:
        """The private key of a kept record; :class:`VaultError` when it is sealed and the
        keys given do not open it."""
        import jwt

        if "jwk" in kept:
            return jwt.algorithms.ECAlgorithm.from_jwk(kept["jwk"])
        if self.keys is None:
            raise VaultError(f"the signing key in the store is sealed: set {KEYS_VARIABLE} to the keys that sealed it")
        jwk = self.keys.open(kept["sealed"], _slot(kept["kid"]), "the signing key")
        return jwt.algorithms.ECAlgorithm.from_jwk(jwk.decode())

    async def load(self) -> None:
        """Read (or make) the signing key now: :class:`VaultError` when it does not open."""
        await self._signing_key()

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


def _slot(kid: str) -> str:
    """What a sealed signing key is bound to (its id)."""
    return f"signing-key\n{kid}"
