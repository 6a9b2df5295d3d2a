"""Signing keys from a JWKS URL, cached, refreshed when a token names a key not yet seen."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ...fetch import FetchFailed, fetch
from ...logs import get_logger

log = get_logger("toolwire.auth")


class KeyNotFound(LookupError):
    """No usable key for a token (its message says why, for the 401 the caller gets)."""


class JWKS:
    """The keys at ``url``: fetched on first use, kept ``max_age`` seconds, fetched again at
    once when a token names an unknown ``kid`` (such fetches at most once per ``min_refresh``
    seconds, so tokens with made-up key ids cannot make the server hammer the key endpoint).
    A fetch that fails keeps the keys already known. ``KeyNotFound`` when no key fits."""

    def __init__(self, url: str, *, max_age: float = 600.0, min_refresh: float = 30.0, timeout: float = 10.0) -> None:
        self.url = url
        self.max_age = max_age
        self.min_refresh = min_refresh
        self.timeout = timeout
        self._keys: dict[str | None, tuple[Any, str | None]] = {}  # kid -> (key, the alg it is for)
        self._fetched = float("-inf")
        self._looked_for = float("-inf")  # the last fetch for an unknown key id
        self._fetching: asyncio.Future[None] | None = None
        self._failure: str | None = None  # why the last fetch failed, while it is so

    @classmethod
    def static(cls, document: dict[str, Any]) -> JWKS:
        """Keys given as a JWKS document (``{"keys": [...]}``), never fetched."""
        keys = cls("", max_age=float("inf"), min_refresh=float("inf"))
        keys._keys = _parse(document)
        keys._fetched = time.monotonic()
        return keys

    def known(self, kid: str | None, algorithm: str) -> Any:
        """:meth:`key` without waiting, when the key is known and fresh (else ``None``)."""
        found = self._keys.get(kid)
        if found is None or found[1] not in (algorithm, None) or time.monotonic() - self._fetched > self.max_age:
            return None
        return found[0]

    async def key(self, kid: str | None, algorithm: str) -> Any:
        """The verification key (a ``cryptography`` key) for a token's ``kid`` and ``alg``."""
        now = time.monotonic()
        if now - self._fetched > self.max_age:
            await self._refresh()
        elif kid not in self._keys and now - self._looked_for > self.min_refresh:
            self._looked_for = now
            await self._refresh()
        found = self._keys.get(kid)
        if found is None and kid is None and len(self._keys) == 1:
            found = next(iter(self._keys.values()))
        if found is None and not self._keys and self._failure is not None:
            raise KeyNotFound(f"the authorization server's signing keys could not be fetched ({self._failure})")
        if found is None:
            named = f"key {kid!r}" if kid is not None else "a key (the token names none)"
            raise KeyNotFound(f"the token is signed with {named} that the authorization server does not publish")
        key, for_algorithm = found
        if for_algorithm is not None and for_algorithm != algorithm:
            raise KeyNotFound(f"the token says {algorithm} but its key is for {for_algorithm}")
        return key

    async def _refresh(self) -> None:
        if self._fetching is not None:  # one fetch at a time; the others wait for it
            await asyncio.shield(self._fetching)
            return
        self._fetching = asyncio.get_running_loop().create_future()
        try:
            self._keys = await self._fetch()
            self._failure = None
        except Exception as exc:  # a key server that fails must not fail requests with known keys
            log.warning("could not fetch the signing keys from %s: %s", self.url, exc)
            self._failure = str(exc) if isinstance(exc, FetchFailed) else f"{type(exc).__name__} from {self.url}"
        finally:
            self._fetched = time.monotonic()
            self._fetching.set_result(None)
            self._fetching = None

    async def _fetch(self) -> dict[str | None, tuple[Any, str | None]]:
        """The keys at the URL (:func:`toolwire.fetch.fetch`: its deadline, size cap and redirect rules)."""
        response = await fetch(self.url, headers={"accept": "application/json"}, timeout=self.timeout)
        if response.status != 200:
            raise ValueError(f"HTTP {response.status}")
        return _parse(response.json())


def _parse(document: Any) -> dict[str | None, tuple[Any, str | None]]:
    """The signing keys of a JWKS document by key id, with the algorithm each is for (if it
    says); keys of other uses, types or curves that cannot verify are left out."""
    import jwt

    keys: dict[str | None, tuple[Any, str | None]] = {}
    for data in document.get("keys", []) if isinstance(document, dict) else []:
        if not isinstance(data, dict) or data.get("use", "sig") != "sig":
            continue
        try:
            key = jwt.PyJWK(data).key
        except jwt.PyJWTError:
            continue  # a key type or curve this server cannot use
        algorithm = data.get("alg")
        keys[data.get("kid")] = (key, algorithm if isinstance(algorithm, str) else None)
    return keys
