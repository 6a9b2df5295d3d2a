"""The 2026-07-28 request headers of Streamable HTTP, free of I/O: what a client mirrors from
a request body into headers, and how a server checks that headers and body agree.

Every POST carries ``MCP-Protocol-Version`` and ``Mcp-Method``; ``tools/call`` and
``prompts/get`` carry ``Mcp-Name`` (``params.name``), ``resources/read`` too
(``params.uri``), and the tasks extension's ``tasks/get``, ``tasks/update`` and
``tasks/cancel`` (``params.taskId``). A tool parameter whose schema says ``"x-mcp-header": "Region"`` is
mirrored as ``Mcp-Param-Region``. Values that are not plain visible ASCII (or have leading
or trailing whitespace, or look like the sentinel itself) travel as ``=?base64?...?=``.

A header that disagrees with the body, is missing where required, or holds characters a
header may not hold is a :class:`~toolwire.protocol.errors.ProtocolError` ``-32020``
(HeaderMismatch) naming the header; HTTP answers it with 400.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from .errors import HEADER_MISMATCH, ProtocolError

PROTOCOL_VERSION = "mcp-protocol-version"
METHOD = "mcp-method"
NAME = "mcp-name"
PARAM_PREFIX = "mcp-param-"

#: Which ``params`` field ``Mcp-Name`` mirrors, by method.
NAME_FIELDS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_PLAIN = re.compile(r"[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?")
_SENTINEL = re.compile(r"=\?base64\?(.*)\?=")
_SAFE_INTEGER = 2**53 - 1
_HEADER_TEXT = re.compile(r"[\t\x20-\x7e]*")


class InvalidHeaderAnnotation(ValueError):
    """A tool's ``x-mcp-header`` annotations break the rules; the message says which."""


def encode_value(value: str) -> str:
    """``value`` as a header value: as is when plain visible ASCII, else base64 in the sentinel."""
    if value == "" or (_PLAIN.fullmatch(value) and not _SENTINEL.fullmatch(value)):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode()}?="


