"""The ``tasks/list`` cursor: the position after a page (its last task's creation time and
id), spelled as a strict base64url token (see :mod:`toolwire.protocol.tokens`)."""

from __future__ import annotations

import contextlib
import math
from typing import Any

import orjson

from ..protocol import tokens
from ..protocol.errors import INVALID_PARAMS, ProtocolError
from .model import TaskRecord


def write_cursor(record: TaskRecord) -> str:
    """The cursor of the page that starts after ``record``."""
    return tokens.encode(orjson.dumps([record.created, record.id]))


def read_cursor(cursor: Any) -> tuple[float, str]:
    """The position a ``tasks/list`` cursor names; ``-32602`` for anything we did not hand
    out (spelled in any other way: see :func:`toolwire.protocol.tokens.decode`)."""
    data = tokens.decode(cursor, tokens.MAX_CURSOR_CHARS)
    position = None
    if data is not None:
        with contextlib.suppress(orjson.JSONDecodeError):
            position = orjson.loads(data)
    if (
        type(position) is not list
        or len(position) != 2
        or type(position[0]) is not float
        or not math.isfinite(position[0])
        or not tokens.is_id(position[1])
        or orjson.dumps(position) != data
    ):
        raise ProtocolError(INVALID_PARAMS, "Invalid params: " + tokens.invalid_cursor(cursor, "tasks/list"))
    return position[0], position[1]
