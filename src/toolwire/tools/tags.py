"""Tags: labels on tools, resources and prompts that visibility rules pick them by
(:mod:`toolwire.server.visibility`). They stay on the server: no definition carries them."""

from __future__ import annotations

from collections.abc import Iterable


def tag_set(owner: str, tags: Iterable[str] | None) -> frozenset[str]:
    """``tags`` as a frozenset; ``ValueError`` naming ``owner`` for a tag that is not a
    non-empty string (a lone string is refused too: it would be read letter by letter)."""
    if tags is None:
        return frozenset()
    if isinstance(tags, str):
        raise ValueError(f"{owner}: tags must be a collection of strings, not the string {tags!r}")
    found = frozenset(tags)
    for tag in found:
        if not isinstance(tag, str) or not tag:
            raise ValueError(f"{owner}: a tag must be a non-empty string, not {tag!r}")
    return found