def decode_value(header: str) -> str | None:
    """The value a header carries (the sentinel decoded); ``None`` if it is not a valid one."""
    found = _SENTINEL.fullmatch(header)
    if found is None:
        return header if _HEADER_TEXT.fullmatch(header) else None
    try:
        return base64.b64decode(found.group(1), validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None


def header_parameters(input_schema: Any) -> dict[str, tuple[str, ...]]:
    """A tool's ``x-mcp-header`` annotations: header name -> property path.

    :class:`InvalidHeaderAnnotation` if one is empty, not a header token, not unique
    (ignoring case), on a type other than string, integer or boolean, or not reachable from
    the root through ``properties`` alone.
    """
    found: dict[str, tuple[str, ...]] = {}
    _walk(input_schema, (), True, found)
    return found


def _walk(schema: Any, path: tuple[str, ...], reachable: bool, found: dict[str, tuple[str, ...]]) -> None:
    if isinstance(schema, list):
        for item in schema:
            _walk(item, path, False, found)
        return
    if not isinstance(schema, dict):
        return
    if "x-mcp-header" in schema:
        name = schema["x-mcp-header"]
        where = "/".join(path) or "the root"
        if not reachable or not path:
            raise InvalidHeaderAnnotation(f"x-mcp-header at {where} is not reachable through properties alone")
        if not isinstance(name, str) or not name:
            raise InvalidHeaderAnnotation(f"x-mcp-header at {where} must be a non-empty string")
        if not _TOKEN.fullmatch(name):
            raise InvalidHeaderAnnotation(f"x-mcp-header {name!r} is not a valid header name")
        if schema.get("type") not in ("string", "integer", "boolean"):
            raise InvalidHeaderAnnotation(
                f"x-mcp-header {name!r} is on a {schema.get('type')!r}, not a string, integer or boolean"
            )
        if any(name.lower() == other.lower() for other in found):
            raise InvalidHeaderAnnotation(f"x-mcp-header {name!r} appears twice")
        found[name] = path
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            for prop, subschema in value.items():
                _walk(subschema, (*path, prop), reachable, found)
        elif key != "x-mcp-header" and isinstance(value, (dict, list)):
            _walk(value, path, False, found)


def _lookup(arguments: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(arguments, dict) or key not in arguments:
            return None
        arguments = arguments[key]
    return arguments


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def request_headers(
    version: str, method: str, params: dict[str, Any], parameters: dict[str, tuple[str, ...]] | None = None
) -> dict[str, str]:
    """The headers a client sends with a 2026-07-28 request; ``parameters`` are the called
    tool's :func:`header_parameters`."""
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    field = NAME_FIELDS.get(method)
    if field is not None and isinstance(params.get(field), str):
        headers["Mcp-Name"] = encode_value(params[field])
    for name, path in (parameters or {}).items():
        text = _text(_lookup(params.get("arguments"), path))
        if text is not None:
            headers[f"Mcp-Param-{name}"] = encode_value(text)
    return headers


def check_request(headers: dict[str, str], message: Any, parameters: dict[str, tuple[str, ...]] | None) -> None:
    """Check a 2026-07-28 request's headers (lower-case names) against its body.

    ``parameters`` are the called tool's :func:`header_parameters` (``None`` when the tool is
    unknown). :class:`ProtocolError` ``-32020`` naming the first problem.
    """
    method = message.get("method") if isinstance(message, dict) else None
    params = message.get("params") if isinstance(message, dict) else None
    params = params if isinstance(params, dict) else {}
    sent = headers.get(METHOD)
    if sent is None:
        raise _mismatch("the Mcp-Method header is missing")
    if sent != method:
        raise _mismatch(f"Mcp-Method header value {shown(sent)} does not match body value {shown(method)}")
    field = NAME_FIELDS.get(method) if isinstance(method, str) else None
    if field is not None:
        raw = headers.get(NAME)
        if raw is None:
            raise _mismatch(f"the Mcp-Name header is missing (it must carry params.{field})")
        name = decode_value(raw.strip(" \t"))
        if name is None:
            raise _mismatch("the Mcp-Name header holds characters a header may not carry: base64-encode it")
        if name != params.get(field):
            raise _mismatch(f"Mcp-Name header value {shown(name)} does not match body value {shown(params.get(field))}")
    if not parameters:
        return
    arguments = params.get("arguments")
    for header, path in parameters.items():
        expected = _lookup(arguments, path)
        raw = headers.get(PARAM_PREFIX + header.lower())
        if expected is None:
            continue
        if raw is None:
            raise _mismatch(f"the Mcp-Param-{header} header is missing (it must mirror {'.'.join(path)})")
        value = decode_value(raw.strip(" \t"))
        if value is None:
            raise _mismatch(f"the Mcp-Param-{header} header holds characters a header may not carry")
        if not _same(value, expected):
            raise _mismatch(
                f"Mcp-Param-{header} header value {shown(value)} does not match body value {shown(expected)}"
            )


def _same(header: str, body: Any) -> bool:
    if isinstance(body, bool):
        return header == ("true" if body else "false")
    if isinstance(body, (int, float)):
        try:
            return bool(float(header) == float(body) and abs(body) <= _SAFE_INTEGER)
        except ValueError:
            return False
    return bool(header == body)


def shown(value: Any) -> str:
    """``value`` for an error message: scalars as they are (long text cut), containers by type."""
    if isinstance(value, str | int | float | bool) or value is None:
        text = repr(value)
        return text if len(text) <= 80 else f"{text[:80]}..."
    kind = "object" if isinstance(value, dict) else "array" if isinstance(value, list) else type(value).__name__
    return f"(a JSON {kind})"


def _mismatch(message: str) -> ProtocolError:
    return ProtocolError(HEADER_MISMATCH, f"Header mismatch: {message}")
