"""DPoP (RFC 9449): proofs that the one presenting an access token holds the key it is bound
to. A client makes a key pair, sends a proof (a JWT signed by it, naming the method and URL)
with its token request and with every request that carries the token, and the server refuses
a token presented without a proof by its key."""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit


class DPoPKey:
    """A P-256 key pair for DPoP (ES256); ``pem`` restores one (PKCS#8, as :attr:`pem` gives)."""

    def __init__(self, pem: str | None = None) -> None:
        from ...extras import needs

        with needs("auth", "DPoPKey"):
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import ec

        if pem is None:
            self._key: Any = ec.generate_private_key(ec.SECP256R1())
        else:
            self._key = serialization.load_pem_private_key(pem.encode(), password=None)
        numbers = self._key.public_key().public_numbers()
        self.jwk = {
            "kty": "EC",
            "crv": "P-256",
            "x": _b64(numbers.x.to_bytes(32, "big")),
            "y": _b64(numbers.y.to_bytes(32, "big")),
        }

    @property
    def pem(self) -> str:
        from cryptography.hazmat.primitives import serialization

        return str(
            self._key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            ).decode()
        )

    def proof(self, method: str, url: str, access_token: str | None = None, nonce: str | None = None) -> str:
        """A fresh proof for one request: ``htm``, ``htu`` (the URL without query and
        fragment), ``iat``, a new ``jti``; ``ath`` binds it to ``access_token``, ``nonce``
        echoes the server's."""
        import jwt

        parts = urlsplit(url)
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = _b64(hashlib.sha256(access_token.encode()).digest())
        if nonce is not None:
            claims["nonce"] = nonce
        return jwt.encode(claims, self._key, algorithm="ES256", headers={"typ": "dpop+jwt", "jwk": self.jwk})


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
