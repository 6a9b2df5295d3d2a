"""What the server side of authorization fetches of its own (signing keys, an issuer's
metadata, token introspection) is bounded as the client's requests are
(:func:`toolwire.fetch.fetch`), against a hostile server (``servers/hostile_cards.py``, a
real process on raw sockets): a body trickled past the timeout, a body past the size cap."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.httpserve import process_http
from toolwire.auth import IntrospectionVerifier
from toolwire.auth.server.jwks import JWKS, KeyNotFound
from toolwire.auth.server.verifiers import InvalidToken
from toolwire.fetch import FetchFailed, fetch

HOSTILE = str(Path(__file__).resolve().parents[1] / "servers" / "hostile_cards.py")


@pytest.fixture(scope="module")
def base() -> Iterator[str]:
    with process_http(sys.executable, HOSTILE, path="") as url:
        yield url


async def test_signing_keys_trickled_past_the_timeout_are_given_up_at_the_timeout(base: str) -> None:
    started = time.monotonic()
    with pytest.raises(KeyNotFound, match="did not answer in full within 1 s"):
        await JWKS(f"{base}/trickle/jwks", timeout=1).key("k", "RS256")
    with pytest.raises(InvalidToken, match="the token could not be checked"):
        await IntrospectionVerifier(f"{base}/trickle/introspect", timeout=1).verify("a-token")
    assert time.monotonic() - started < 5


async def test_a_body_past_the_cap_is_refused_before_it_is_read(base: str) -> None:
    with pytest.raises(FetchFailed, match="more than 1048576 bytes"):
        await fetch(f"{base}/huge/keys")
