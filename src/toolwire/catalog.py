"""What a server offers, one kind at a time: tools, resources, resource templates, prompts.

A :class:`Catalog` keeps its items in registration order (deterministic, as 2026-07-28 asks),
hides and shows them, and tells listeners when it changes. Its list pages (``tools/list``,
``resources/list``, ...) are rendered and JSON-encoded once per protocol version and page, then
reused until the catalog changes: listing 1,000 tools costs a dictionary lookup. Changes made
in a :meth:`Catalog.batched` block tell the listeners once, at its end (a proxy taking 10,000
tools from its target, a mount copying them). A request may see the catalog through
:class:`Filter` rules as well (tags, per-caller and per-session visibility:
:mod:`toolwire.server.visibility`); pages are cached per rules too. Cursors are opaque
(base64url of the kind and an offset: :func:`toolwire.protocol.tokens.offset_cursor`); one that
does not decode, belongs to another kind, points past the end or is not spelled exactly as
handed out is refused, and pages are cached by offset, so no cursor a client makes up can grow
the cache.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Generic, Protocol, TypeVar

import orjson

from .protocol import tokens
from .protocol.codec import Codec

#: Encoded pages kept at most (versions x offsets x scope views x rules); past it the cache starts over.
MAX_CACHED_PAGES = 4096


class InvalidCursor(ValueError):
    """A list cursor that this catalog did not hand out."""


class Item(Protocol):
    """What a catalog holds: a definition in neutral terms, shown or hidden, the scopes a
    caller needs to see it (none: everyone) and its tags."""

    enabled: bool
    scopes: frozenset[str]
    tags: frozenset[str]

    @property
    def definition(self) -> dict[str, Any]: ...


T = TypeVar("T", bound=Item)


class Filter(Protocol):
    """Rules a request sees a catalog through (:class:`toolwire.server.visibility.Rules`):
    hashable, as they key cached pages."""

    def __hash__(self) -> int: ...

    def shows(self, catalog_kind: str, key: str, item: Any) -> bool:
        """Whether the item stored as ``key`` in a catalog of ``catalog_kind`` is shown."""


class Catalog(Generic[T]):
    """Items of one kind by key, in order; ``page_size=None`` lists them all in one page.

    ``kind`` names the list in results (``"tools"``, ``"resources"``...), ``noun`` one item
    in messages, and ``render`` turns one neutral definition into what a version's codec sends.
    """

    def __init__(
        self,
        kind: str,
        noun: str,
        render: Callable[[Codec, dict[str, Any]], dict[str, Any]],
        page_size: int | None = None,
    ) -> None:
        if page_size is not None and page_size < 1:
            raise ValueError("page_size must be at least 1, or None for a single page")
        self.kind = kind
        self.noun = noun
        self.page_size = page_size
        self._render_one = render
        self._items: dict[str, T] = {}
        #: Every item by key, enabled or not: the same dict the catalog keeps (read it, never
        #: change it; :meth:`get` is the look-up that leaves disabled items out). For hot
        #: paths that cannot afford a method call per look-up.
        self.by_key: Mapping[str, T] = self._items
        self._pages: dict[tuple[str, frozenset[frozenset[str]] | None, Filter | None, int], bytes] = {}
        self._gated: frozenset[frozenset[str]] = frozenset()  # the distinct scope sets items need
        self._listeners: dict[int, Callable[[], None]] = {}
        self._batching = 0  # depth of batched() blocks
        self._batch_changed = False

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: str) -> T | None:
        """The enabled item ``key``, or ``None``."""
        item = self._items.get(key)
        return item if item is not None and item.enabled else None

    def all(self) -> list[T]:
        """Every registered item, enabled or not, in order."""
        return list(self._items.values())

    def enabled(self) -> list[T]:
        """The items clients see, in order."""
        return [item for item in self._items.values() if item.enabled]

    def add(self, key: str, item: T) -> T:
        """Register ``item`` as ``key``; ``ValueError`` if the key is taken."""
        if key in self._items:
            raise ValueError(f"a {self.noun} {key!r} is already registered: remove it first or pick another")
        self._items[key] = item
        if item.scopes:
            self._gated |= {item.scopes}
        self._changed()
        return item

    def replace(self, key: str, item: T) -> None:
        """Put ``item`` in the place of the one registered as ``key`` (its position kept);
        ``KeyError`` if there is none by that key."""
        self._require(key)
        self._items[key] = item
        self._gated = frozenset(other.scopes for other in self._items.values() if other.scopes)
        self._changed()

    def remove(self, key: str) -> T:
        """Unregister and return the item; ``KeyError`` if there is none by that key."""
        item = self._require(key)
        del self._items[key]
        if item.scopes:
            self._gated = frozenset(other.scopes for other in self._items.values() if other.scopes)
        self._changed()
        return item

    def set_enabled(self, key: str, enabled: bool) -> None:
        """Show or hide a registered item; ``KeyError`` if there is none by that key."""
        item = self._require(key)
        if item.enabled != enabled:
            item.enabled = enabled
            self._changed()

    @contextlib.contextmanager
    def batched(self) -> Iterator[None]:
        """Within the block, changes tell the listeners nothing; at its end (the outermost
        one's, when nested) they are told once if anything changed."""
        self._batching += 1
        try:
            yield
        finally:
            self._batching -= 1
            if not self._batching and self._batch_changed:
                self._batch_changed = False
                self._changed()

    def on_change(self, listener: Callable[[], None]) -> Callable[[], object]:
        """Call ``listener()`` after every change; returns a function that unsubscribes it."""
        key = id(listener)
        self._listeners[key] = listener
        return lambda: self._listeners.pop(key, None)

    @property
    def gated(self) -> bool:
        """Whether some items need scopes (lists then differ by caller)."""
        return bool(self._gated)

    def visible(self, granted: frozenset[str] | None, rules: Filter | None = None) -> list[T]:
        """The enabled items a caller with the scopes ``granted`` may see (``None``: a caller
        nothing authenticated, who sees them all) through ``rules`` (``None``: no rules)."""
        if rules is not None:
            kind = self.kind
            return [
                item
                for key, item in self._items.items()
                if item.enabled and (granted is None or item.scopes <= granted) and rules.shows(kind, key, item)
            ]
        if granted is None or not self._gated:
            return self.enabled()
        return [item for item in self._items.values() if item.enabled and item.scopes <= granted]

    def page(
        self,
        codec: Codec,
        cursor: str | None,
        finish: Callable[[dict[str, Any]], dict[str, Any]],
        granted: frozenset[str] | None = None,
        rules: Filter | None = None,
    ) -> bytes:
        """The encoded list result for ``cursor`` in ``codec``'s version, of the items a
        caller with the scopes ``granted`` may see through ``rules`` (see :meth:`visible`).

        ``finish`` completes the result for the wire (result type, cache hints, server info).
        :class:`InvalidCursor` for a cursor this catalog cannot have produced. Pages are
        cached by position, by which scope sets the caller has of those items need and by
        the rules, so the cache holds at most one page per version, offset and such view.
        """
        # The scope sets of gated items this caller has; None: it sees every item.
        view = None if granted is None or not self._gated else frozenset(n for n in self._gated if n <= granted)
        start = 0 if cursor is None else self._decode_cursor(cursor, len(self.visible(granted, rules)))
        key = (codec.version, view, rules, start)
        page = self._pages.get(key)
        if page is None:
            if len(self._pages) >= MAX_CACHED_PAGES:
                self._pages.clear()
            page = self._pages[key] = orjson.dumps(finish(self._render(codec, self.visible(granted, rules), start)))
        return page

    def _render(self, codec: Codec, items: list[T], start: int) -> dict[str, Any]:
        end = len(items) if self.page_size is None else start + self.page_size
        render = self._render_one
        result: dict[str, Any] = {self.kind: [render(codec, item.definition) for item in items[start:end]]}
        if end < len(items):
            result["nextCursor"] = self._cursor(end)
        return result

    def _cursor(self, position: int) -> str:
        return tokens.offset_cursor(self.kind, position)

    def _decode_cursor(self, cursor: str, total: int) -> int:
        """The position ``cursor`` stands for; only the exact string :meth:`_cursor` makes is
        accepted (padding, extra characters and other spellings of a number are refused)."""
        position = tokens.read_offset(cursor, self.kind)
        if position is None or position > total:
            raise InvalidCursor(tokens.invalid_cursor(cursor, f"the {self.noun} list"))
        return position

    def _require(self, key: str) -> T:
        item = self._items.get(key)
        if item is None:
            raise KeyError(f"no {self.noun} {key!r}")
        return item

    def refresh(self) -> None:
        """The items' definitions changed: render them again, and tell the listeners."""
        self._changed()

    def _changed(self) -> None:
        self._pages.clear()
        if self._batching:
            self._batch_changed = True
            return
        for listener in list(self._listeners.values()):
            listener()
