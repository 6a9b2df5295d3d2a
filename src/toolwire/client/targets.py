"""What a :class:`~toolwire.client.Client` connects to: the transport for a target given as a
command, a ``.py`` file, an ``http(s)://`` URL, a toolwire Server or a transport."""

from __future__ import annotations

import re
import shlex
import sys
from typing import Any

from .errors import ClientError
from .transports import InMemory, InProcess, StdioProcess, Transport

#: A target served with ``toolwire run``: ``path/server.py`` or ``path/server.py:object``.
_PYTHON_FILE = re.compile(r"[^\s]+\.py(?::[A-Za-z_][A-Za-z0-9_]*)?")


def transport_for(
    target: Any,
    env: dict[str, str] | None,
    cwd: str | None,
    headers: dict[str, str] | None,
    max_message_bytes: int,
    auth: Any = None,
) -> Transport:
    """The transport for ``target`` (see :class:`~toolwire.client.Client`). :class:`ClientError`
    for ``auth`` with a target that is not http(s), an empty command, or a target of no known kind."""
    if auth is not None and not (isinstance(target, str) and target.startswith(("http://", "https://"))):
        raise ClientError("auth= is for http(s):// servers (over stdio, give the server credentials in env=)")
    if isinstance(target, InProcess):  # a toolwire Server
        return InMemory(target)
    if isinstance(target, str):
        if target.startswith(("http://", "https://")):
            from .http import StreamableHttpTransport

            return StreamableHttpTransport(target, headers, auth=auth, max_message_bytes=max_message_bytes)
        if _PYTHON_FILE.fullmatch(target):
            target = [sys.executable, "-m", "toolwire", "run", target]
        else:
            target = shlex.split(target)
    if isinstance(target, list):
        if not target:
            raise ClientError("an empty command")
        return StdioProcess(target, env=env, cwd=cwd, max_message_bytes=max_message_bytes)
    if hasattr(target, "send") and hasattr(target, "start"):
        return target  # type: ignore[no-any-return]
    raise ClientError(f"cannot connect to a {type(target).__name__}")
