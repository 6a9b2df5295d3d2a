"""The knowledge base example (examples/knowledge_base.py) against hostile documents and a
hostile embeddings endpoint. The server is a real process over stdio; the endpoint is the
scripted model server's ``/v1/embeddings`` on 127.0.0.1, made to answer vectors of different
sizes, an answer without end, or one trickled a byte at a time.

A document that takes tens of seconds is read in the server's reading process: the server
answers pings meanwhile (checked once the server says it is reading that document, before
its time is up), skips it with the reason and indexes the others.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.clirun import toolwire
from tests.support.model_server import ModelServer, Reply, ToolCall
from tests.support.pdfs import nested_forms_pdf, shared_stream_pdf
from toolwire import Server
from toolwire.client import Client

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "knowledge_base.py"
SAMPLES = ROOT / "examples" / "medical_docs"
sys.path.insert(0, str(EXAMPLE.parent))
import knowledge_base as kb  # noqa: E402

#: A Markdown heading line of 5 kB that the old heading pattern took minutes to match.
SPACED_HEADING = "# x" + " " * 5000 + "y\n\nThe passage under the spaced heading.\n"


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A copy of the sample documents."""
    return Path(shutil.copytree(SAMPLES, tmp_path / "docs"))


@pytest.fixture
def model() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


def serve(docs: Path, data: Path, *options: str) -> Client:
    """The example served by ``toolwire run FILE -- --docs DIR --data DIR OPTIONS...``."""
    command = [sys.executable, "-m", "toolwire", "run", str(EXAMPLE), "--", "--docs", str(docs), "--data", str(data)]
    return Client([*command, *options], timeout=120)


