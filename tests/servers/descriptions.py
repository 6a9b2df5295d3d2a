"""Tools whose descriptions a table must shorten: a first sentence wrapped over lines, one
too long to show whole, one with an abbreviation, a Chinese one wrapped mid-sentence, one
without a sentence's end (tests/cli/test_cli_tables.py)."""

from __future__ import annotations

from toolwire import Server

server = Server("descriptions", "1.0.0")


@server.tool
def wrapped() -> str:
    """Index the documents of the folder: new and changed files are read, cut
    into passages and kept. Unchanged files are skipped."""
    return ""


@server.tool
def endless() -> str:
    """Return every word of the text in the order given and without any change to it whatever it contains and
    however long it is and wherever it comes from and whoever wrote it and for whichever purpose it was written
    and then some more words that nobody will read"""
    return ""


@server.tool
def abbreviated() -> str:
    """Convert units, e.g. miles to kilometres, and back. Rounds to two places."""
    return ""


@server.tool
def chinese() -> str:
    """把文件夹里的文档编入索引：新的和改过的文件被读入、切成
    段落并保存。没变的文件跳过。"""
    return ""


@server.tool
def unfinished() -> str:
    """Look up a word

    Args are none; the word comes from the context."""
    return ""
