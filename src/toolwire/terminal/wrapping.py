"""Text that wraps as a reader expects: closing punctuation kept with what it closes, and
descriptions cut at a word with "…".

Rich folds a run of Chinese (no spaces) at whatever character reaches the edge, so ``。`` or a
closing quote can start a line alone. :class:`Kinsoku` moves such a break one character
earlier (the rule Chinese and Japanese typesetting call 禁则, kinsoku): a line never starts
with closing punctuation that follows a character on the line before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich._wrap import divide_line
from rich.cells import cell_len
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console
    from rich.containers import Lines

#: What may not start a line when it follows a character without a space between.
CLOSING = frozenset("。，、．：；？！）］｝〕〉》」』】〙〗〟’”｠…‥ー々・.,;:!?)]}\"'")  # noqa: RUF001
ELLIPSIS = "…"


def kinsoku_offsets(text: str, width: int, fold: bool = True) -> list[int]:
    """Where to break ``text`` (one line, no newline) into lines of at most ``width`` cells:
    rich's word wrap, each break moved before any closing punctuation it would put first."""
    offsets: list[int] = []
    start = 0
    while True:
        breaks = divide_line(text[start:], width, fold=fold)
        if not breaks:
            return offsets
        cut = start + breaks[0]
        while cut - 1 > start and text[cut] in CLOSING and not text[cut - 1].isspace():
            cut -= 1
        offsets.append(cut)
        start = cut


class Kinsoku(Text):
    """A :class:`rich.text.Text` whose wrapping follows :func:`kinsoku_offsets` (plain ASCII
    text, folded only inside long words, wraps as rich wraps it)."""

    def wrap(self, console: Console, width: int, **options: Any) -> Lines:
        plain = self.plain
        if plain.isascii() or not CLOSING.intersection(plain) or options.get("no_wrap") or self.no_wrap:
            return super().wrap(console, width, **options)
        fold = (options.get("overflow") or self.overflow or "fold") == "fold"
        pieces: list[Text] = []
        for line in self.split(allow_blank=True):
            for piece in line.divide(kinsoku_offsets(line.plain, width, fold)):
                piece.rstrip()
                pieces.append(piece)
        broken = Text("\n").join(pieces)
        return Text.wrap(broken, console, width, **options)


def clipped(text: str, width: int, lines: int, console: Console) -> list[str]:
    """``text`` wrapped to ``width`` cells (see :class:`Kinsoku`), at most ``lines`` of it:
    a longer text is cut at a word (or, without one, a character) with "…" at the end."""
    wrapped = [line.plain.rstrip() for line in Kinsoku(text).wrap(console, max(width, 1))]
    if len(wrapped) <= lines:
        return wrapped
    kept = wrapped[:lines]
    last = kept[-1]
    while last and cell_len(last + ELLIPSIS) > width:
        word = last.rfind(" ")
        last = last[:word].rstrip() if word > 0 else last[:-1]
    kept[-1] = last.rstrip(" ,;:") + ELLIPSIS
    return kept
