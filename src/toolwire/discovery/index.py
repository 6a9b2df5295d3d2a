"""A ranking of tools for a request: BM25 (bm25s) over the words of each tool's definition.

A tool's document is its name (counted twice: a name says most about a tool in fewest
words), its title, its description, the name, title and description of each of its
parameters (those of nested objects too), and its server's name (``mail``, ``calendar``:
often the very word a request uses). Both the documents and the request go through
:func:`.tokens.words`. A request's words are widened with those that mean much the same
(:mod:`.synonyms`: "folder" also looks for "directory"): a tool scores, for each word of
the request, its BM25 score for the word or :data:`RELATED_WEIGHT` of its score for the
word's related words, whichever is higher (so a synonym never adds to the word itself, and a
tool that uses the request's own word is preferred). Scores are positive, higher is better,
comparable within one index only; a tool that shares no word with the request, nor a related
word, is not returned.

:class:`ToolIndex` is built once for a set of tools and searched many times; build a new one
when the tools change. :func:`search_tools` ranks a list of tools once (a client's
:meth:`~toolwire.client.Client.list_tools`). Both need the ``search`` extra and raise
:class:`~toolwire.extras.ExtraMissing` naming it when it is missing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..extras import needs
from .bilingual import english, in_english
from .synonyms import related
from .tokens import words

if TYPE_CHECKING:
    from ..client import ToolInfo

#: The characters of a request that are ranked: the rest is left out. Each distinct word costs a
#: pass over the index, and a request is a few words (a million characters took minutes).
MAX_QUERY_CHARS = 1000
#: How deep :func:`document` follows parameters that are objects.
NESTING = 3
#: What a word related to one of the request's (:func:`.synonyms.related`) counts for, against
#: 1 for the request's own word: enough to find a tool by a synonym, too little to outrank
#: one that uses the request's own word.
RELATED_WEIGHT = 0.6


@dataclass(frozen=True, slots=True)
class ToolMatch:
    """A tool found for a request: the ``server`` it belongs to (empty when the tools
    searched had no server named), the tool, and its BM25 ``score``."""

    server: str
    tool: ToolInfo
    score: float

    @property
    def name(self) -> str:
        return self.tool.name

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``name``, ``server``, ``score`` (4 decimals), ``title``, ``description``."""
        return {
            "name": self.tool.name,
            "server": self.server,
            "score": round(self.score, 4),
            "title": self.tool.display_name,
            "description": self.tool.description or "",
        }


class ToolIndex:
    """The tools of ``entries`` (``(server, tool)`` pairs), ready to be searched."""

    def __init__(self, entries: Sequence[tuple[str, ToolInfo]]) -> None:
        with needs("search", "searching tools"):
            import bm25s
        self.entries = list(entries)
        self._ranker = bm25s.BM25()
        corpus = [_document_words(document(tool, server)) for server, tool in self.entries]
        if self.entries:
            self._ranker.index(corpus, show_progress=False)

    def search(self, query: str, limit: int = 10) -> list[ToolMatch]:
        """The ``limit`` best tools for ``query``, best first (fewer when fewer share a word,
        or a related word, with it; ties keep the order of ``entries``). Only the first
        :data:`MAX_QUERY_CHARS` characters of ``query`` count."""
        query = query[:MAX_QUERY_CHARS]
        asked = words(query)
        if not self.entries or not asked or limit < 1:
            return []
        scores = sum(self._word_scores(word, asked) for word in dict.fromkeys(asked))
        for meanings in english(query):
            scores = scores + self._translated_scores(meanings)
        ranked = sorted(range(len(self.entries)), key=lambda i: -float(scores[i]))
        return [
            ToolMatch(self.entries[i][0], self.entries[i][1], float(scores[i])) for i in ranked[:limit] if scores[i] > 0
        ]

    def _word_scores(self, word: str, asked: list[str]) -> Any:
        """Each tool's score for one word of the request (counted as often as it is asked):
        its BM25 score for the word, or :data:`RELATED_WEIGHT` of its score for the word's
        related words (those not asked themselves) when that is higher."""
        import numpy as np  # bm25s's, there since the index was built

        scores = self._ranker.get_scores([word]) * asked.count(word)
        others = sorted(related(word) - set(asked))
        if others:
            scores = np.maximum(scores, RELATED_WEIGHT * self._ranker.get_scores(others))
        return scores

    def _translated_scores(self, meanings: list[str]) -> Any:
        """Each tool's score for a Chinese word of the request, through the English senses
        ``meanings`` of it: its score for the sense it matches best (the mean of the sense's
        words' scores, so that a long sense counts no more than a short one)."""
        import numpy as np

        best = np.zeros(len(self.entries))
        for sense in meanings:
            stems = words(sense)
            if stems:
                best = np.maximum(best, self._ranker.get_scores(stems) / len(stems))
        return best


def _document_words(text: str) -> list[str]:
    """The words a tool is found by: those of its document ``text``, and those of the English
    senses of the Chinese words in it."""
    return words(text) + words(in_english(text))


def search_tools(tools: Sequence[ToolInfo], query: str, limit: int = 10, server: str = "") -> list[ToolMatch]:
    """The ``limit`` best of ``tools`` for ``query``, best first, each marked as ``server``'s
    (see :class:`ToolIndex`)."""
    return ToolIndex([(server, tool) for tool in tools]).search(query, limit)


def document(tool: ToolInfo, server: str = "") -> str:
    """The text a tool of ``server`` is found by (see the module's description)."""
    parts = [tool.name, tool.name, tool.title or "", tool.annotations.get("title") or "", tool.description or ""]
    parts += _schema_text(tool.input_schema, NESTING)
    parts.append(server)
    return "\n".join(part for part in parts if isinstance(part, str) and part)


def _schema_text(schema: Any, depth: int) -> Iterator[str]:
    """The names, titles and descriptions of the properties of ``schema`` (an object's), down
    to ``depth`` levels of nested objects and arrays of them."""
    if depth < 1 or not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return
    for name, spec in schema["properties"].items():
        yield str(name)
        if not isinstance(spec, dict):
            continue
        for key in ("title", "description"):
            if isinstance(spec.get(key), str):
                yield spec[key]
        yield from _schema_text(spec, depth - 1)
        yield from _schema_text(spec.get("items"), depth - 1)
