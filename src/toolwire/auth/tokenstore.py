"""Where an OAuth client keeps what it obtained: client registrations (per authorization
server) and tokens (per MCP server and authorization server).

Records are small JSON objects under string keys. :class:`MemoryTokenStore` forgets them
when the process ends; :class:`FileTokenStore` keeps them in one JSON file that only the user
can read (mode 0600, replaced atomically on each write).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any, Protocol

import orjson


class TokenStore(Protocol):
    """A key-value store of JSON objects; ``None`` for a key not there."""

    def load(self, key: str) -> dict[str, Any] | None: ...

    def save(self, key: str, value: dict[str, Any]) -> None: ...

    def delete(self, key: str) -> None: ...


class MemoryTokenStore:
    """Records in this process's memory."""

    def __init__(self) -> None:
        self._records: dict[str, dict[str, Any]] = {}

    def load(self, key: str) -> dict[str, Any] | None:
        return self._records.get(key)

    def save(self, key: str, value: dict[str, Any]) -> None:
        self._records[key] = value

    def delete(self, key: str) -> None:
        self._records.pop(key, None)

    def names(self) -> list[str]:
        """The keys of every record."""
        return list(self._records)


class FileTokenStore:
    """Records in ``path`` (JSON), readable by the user alone. A file that is not ours (not
    JSON) is replaced by an empty store rather than failing the client; ``OSError`` if the
    directory cannot be written."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()

    def _read(self) -> dict[str, Any]:
        try:
            records = orjson.loads(self.path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return {}
        return records if isinstance(records, dict) else {}

    def load(self, key: str) -> dict[str, Any] | None:
        record = self._read().get(key)
        return record if isinstance(record, dict) else None

    def save(self, key: str, value: dict[str, Any]) -> None:
        records = self._read()
        records[key] = value
        self._write(records)

    def delete(self, key: str) -> None:
        records = self._read()
        if records.pop(key, None) is not None:
            self._write(records)

    def names(self) -> list[str]:
        """The keys of every record."""
        return list(self._read())

    def _write(self, records: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        descriptor, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".tokens-")
        try:
            with os.fdopen(descriptor, "wb") as file:  # mkstemp makes it 0600
                file.write(orjson.dumps(records, option=orjson.OPT_INDENT_2))
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise


def default_store_path() -> Path:
    """``$XDG_CONFIG_HOME/toolwire/oauth.json`` (``~/.config/toolwire/oauth.json``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "toolwire" / "oauth.json"
