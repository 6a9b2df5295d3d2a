"""The upstream provider's tokens, kept for the people who signed in, so that a tool may call
the provider's API on their behalf (``ctx.upstream_token()``, when the operator allows it).

:class:`TokenVault` keeps one record per (subject, upstream) in the authorization server's
store (SQLite by default, Redis for replicas), sealed with AES-256-GCM: the key is the
operator's (:class:`VaultKeys`, from an environment variable or a file, never in the store),
the record's slot (subject and upstream) is the associated data, so a sealed record moved
to another person's slot does not open. Each record names the id of the key that sealed it:
a new key is put first and encrypts from then on, the old ones still open what they sealed
until it is written again (at its next refresh or sign-in).

A token near its expiry is refreshed once, however many requests and replicas ask at the
same moment: in a process, the askers share one refresh; across processes, the one that
adds the record's lock in the store refreshes, and the others wait for its record (the
provider may rotate refresh tokens: a second refresh with the same one would fail, and
with some providers end the person's grant).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import os
import secrets
import time
from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import orjson

from ...errors import ToolwireError
from ...extras import needs
from .upstream import Upstream, UpstreamError, UpstreamTokens

if TYPE_CHECKING:
    from .authorization.state import AuthState

#: Where :meth:`VaultKeys.from_env` reads the keys: ``ID:KEY`` pairs (the key 32 bytes in
#: base64url), separated by commas or lines; the first one seals.
KEYS_VARIABLE = "TOOLWIRE_VAULT_KEYS"
#: ... or the file this names (same format).
KEYS_FILE_VARIABLE = "TOOLWIRE_VAULT_KEYS_FILE"

TOKENS_KIND = "upstream-tokens"
LOCK_KIND = "upstream-refresh"
Record = dict[str, Any]


class VaultError(ToolwireError):
    """The vault cannot be used as configured (no key, a malformed key), or a record cannot
    be opened (sealed with a key no longer configured, or altered)."""


class NoUpstreamToken(ToolwireError):
    """There is no usable upstream token for the caller: they have not signed in through the
    authorization server since it began keeping tokens, or the provider's token expired and
    cannot be refreshed (the message says which: the person must sign in again)."""


class VaultKeys:
    """AES-256-GCM keys by id; the first seals, every one opens what it sealed.
    ``VaultError`` for a key that is not 32 bytes or an id given twice;
    :class:`~toolwire.extras.ExtraMissing` without the ``auth`` extra."""

    def __init__(self, keys: Mapping[str, bytes]) -> None:
        with needs("auth", "the token vault"):
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        if not keys:
            raise VaultError("the vault needs at least one key")
        for key_id, key in keys.items():
            if len(key) != 32:
                raise VaultError(f"the vault key {key_id!r} is {len(key)} bytes, not 32 (AES-256)")
        self.current = next(iter(keys))
        self._ciphers = {key_id: AESGCM(key) for key_id, key in keys.items()}

    @classmethod
    def parse(cls, text: str) -> VaultKeys:
        """Keys written as ``ID:KEY`` pairs (base64url keys) separated by commas or lines."""
        keys: dict[str, bytes] = {}
        for pair in text.replace(",", "\n").split():
            key_id, colon, encoded = pair.partition(":")
            if not colon or not key_id:
                raise VaultError("a vault key is written ID:KEY (the key 32 random bytes in base64url)")
            if key_id in keys:
                raise VaultError(f"the vault key id {key_id!r} is given twice")
            try:
                keys[key_id] = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
            except (binascii.Error, ValueError):
                raise VaultError(f"the vault key {key_id!r} is not base64url") from None
        return cls(keys)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> VaultKeys:
        """The keys in ``TOOLWIRE_VAULT_KEYS``, or the file ``TOOLWIRE_VAULT_KEYS_FILE`` names;
        :class:`VaultError` saying how to make one when neither is set."""
        environ = os.environ if environ is None else environ
        if environ.get(KEYS_VARIABLE):
            return cls.parse(environ[KEYS_VARIABLE])
        path = environ.get(KEYS_FILE_VARIABLE)
        if path:
            try:
                with open(path, encoding="utf-8") as file:
                    return cls.parse(file.read())
            except OSError as exc:
                raise VaultError(f"cannot read the vault keys from {path}: {exc.strerror}") from None
        raise VaultError(
            f"keeping the provider's tokens needs a key: set {KEYS_VARIABLE}=1:KEY, with KEY from "
            f'`python -c "import secrets; print(secrets.token_urlsafe(32))"` (or {KEYS_FILE_VARIABLE})'
        )

    @classmethod
    def configured(cls, environ: Mapping[str, str] | None = None) -> VaultKeys | None:
        """:meth:`from_env` when ``TOOLWIRE_VAULT_KEYS`` or ``_FILE`` is set, else ``None``."""
        environ = os.environ if environ is None else environ
        return cls.from_env(environ) if environ.get(KEYS_VARIABLE) or environ.get(KEYS_FILE_VARIABLE) else None

    @staticmethod
    def generate() -> str:
        """A new key, base64url: what goes after ``ID:``."""
        return base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()

    def seal(self, data: bytes, slot: str) -> Record:
        """``data`` encrypted with the current key, bound to ``slot``."""
        nonce = secrets.token_bytes(12)
        sealed = self._ciphers[self.current].encrypt(nonce, data, slot.encode())
        return {"kid": self.current, "nonce": _b64(nonce), "sealed": _b64(sealed)}

    def open(self, record: Record, slot: str, what: str = "the provider's tokens") -> bytes:
        """What :meth:`seal` sealed for ``slot``; :class:`VaultError` (about ``what``) when
        its key is not configured or the record was altered or moved."""
        from cryptography.exceptions import InvalidTag

        cipher = self._ciphers.get(str(record.get("kid")))
        if cipher is None:
            raise VaultError(f"{what} cannot be opened: sealed with the key {record.get('kid')!r}, no longer given")
        try:
            return cipher.decrypt(_unb64(record["nonce"]), _unb64(record["sealed"]), slot.encode())
        except (InvalidTag, KeyError, TypeError, AttributeError, binascii.Error, ValueError):
            raise VaultError(f"{what} cannot be opened: the record was altered or moved, or the key is wrong") from None


class TokenVault:
    """The tokens ``upstream`` gave the people who signed in, sealed in ``store`` with ``keys``.

    ``keep_for``: how long a record is kept after it was last written (the refresh token's
    life at most providers); ``refresh_margin``: a token this many seconds from its expiry
    is refreshed before it is handed out; ``lock_ttl``: how long a replica's refresh may hold
    the record's lock (past it, another may take over); ``wait``: how long a replica waits for
    another's refresh before giving up with :class:`UpstreamError`.
    """

    def __init__(
        self,
        store: AuthState,
        upstream: Upstream,
        keys: VaultKeys | None = None,
        *,
        keep_for: float = 30 * 24 * 3600.0,
        refresh_margin: float = 60.0,
        lock_ttl: float = 30.0,
        wait: float = 40.0,
        poll: float = 0.05,
    ) -> None:
        self.store = store
        self.upstream = upstream
        self.keys = keys if keys is not None else VaultKeys.from_env()
        self.keep_for = keep_for
        self.refresh_margin = refresh_margin
        self.lock_ttl = lock_ttl
        self.wait = wait
        self.poll = poll
        self._refreshing: dict[str, asyncio.Future[UpstreamTokens]] = {}

    def slot(self, subject: str) -> str:
        """The record's key: the person and the provider."""
        return f"{self.upstream.name}\n{subject}"

    async def keep(self, subject: str, tokens: UpstreamTokens) -> None:
        """Keep ``tokens`` for ``subject`` (at sign-in), replacing any kept before."""
        slot = self.slot(subject)
        await self.store.put(TOKENS_KIND, slot, self._seal(tokens, slot), self._ttl(tokens))

    async def forget(self, subject: str) -> None:
        """Forget ``subject``'s tokens (sign-out, revocation)."""
        await self.store.delete(TOKENS_KIND, self.slot(subject))

    async def tokens(self, subject: str) -> UpstreamTokens:
        """``subject``'s current tokens, refreshed first when near expiry; :class:`NoUpstreamToken`
        when none are kept or they expired without a way to refresh them, :class:`UpstreamError`
        when the provider refuses the refresh or cannot be reached."""
        slot = self.slot(subject)
        tokens = await self._kept(slot)
        if not self._expiring(tokens):
            return tokens
        if tokens.refresh_token is None:
            return self._unrefreshable(tokens)
        running = self._refreshing.get(slot)
        if running is None:  # one refresh per process; the others share its outcome
            running = self._refreshing[slot] = asyncio.ensure_future(self._refresh(slot))
            running.add_done_callback(lambda _done: self._refreshing.pop(slot, None))
        return await asyncio.shield(running)

    async def access_token(self, subject: str) -> str:
        """``subject``'s current access token (see :meth:`tokens`)."""
        return (await self.tokens(subject)).access_token

    async def _refresh(self, slot: str) -> UpstreamTokens:
        """The refresh across replicas: whoever adds the lock refreshes; the others wait for
        its record, or take the lock over once it is let go or has expired."""
        deadline = time.monotonic() + self.wait
        while True:
            tokens = await self._kept(slot)
            if not self._expiring(tokens):
                return tokens  # another replica refreshed it
            if await self.store.add(LOCK_KIND, slot, {"at": time.time()}, self.lock_ttl):
                try:
                    return await self._refresh_holding_lock(slot)
                finally:
                    await self.store.delete(LOCK_KIND, slot)
            if time.monotonic() > deadline:
                raise UpstreamError(f"another server's refresh of the {self.upstream.name} token did not finish")
            await asyncio.sleep(self.poll)  # another process holds the lock; the store has no way to call back

    async def _refresh_holding_lock(self, slot: str) -> UpstreamTokens:
        tokens = await self._kept(slot)  # read again: another replica may have refreshed before the lock
        if not self._expiring(tokens):
            return tokens
        if tokens.refresh_token is None:
            return self._unrefreshable(tokens)
        fresh = await self.upstream.refresh(tokens)
        await self.store.put(TOKENS_KIND, slot, self._seal(fresh, slot), self._ttl(fresh))
        return fresh

    async def _kept(self, slot: str) -> UpstreamTokens:
        record = await self.store.get(TOKENS_KIND, slot)
        if record is None:
            raise NoUpstreamToken(f"no {self.upstream.name} token is kept for this person: they must sign in again")
        return self._open(record, slot)

    def _unrefreshable(self, tokens: UpstreamTokens) -> UpstreamTokens:
        """Tokens without a refresh token serve until they expire."""
        if tokens.expires_at is not None and tokens.expires_at <= time.time():
            raise NoUpstreamToken(
                f"the {self.upstream.name} token expired and the provider gave no refresh token: sign in again"
            )
        return tokens

    def _expiring(self, tokens: UpstreamTokens) -> bool:
        return tokens.expires_at is not None and tokens.expires_at - self.refresh_margin <= time.time()

    def _ttl(self, tokens: UpstreamTokens) -> float:
        """A record without a refresh token is of no use once its access token expired."""
        if tokens.refresh_token is None and tokens.expires_at is not None:
            return max(1.0, min(self.keep_for, tokens.expires_at - time.time()))
        return self.keep_for

    def _seal(self, tokens: UpstreamTokens, slot: str) -> Record:
        return self.keys.seal(orjson.dumps(asdict(tokens)), slot)

    def _open(self, record: Record, slot: str) -> UpstreamTokens:
        return UpstreamTokens(**orjson.loads(self.keys.open(record, slot)))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
