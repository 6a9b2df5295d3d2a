"""The opaque strings a server hands out and takes back: list cursors, ``requestState``,
task and session ids. One spelling for each: base64url without padding (RFC 4648 §5), and
one strict reader for all of them.

A token is taken back only when it is exactly the string that was handed out: :func:`decode`
refuses what is not a string, is longer than its caller allows, holds characters outside
the alphabet (``+``, ``/``, ``=``, spaces, line breaks, anything not ASCII), or spells the
same bytes another way (other trailing bits in the last character). The check is that the
bytes, encoded again, give the very same string; a caller compares what the bytes say (a
MAC, a position) only after it. Positions in cursors are ASCII digits without leading
zeros and of bounded length (:func:`offset_cursor`, :func:`read_offset`).
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

#: Longer cursors are refused before they are decoded (toolwire's are under 40 characters).
MAX_CURSOR_CHARS = 128
#: The characters of base64url.
ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
#: Random bytes in an id (:func:`new_id`): 192 bits, 32 characters.
ID_BYTES = 24
_ID_CHARS = 32
#: Digits an offset may have in a cursor (far more than any list has items).
_MAX_OFFSET_DIGITS = 12


def encode(data: bytes) -> str:
    """``data`` as base64url without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def decode(token: Any, max_chars: int) -> bytes | None:
    """The bytes ``token`` encodes when it is exactly what :func:`encode` makes of them and at
    most ``max_chars`` long; ``None`` for anything else (see the module)."""
    if type(token) is not str or len(token) > max_chars or len(token) % 4 == 1 or not token.isascii():
        return None
    padded = token.encode("ascii").replace(b"-", b"+").replace(b"_", b"/") + b"=" * (-len(token) % 4)
    try:
        data = binascii.a2b_base64(padded, strict_mode=True)
    except binascii.Error:
        return None
    if encode(data) != token:  # other trailing bits, or '+' and '/' for '-' and '_'
        return None
    return data


def new_id() -> str:
    """An unguessable id (:data:`ID_BYTES` random bytes), never starting with ``-`` (a
    command line would take it for an option)."""
    import secrets  # here: hashlib and random cost a stdio server's start ~9 ms, and only ids need them

    while True:
        token = secrets.token_urlsafe(ID_BYTES)
        if token[0] != "-":
            return token


def is_id(token: Any) -> bool:
    """Whether ``token`` is spelled as :func:`new_id` spells ids (checked before an id that
    was not found is looked for elsewhere: a store, another replica)."""
    return type(token) is str and len(token) == _ID_CHARS and ALPHABET.issuperset(token)


def offset_cursor(kind: str, offset: int) -> str:
    """A cursor naming position ``offset`` of a list of ``kind``."""
    return encode(f"{kind}:{offset}".encode())


def read_offset(cursor: Any, kind: str) -> int | None:
    """The position a cursor of :func:`offset_cursor` names for ``kind``; ``None`` for any
    other string (or not a string)."""
    data = decode(cursor, MAX_CURSOR_CHARS)
    if data is None:
        return None
    named, _, offset = data.partition(b":")
    if (
        named != kind.encode()
        or not 0 < len(offset) <= _MAX_OFFSET_DIGITS
        or not offset.isdigit()  # bytes: ASCII digits only
        or offset[:1] == b"0"
    ):
        return None
    return int(offset)


def shown(token: Any) -> str:
    """``token`` for an error message: quoted, at most 40 of its characters and 80 of their
    quoted form (a character may be quoted as ten: ``\\U0001093a``)."""
    if type(token) is not str:
        return f"a {type(token).__name__}"
    size = min(len(token), 40)
    quoted = repr(token[:size])
    while len(quoted) > 80:
        size //= 2
        quoted = repr(token[:size])
    return quoted if size == len(token) else f"{quoted}... ({len(token)} characters)"


def invalid_cursor(cursor: Any, listing: str) -> str:
    """What a ``-32602`` for a cursor that was not handed out says (after ``Invalid params: ``)."""
    said = f"invalid cursor {shown(cursor)}: it was not handed out by {listing}"
    return said + "; pass back a nextCursor from an earlier page"
