"""Each person's live sign-ins, kept while the provider's tokens are (``allow_upstream_token``).

The vault keeps one record of the provider's tokens per person and provider, shared by every
client the person signed in with; so revoking one sign-in (RFC 7009, a reused refresh token,
a replayed code) must not take the tokens from the others. The store keeps, per person, the
families (sign-ins) issued and when each was last refreshed; when a family is revoked and no
other is left that is neither revoked nor past its refresh token's life, the provider's
tokens are forgotten. Changes to a person's record are made under a lock in the store (the
same way the vault's refresh is), so two replicas never lose each other's sign-in.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from .state import AuthState

if TYPE_CHECKING:
    from ..vault import TokenVault

KIND = "signins"
LOCK_KIND = "signins-lock"


class SignIns:
    """The live sign-ins of each person in ``state``; a family counts as live for
    ``lifetime`` seconds (the refresh token's) after it was last issued or refreshed."""

    def __init__(self, state: AuthState, vault: TokenVault, lifetime: float, *, lock_ttl: float = 10.0) -> None:
        self.state = state
        self.vault = vault
        self.lifetime = lifetime
        self.lock_ttl = lock_ttl

    async def seen(self, subject: str, family: str) -> None:
        """``family`` was issued or refreshed for ``subject`` now."""
        async with self._locked(subject):
            families = await self._live(subject)
            families[family] = time.time()
            await self.state.put(KIND, subject, {"families": families}, self.lifetime)

    async def ended(self, subject: str, family: str) -> None:
        """``family`` was revoked: forget ``subject``'s provider tokens when it was their last."""
        async with self._locked(subject):
            families = await self._live(subject)
            families.pop(family, None)
            if families:
                await self.state.put(KIND, subject, {"families": families}, self.lifetime)
                return
            await self.state.delete(KIND, subject)
            await self.vault.forget(subject)

    async def _live(self, subject: str) -> dict[str, float]:
        """The families kept for ``subject`` that are not revoked and not expired."""
        record = await self.state.get(KIND, subject)
        now = time.time()
        live: dict[str, float] = {}
        for family, at in (record or {}).get("families", {}).items():
            if at + self.lifetime > now and await self.state.get("revoked", family) is None:
                live[family] = at
        return live

    def _locked(self, subject: str) -> _Lock:
        return _Lock(self.state, subject, self.lock_ttl)


class _Lock:
    """The store's lock on one person's record: added atomically, waited for while another
    process holds it (the store cannot call back), taken over once its ``ttl`` has passed."""

    def __init__(self, state: AuthState, subject: str, ttl: float, poll: float = 0.02) -> None:
        self.state = state
        self.subject = subject
        self.ttl = ttl
        self.poll = poll

    async def __aenter__(self) -> None:
        while not await self.state.add(LOCK_KIND, self.subject, {"at": time.time()}, self.ttl):
            await asyncio.sleep(self.poll)

    async def __aexit__(self, *_exc: object) -> None:
        await self.state.delete(LOCK_KIND, self.subject)
