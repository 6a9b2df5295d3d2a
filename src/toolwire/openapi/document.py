"""Reading an OpenAPI document: a dict, a file (JSON or YAML) or an http(s) URL read once.

:func:`load_document` gives the document as a dict after checking what the rest relies on:
an object with ``openapi`` 3.0, 3.1 or 3.2 (read as 3.1) and, when present, ``paths`` an
object. Anything else, a Swagger 2.0 document among them, raises :class:`OpenAPIError` in one
line. What is wrong inside one operation is the mapping's to report (:mod:`.mapping`), as a
skip of that operation.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import orjson

from ..errors import ToolwireError

#: The largest document read (GitHub's REST description, the largest public one we know, is
#: about 12 MB as JSON).
MAX_BYTES = 64 * 1024 * 1024
#: Seconds a URL has to deliver the whole document.
FETCH_TIMEOUT = 30.0
#: Bounds on a YAML document (JSON is read by orjson, which has bounds of its own).
MAX_YAML_DEPTH = 128
MAX_YAML_NODES = 5_000_000


class OpenAPIError(ToolwireError):
    """A document that cannot be used, or a route map or override that does not fit it: the
    message says which and what to do."""


def load_document(source: Mapping[str, Any] | str | os.PathLike[str]) -> dict[str, Any]:
    """The OpenAPI document ``source`` is or names: a mapping (used as it is), a path to a
    JSON or YAML file, or an http(s) URL (fetched once, within :data:`MAX_BYTES` and
    :data:`FETCH_TIMEOUT`). :class:`OpenAPIError` when it cannot be read or is not OpenAPI
    3.0 or 3.1."""
    if isinstance(source, Mapping):
        return checked(dict(source))
    text = os.fspath(source)
    if text.startswith(("http://", "https://")):
        return checked(parsed(_fetched(text), text))
    try:
        with open(text, "rb") as file:
            data = file.read(MAX_BYTES + 1)
    except OSError as exc:
        raise OpenAPIError(f"cannot read the OpenAPI document {text}: {exc.strerror or exc}") from None
    if len(data) > MAX_BYTES:
        raise OpenAPIError(f"the OpenAPI document {text} is larger than {MAX_BYTES // 2**20} MB")
    return checked(parsed(data, text))


def _fetched(url: str) -> bytes:
    """The body at ``url``, fetched on a thread of its own (the caller may be inside an event loop)."""
    import asyncio
    import concurrent.futures

    from ..fetch import FetchFailed, fetch, shown

    with concurrent.futures.ThreadPoolExecutor(1) as thread:
        try:
            answer = thread.submit(asyncio.run, fetch(url, timeout=FETCH_TIMEOUT, max_bytes=MAX_BYTES)).result()
        except FetchFailed as exc:
            raise OpenAPIError(f"cannot fetch the OpenAPI document: {exc}") from None
    if answer.status != 200:
        raise OpenAPIError(f"fetching the OpenAPI document {shown(url)} answered HTTP {answer.status}, not 200")
    return answer.body


def parsed(data: bytes, where: str) -> Any:
    """``data`` read as JSON when it looks like JSON (it begins with ``{``), else as YAML."""
    if data.lstrip()[:1] == b"{":
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise OpenAPIError(f"the OpenAPI document {where} is not valid JSON: {exc}") from None
    from ..skills.yaml_json import YAMLRefused, load

    try:
        text = data.decode("utf-8-sig")
        return load(
            text,
            max_depth=MAX_YAML_DEPTH,
            max_nodes=MAX_YAML_NODES,
            number_keys=True,
            what="a YAML OpenAPI document",
            extra="openapi",
        )
    except UnicodeDecodeError:
        raise OpenAPIError(f"the OpenAPI document {where} is neither JSON nor UTF-8 YAML") from None
    except YAMLRefused as exc:
        raise OpenAPIError(f"the OpenAPI document {where} is not usable YAML: {exc}") from None


def checked(document: Any) -> dict[str, Any]:
    """``document`` if it is an OpenAPI 3.0/3.1 document in outline, else :class:`OpenAPIError`."""
    if not isinstance(document, dict):
        raise OpenAPIError(f"an OpenAPI document is a JSON object, not {_kind(document)}")
    if "swagger" in document:
        raise OpenAPIError(
            f"the document is Swagger {str(document['swagger'])[:20]}; toolwire reads OpenAPI 3.0 and 3.1: convert it "
            "first (for instance with swagger2openapi, or the Swagger Editor's 'Convert to OpenAPI 3')"
        )
    version = document.get("openapi")
    if not isinstance(version, str) or minor_version(version) is None:
        raise OpenAPIError(f"the document's 'openapi' is {str(version)[:40]!r}; toolwire reads OpenAPI 3.0 and 3.1")
    if not isinstance(document.get("paths", {}), dict):
        raise OpenAPIError(f"the document's 'paths' is {_kind(document['paths'])}, not an object of path items")
    return document


def minor_version(version: str) -> int | None:
    """0 for OpenAPI 3.0.x, 1 for 3.1.x and 3.2.x (read by 3.1's rules), ``None`` for others."""
    major, _, rest = version.partition(".")
    minor = rest.partition(".")[0]
    if major != "3" or minor not in ("0", "1", "2"):
        return None
    return min(int(minor), 1)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null", bool: "a boolean"}.get(
        type(value), "a number"
    )
