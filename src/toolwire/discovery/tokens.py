"""Words for ranking: what a tool's definition and a person's request are made of.

:func:`words` splits text at anything that is not a letter or a digit (so ``snake_case`` and
``kebab-case`` come apart), then at case changes (``createEvent`` and ``HTTPServer`` give
``create event`` and ``http server``), lower-cases every word, drops common English words
(bm25s's list) and reduces the rest to their stems (Snowball's English stemmer, from
PyStemmer: ``meetings`` and ``meeting`` are one word). Chinese, Japanese and Korean text,
written without spaces, becomes its characters and each pair of neighbours (``天气预报``:
天 气 预 报 天气 气预 预报), so that a request shares words with a description however either
is segmented.

Both need the ``search`` extra: :func:`words` raises :class:`~toolwire.extras.ExtraMissing`
naming it when bm25s or PyStemmer is missing.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from ..extras import needs

#: A run of CJK characters (Han, kana, Hangul), or a run of other letters and digits.
RUNS = re.compile(r"(?P<cjk>[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+)|(?P<word>[^\W_]+)")
#: Where a word changes case: ``eventId`` -> ``event Id``, ``HTTPServer`` -> ``HTTP Server``.
CASE_CHANGES = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def words(text: str) -> list[str]:
    """The words of ``text`` for ranking (see the module's description); the same text gives
    the same words. :class:`~toolwire.extras.ExtraMissing` without the ``search`` extra."""
    stem, stopwords = _english()
    found: list[str] = []
    for match in RUNS.finditer(text):
        cjk = match.group("cjk")
        if cjk:
            found += list(cjk) + [cjk[i : i + 2] for i in range(len(cjk) - 1)]
            continue
        for part in CASE_CHANGES.split(match.group("word")):
            word = part.lower()
            if word and word not in stopwords:
                found.append(stem(word))
    return found


@functools.cache
def _english() -> tuple[Callable[[str], str], frozenset[str]]:
    """The English stemmer and the common words to leave out (loaded once)."""
    with needs("search", "searching tools"):
        import Stemmer
        from bm25s.stopwords import STOPWORDS_EN_PLUS
    stemmer = Stemmer.Stemmer("english")
    return stemmer.stemWord, frozenset(STOPWORDS_EN_PLUS)
