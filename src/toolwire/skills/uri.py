"""``skill://`` URIs: a skill's path and its files' paths, percent-encoded segment by segment,
so that a URI never carries a raw space, newline, ``?`` or ``#``: the file ``q?x=1#frag.md``
is ``q%3Fx=1%23frag.md`` (``=`` is kept, as RFC 3986 allows in a path)."""

from __future__ import annotations

import urllib.parse

SCHEME = "skill://"
#: What a path segment keeps as it is besides letters, digits and ``-._~`` (RFC 3986
#: ``pchar``); everything else is percent-encoded as its UTF-8 bytes.
SEGMENT_SAFE = "!$&'()*+,;=:@"


def encode_path(path: str, escapes: bool = False) -> str:
    """``path`` (``/``-separated) as a URI's path, each segment percent-encoded; with
    ``escapes``, a ``%`` is taken to begin an escape already made and is kept."""
    safe = SEGMENT_SAFE + ("%" if escapes else "")
    return "/".join(urllib.parse.quote(segment, safe=safe) for segment in path.split("/"))
