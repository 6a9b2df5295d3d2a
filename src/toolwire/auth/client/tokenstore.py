"""Where an OAuth client keeps what it obtained: client registrations (per authorization
server) and tokens (per MCP server and authorization server).

Records are small JSON objects under string keys. :class:`MemoryTokenStore` forgets them
when the process ends; :class:`FileTokenStore` keeps them in one JSON file that only the user
can read (mode 0600, replaced atomically on each write); :class:`KeyringTokenStore` in the
system keyring (``pip install 'toolwire[keyring]'``). :func:`user_store` picks the keyring
when one is there, else the file.
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

    def names(self) -> list[str]: ...


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

    def __repr__(self) -> str:
        return str(self.path)

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


class KeyringTokenStore:
    """Records in the system keyring (the Secret Service, macOS Keychain, Windows Credential
    Locker...), through the ``keyring`` package, each as a JSON string under ``service``; the
    names of the records are kept there too (keyrings cannot list). ``keyring``'s errors pass
    through."""

    INDEX = "__records__"

    def __init__(self, service: str = "toolwire-oauth") -> None:
        from ...extras import needs

        with needs("keyring", "KeyringTokenStore"):
            import keyring

        self.service = service
        self._keyring = keyring

    def load(self, key: str) -> dict[str, Any] | None:
        text = self._keyring.get_password(self.service, key)
        if text is None:
            return None
        try:
            record = orjson.loads(text)
        except orjson.JSONDecodeError:
            return None
        return record if isinstance(record, dict) else None

    def save(self, key: str, value: dict[str, Any]) -> None:
        self._keyring.set_password(self.service, key, orjson.dumps(value).decode())
        names = self.names()
        if key not in names:
            self._keyring.set_password(self.service, self.INDEX, orjson.dumps([*names, key]).decode())

    def delete(self, key: str) -> None:
        with contextlib.suppress(self._keyring.errors.PasswordDeleteError):
            self._keyring.delete_password(self.service, key)
        names = self.names()
        if key in names:
            names.remove(key)
            self._keyring.set_password(self.service, self.INDEX, orjson.dumps(names).decode())

    def names(self) -> list[str]:
        text = self._keyring.get_password(self.service, self.INDEX)
        try:
            names = orjson.loads(text) if text else []
        except orjson.JSONDecodeError:
            return []
        return [name for name in names if isinstance(name, str)] if isinstance(names, list) else []

    def __repr__(self) -> str:
        return f"the system keyring ({type(self._keyring.get_keyring()).__name__}, service {self.service!r})"


def user_store() -> TokenStore:
    """The user's store: the system keyring when ``keyring`` is installed and finds one (not
    its "fail" or "null" stand-ins, nor the plain files of ``keyrings.alt``), else
    :func:`default_store_path`'s file."""
    try:
        import keyring
    except ImportError:
        return FileTokenStore(default_store_path())
    module = type(keyring.get_keyring()).__module__
    if module.startswith(("keyring.backends.fail", "keyring.backends.null", "keyrings.alt")):
        return FileTokenStore(default_store_path())
    return KeyringTokenStore()


def default_store_path() -> Path:
    """``$XDG_CONFIG_HOME/toolwire/oauth.json`` (``~/.config/toolwire/oauth.json``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "toolwire" / "oauth.json"
