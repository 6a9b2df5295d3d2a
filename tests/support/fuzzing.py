"""A structure-aware fuzzer of MCP messages, for the tests and ``benchmarks/fuzz_run.py``.

:func:`fuzz_stream` yields encoded lines: valid messages of every kind and era (the templates
of ``test_hostile_messages``), and the same mutated: a field given a value of another type,
nesting far past any limit, huge strings, byte-level corruption (flipped, dropped and NUL
bytes, invalid UTF-8, truncation), and broken framing (a message split in two, two on one
line, blank and CRLF lines). Seeded: the same seed gives the same stream.

:func:`check_answers` says whether what a server wrote back is JSON-RPC: every line a JSON
object (or, for a batch, an array of them) with ``"jsonrpc": "2.0"`` and exactly one of a
result, an error, or a method.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

import orjson

from tests.protocol.test_hostile_messages import TEMPLATES

ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    2**63 - 1,
    -(2**63),
    1.5,
    1e308,
    "",
    "x",
    [],
    {},
    [1, [2]],
    {"a": {}},
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = []
    if isinstance(value, dict):
        for key, child in value.items():
            found.append((*prefix, key))
            found += _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.append((*prefix, index))
            found += _paths(child, (*prefix, index))
    return found


def _replace(message: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    parent: Any = message
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value


PLACEHOLDER = "deep-value-goes-here"


def _deep(depth: int) -> bytes:
    """JSON nested ``depth`` levels (written out: encoders refuse to go so deep)."""
    opening = b"".join(b"[" if level % 2 else b'{"n":' for level in range(depth))
    closing = b"".join(b"]" if level % 2 else b"}" for level in reversed(range(depth)))
    return opening + b'"bottom"' + closing


def fuzz_message(rng: random.Random) -> bytes:
    """One line (without its newline, unless the framing is broken on purpose)."""
    message = copy.deepcopy(rng.choice(TEMPLATES))
    if isinstance(message.get("id"), int):
        message["id"] = rng.randrange(1, 10**6)
    kind = rng.randrange(10)
    if kind <= 1:
        return orjson.dumps(message)  # valid
    if kind <= 4:
        paths = _paths(message)
        for _ in range(rng.randrange(1, 3)):
            _replace(message, rng.choice(paths), copy.deepcopy(rng.choice(ODD_VALUES)))
            paths = _paths(message)
        return orjson.dumps(message)
    if kind == 5:
        _replace(message, rng.choice(_paths(message)), PLACEHOLDER)
        return orjson.dumps(message).replace(b'"' + PLACEHOLDER.encode() + b'"', _deep(rng.choice([70, 200, 1000])))
    if kind == 6:
        _replace(message, rng.choice(_paths(message)), "y" * rng.choice([10_000, 200_000]))
        return orjson.dumps(message)
    data = bytearray(orjson.dumps(message))
    if kind == 7:  # byte-level corruption
        for _ in range(rng.randrange(1, 4)):
            position = rng.randrange(len(data))
            choice = rng.randrange(4)
            if choice == 0:
                data[position] ^= 1 << rng.randrange(8)
            elif choice == 1:
                del data[position]
            elif choice == 2:
                data.insert(position, 0)
            else:
                data[position : position + 1] = b"\xff\xfe"
        return bytes(data.replace(b"\n", b" "))
    if kind == 8:  # truncated
        return bytes(data[: rng.randrange(len(data))])
    framing = rng.randrange(4)  # broken framing
    if framing == 0:
        return bytes(data) + b"\n" + orjson.dumps(rng.choice(TEMPLATES))  # two lines in one write
    if framing == 1:
        return bytes(data) + orjson.dumps(rng.choice(TEMPLATES))  # two messages on one line
    if framing == 2:
        return bytes(data) + b"\r\n\r\n"
    return b"\n\n" + bytes(data)


def fuzz_stream(seed: int, count: int) -> Iterator[bytes]:
    """``count`` lines, each ending with a newline."""
    rng = random.Random(seed)
    for _ in range(count):
        yield fuzz_message(rng) + b"\n"


def check_answers(lines: list[bytes]) -> list[str]:
    """What is wrong with the lines a server wrote (empty: all are JSON-RPC)."""
    problems = []
    for line in lines:
        if not line.strip():
            continue
        try:
            decoded = orjson.loads(line)
        except orjson.JSONDecodeError:
            problems.append(f"not JSON: {line[:120]!r}")
            continue
        for message in decoded if isinstance(decoded, list) else [decoded]:
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                problems.append(f"not JSON-RPC: {line[:120]!r}")
            elif sum(key in message for key in ("result", "error", "method")) != 1:
                problems.append(f"neither a result, an error nor a notification: {line[:120]!r}")
            elif "error" in message and not (
                isinstance(message["error"], dict) and isinstance(message["error"].get("code"), int)
            ):
                problems.append(f"a malformed error: {line[:120]!r}")
    return problems