def status(pid: int, field: str) -> int:
    """A number of ``/proc/PID/status`` (kB for the memory fields)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for process {pid}")


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # ended meanwhile
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


# -- hostile documents ---------------------------------------------------------------------------


async def test_a_hostile_document_is_skipped_while_the_server_answers_pings(docs: Path, tmp_path: Path) -> None:
    (docs / "forms.pdf").write_bytes(nested_forms_pdf())  # 3 kB, about 25 s of pypdf here
    (docs / "shared.pdf").write_bytes(shared_stream_pdf(pages=4, content_bytes=2_800_000))  # 9 kB, 11 MB drawn
    (docs / "spaced.md").write_text(SPACED_HEADING)
    reading: asyncio.Queue[str] = asyncio.Queue()
    async with serve(docs, tmp_path / "index", "--read-timeout", "2") as client:
        server = client.transport.process.pid  # type: ignore[attr-defined]

        def progress(_done: float, _total: float | None, message: str | None) -> None:
            reading.put_nowait(str(message))

        call = asyncio.create_task(client.call_tool("index_docs", progress=progress))
        while await asyncio.wait_for(reading.get(), 60) != "reading forms.pdf":
            pass
        await asyncio.wait_for(client.ping(), 10)
        assert not call.done(), "the ping was answered only after the hostile document"
        report = (await call).structured
        assert report["skipped"] == {
            "forms.pdf": "reading it took more than 2 s (--read-timeout)",
            "shared.pdf": "its pages draw more than the 8388608 byte limit of content, decompressed "
            "(a stream counted each time a page draws it)",
        }
        assert report["documents"] == 7 and "spaced.md" in report["added"] and report["notes"] == []
        found = (await client.call_tool("retrieve_docs", {"query": "passage under the spaced heading"})).structured
        best = found["passages"][0]
        assert (best["title"], best["heading"]) == ("spaced", "x y")
        while not reading.empty():
            reading.get_nowait()
        again = (await client.call_tool("index_docs", progress=progress)).structured
        assert again["skipped"] == report["skipped"] and reading.empty()  # remembered, not read again
        [reader] = children(server)  # a second one: the first was stopped at the time limit
        assert status(reader, "VmHWM") < 300 * 1024
    assert not Path(f"/proc/{reader}").exists()  # it ends with the server


#: Text shaped against each pattern over a document's text (headings, sentences, clauses, the
#: split into blocks): each is chunked in time linear in its length, so none is skipped.
SHAPES = {
    "spaced-heading.md": "# x" + " " * 200_000 + "y",
    "hashes.md": "#" * 200_000 + " x",
    "closing-hashes.md": "# x " + "# " * 100_000 + "y",
    "brackets.txt": "【" * 100_000 + "x",
    "unclosed.txt": "【x" + " " * 200_000,
    "blank-lines.txt": ("\n" + " " * 1000) * 200 + "\n \n" * 50_000,
    "heading-lookahead.txt": "\n" + " " * 200_000 + "x",
    "no-sentence-end.txt": "x" * 300_000,
    "stops.txt": "。" * 200_000 + "x",
    "dots.txt": ". " * 100_000 + "." * 100_000,
    "quotes.txt": "!" + "”" * 200_000,
    "commas.txt": "\uff0c" * 200_000 + "x",
    "colons.txt": ":" * 200_000,
}


def test_every_pattern_over_a_documents_text_runs_in_linear_time(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    for name, text in SHAPES.items():
        (tmp_path / "docs" / name).write_text(text)
    settings = kb.load_settings(["--docs", str(tmp_path / "docs"), "--data", str(tmp_path / "index")], {})
    base = kb.KnowledgeBase(settings, Server("kb-test"))
    try:
        report = base.sync()
    finally:
        base.close()
    assert (report.skipped, report.documents) == ({}, len(SHAPES))


def test_headings_are_parsed_as_before_and_cut() -> None:
    assert kb.heading_of("## 诊断标准 ##") == "诊断标准"
    assert kb.heading_of("  【治疗】 ") == "治疗"
    assert kb.heading_of(SPACED_HEADING.splitlines()[0]) == "x y"
    assert kb.heading_of("# " + "长" * 500) == "长" * kb.HEADING_CHARS
    for line in ("#no-space", "####### seven", "【】", "plain text", "#"):
        assert kb.heading_of(line) is None


# -- a hostile embeddings endpoint --------------------------------------------------------------


def note(model: ModelServer, what: str) -> str:
    return f"the embeddings endpoint {model.openai_url}/embeddings {what}; ranking is lexical until index_docs succeeds with it"


async def test_vectors_of_different_sizes_leave_the_lexical_ranking_with_a_note(
    docs: Path, tmp_path: Path, model: ModelServer
) -> None:
    shutil.copytree(SAMPLES, docs / "again")  # 70 chunks: two batches
    model.embeddings_sizes = [256, 128]
    async with serve(docs, tmp_path / "index", "--embeddings-url", model.openai_url) as client:
        report = (await client.call_tool("index_docs")).structured
        assert (report["ranking"], report["documents"]) == ("lexical", 12)
        assert report["notes"] == [note(model, "answered vectors of different sizes (128 and 256 numbers)")]
        assert len(model.embedding_requests) == 2
        found = (await client.call_tool("retrieve_docs", {"query": "高血压的诊断标准是什么"})).structured
        assert found["ranking"] == "hybrid"  # the endpoint answers one size again: embedded at this query's index
        assert found["passages"][0]["title"] == "高血压" and found["note"] is None
        model.embeddings_sizes = [128]
        (docs / "gout.md").write_text("# Gout\n\nGout is caused by uric acid crystals in the joints.\n")
        report = (await client.call_tool("index_docs")).structured
        assert "gout.md" in report["added"] and report["notes"] == [
            note(
                model,
                "answered vectors of 128 numbers where the index holds vectors of 256 from text-embedding-3-small "
                "(is it another model? name it with --embeddings-model)",
            )
        ]
        found = (await client.call_tool("retrieve_docs", {"query": "uric acid"})).structured
        assert found["passages"][0]["title"] == "gout"


async def test_an_endless_embeddings_answer_is_cut_at_its_limit(tmp_path: Path, model: ModelServer) -> None:
    # 200 MB past the limit: read whole, the answer would grow the server by more than that; cut,
    # it grows by what indexing costs anyway (the dictionary for the Chinese samples: ~40 MiB).
    model.embeddings_padding = kb.EMBEDDINGS_ANSWER_BYTES + 200_000_000
    async with serve(SAMPLES, tmp_path / "index", "--embeddings-url", model.openai_url) as client:
        server = client.transport.process.pid  # type: ignore[attr-defined]
        before = status(server, "VmRSS")
        report = (await client.call_tool("index_docs")).structured
        await model.wait_for_disconnect()
        grew = (status(server, "VmHWM") - before) / 1024
        assert report["notes"] == [note(model, f"answered more than {kb.EMBEDDINGS_ANSWER_BYTES} bytes")]
        assert report["ranking"] == "lexical" and model.embeddings_sent < model.embeddings_padding
        assert grew < 150, f"the server grew by {grew:.0f} MiB"


async def test_a_trickled_embeddings_answer_is_given_up_after_its_timeout(tmp_path: Path, model: ModelServer) -> None:
    model.embeddings_trickle = 0.05  # the answer (180 kB) would take hours
    options = ["--embeddings-url", model.openai_url, "--embeddings-timeout", "1"]
    async with serve(SAMPLES, tmp_path / "index", *options) as client:
        report = (await client.call_tool("index_docs")).structured
        assert report["notes"] == [note(model, "took more than 1 s to answer")] and report["ranking"] == "lexical"
        await model.wait_for_disconnect()


def test_the_endpoints_credentials_reach_neither_the_model_nor_the_log(tmp_path: Path, model: ModelServer) -> None:
    model.embeddings_status = 401
    model.script(Reply(tool_calls=[ToolCall("retrieve_docs", {"query": "高血压 诊断标准"})]), Reply(text="答案"))
    secret_url = model.openai_url.replace("http://", "http://kb-user:hunter2-pw@")
    # The target relative to the folder: "toolwire ask" would split a path with spaces into words.
    done = toolwire(
        "ask", "examples/knowledge_base.py", "高血压的诊断标准是什么", "--trust", "knowledge_base",
        "--base-url", model.openai_url, "--model", "m", "--api-key", "test", cwd=ROOT,
        KB_DOCS=str(SAMPLES), KB_DATA=str(tmp_path / "index"), KB_EMBEDDINGS_URL=secret_url,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [read] = [message["content"] for message in model.requests[-1]["messages"] if message["role"] == "tool"]
    assert f"the embeddings endpoint {model.openai_url}/embeddings answered HTTP 401" in read
    assert "hunter2" not in read + done.stderr and "kb-user" not in read + done.stderr


def test_the_endpoints_url_is_shown_without_credentials() -> None:
    assert (
        kb.shown_url("https://u:p%40ss@api.example:8443/v1/embeddings?key=k#f")
        == "https://api.example:8443/v1/embeddings"
    )
    assert kb.shown_url("http://[::1") == "(a URL that does not parse)"
    for url in ("ftp://u:hunter2@host/v1", "http://u:hunter2@host:99999/v1"):
        with pytest.raises(ValueError, match="must be an http or https URL") as refused:
            kb.load_settings(["--embeddings-url", url], {"KB_DOCS": str(SAMPLES)})
        assert "hunter2" not in str(refused.value)
    for option in ("--read-timeout", "--embeddings-timeout"):
        for value in ("0", "nan", "-1"):
            with pytest.raises(ValueError, match=f"{option} .* must be between 0 and 3600 seconds"):
                kb.load_settings([option, value], {"KB_DOCS": str(SAMPLES)})
