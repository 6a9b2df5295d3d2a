"""The HTTP request one call of an operation makes: validated arguments in, the path, query,
headers and body out, serialized as OpenAPI says (no I/O here; :mod:`.calls` sends it).

Each parameter is written in its ``style`` and ``explode``:

=================  ==========================  ===================  =====================
style              primitive ``5``             array ``[3, 4]``     object ``{"a": 1}``
=================  ==========================  ===================  =====================
simple (path,      ``5``                       ``3,4``              ``a,1``; explode:
header)                                                             ``a=1``
label (path)       ``.5``                      ``.3,4``; explode:   ``.a,1``; explode:
                                               ``.3.4``             ``.a=1``
matrix (path)      ``;id=5``                   ``;id=3,4``;         ``;id=a,1``; explode:
                                               explode: ``;id=3;id=4``  ``;a=1``
form (query,       ``id=5``                    ``id=3&id=4``;       ``a=1``; not exploded:
cookie)                                        not exploded:        ``id=a,1``
                                               ``id=3,4``
spaceDelimited     as form                     ``id=3%204``         as form
pipeDelimited      as form                     ``id=3|4``           as form
deepObject         as form                     as form              ``id[a]=1`` (nested:
                                                                    ``id[a][b]=1``)
=================  ==========================  ===================  =====================

Values are percent-encoded (a path value's ``/`` too, so that it stays one segment);
``allowReserved`` keeps RFC 3986's reserved characters in a query value as they are, except
``&``, ``=``, ``#`` and ``+``, which would change what the query says. Booleans are ``true``
and ``false``, ``null`` leaves an optional parameter out. A JSON body is the one body
argument, or the object of the body's arguments; a form or multipart body holds its fields
(lists repeated). :class:`RequestInvalid` for a value a request cannot carry (a line break
in a header) and for a header argument that would frame the message or carry credentials
(:data:`RESERVED_HEADERS`: ``Host``, ``Authorization``...): the tool answers with an
execution error naming the argument.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import orjson

from ..errors import ToolwireError
from .operation import Operation, Parameter

#: RFC 3986's reserved characters that ``allowReserved`` leaves alone in a query value.
RESERVED_KEPT = ":/?[]@!$'()*,;"
#: Headers an argument never sets: they frame the message or carry credentials (which are
#: the server's to configure, never the model's).
RESERVED_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "te",
        "upgrade",
        "authorization",
        "proxy-authorization",
        "cookie",
    }
)


class RequestInvalid(ToolwireError):
    """An argument that the HTTP request cannot carry; the message names it and why."""


@dataclass
class Outgoing:
    """What a call sends: ``target`` is the path and query (``/pets/7?limit=5``), relative to
    the API's base URL; ``json`` the JSON body's bytes, ``form`` the fields of a form or
    multipart body (whichever ``media_type`` says)."""

    method: str
    target: str
    headers: list[tuple[str, str]] = field(default_factory=list)
    media_type: str | None = None
    content: bytes | None = None
    form: list[tuple[str, str]] | None = None


def build_request(operation: Operation, arguments: dict[str, Any]) -> Outgoing:
    """The request ``operation`` makes for ``arguments`` (validated against its input
    schema); :class:`RequestInvalid` for a value a request cannot carry."""
    path = operation.path
    query: list[str] = []
    headers: list[tuple[str, str]] = []
    cookies: list[str] = []
    fields: dict[str, Any] = {}
    for parameter in operation.parameters:
        if parameter.argument not in arguments:
            continue
        value = arguments[parameter.argument]
        location = parameter.location
        if location == "body":
            fields[parameter.name] = value
        elif value is None:
            continue
        elif location == "path":
            path = path.replace("{" + parameter.name + "}", _path_value(parameter, value))
        elif location == "query":
            query.extend(_query_pairs(parameter, value))
        elif location == "header":
            headers.append((parameter.name, _header_value(parameter, value)))
        else:
            cookies.extend(_cookie_pairs(parameter, value))
    if cookies:
        headers.append(("Cookie", "; ".join(cookies)))
    outgoing = Outgoing(operation.method, path + ("?" + "&".join(query) if query else ""), headers)
    body = operation.body
    if body is not None:
        if body.argument is not None:
            present = body.argument in arguments
            value = arguments.get(body.argument)
        else:
            present, value = bool(fields) or body.required, fields
        if present:
            outgoing.media_type = body.media_type
            if body.media_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
                outgoing.form = list(_form_fields(value))
            else:
                outgoing.content = orjson.dumps(value)
    return outgoing


def _text(value: Any) -> str:
    """A primitive as it is written in a URL or header: strings as they are, JSON otherwise."""
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def _encode(value: Any, safe: str = "") -> str:
    return quote(_text(value), safe=safe)


def _path_value(parameter: Parameter, value: Any) -> str:
    name, style, explode = parameter.name, parameter.style, parameter.explode
    if style == "label":
        prefix, joiner = ".", "." if explode else ","
        return prefix + _joined(value, joiner, explode, "=")
    if style == "matrix":
        if isinstance(value, list):
            if explode:
                return "".join(f";{name}={_encode(item)}" for item in value)
            return f";{name}=" + ",".join(_encode(item) for item in value)
        if isinstance(value, dict) and explode:
            return "".join(f";{_encode(key)}={_encode(item)}" for key, item in value.items())
        return f";{name}=" + _joined(value, ",", False, ",")
    return _joined(value, ",", explode, "=")


def _joined(value: Any, joiner: str, explode: bool, pair: str) -> str:
    """A value percent-encoded: a list's items joined; an object's keys and values as
    ``k=v`` (``explode``) or ``k,v``."""
    if isinstance(value, list):
        return joiner.join(_encode(item) for item in value)
    if isinstance(value, dict):
        between = pair if explode else ","
        return joiner.join(f"{_encode(key)}{between}{_encode(item)}" for key, item in value.items())
    return _encode(value)


def _query_pairs(parameter: Parameter, value: Any) -> Iterator[str]:
    name = quote(parameter.name, safe="")
    safe = RESERVED_KEPT if parameter.allow_reserved else ""
    style, explode = parameter.style, parameter.explode
    if isinstance(value, dict):
        if style == "deepObject":
            yield from _deep(name, value, safe)
        elif explode:
            yield from (f"{_encode(key)}={_encode(item, safe)}" for key, item in value.items())
        else:
            yield f"{name}=" + ",".join(f"{_encode(key, safe)},{_encode(item, safe)}" for key, item in value.items())
    elif isinstance(value, list):
        if explode:
            yield from (f"{name}={_encode(item, safe)}" for item in value)
        else:
            joiner = {"spaceDelimited": "%20", "pipeDelimited": "|"}.get(style, ",")
            yield f"{name}=" + joiner.join(_encode(item, safe) for item in value)
    else:
        yield f"{name}={_encode(value, safe)}"


def _deep(prefix: str, value: dict[str, Any], safe: str) -> Iterator[str]:
    """``prefix[key]=value`` for each entry, nested objects as ``prefix[key][sub]``, lists
    as the key repeated."""
    for key, item in value.items():
        name = f"{prefix}%5B{_encode(key)}%5D"
        if isinstance(item, dict):
            yield from _deep(name, item, safe)
        elif isinstance(item, list):
            yield from (f"{name}={_encode(one, safe)}" for one in item)
        elif item is not None:
            yield f"{name}={_encode(item, safe)}"


def _header_value(parameter: Parameter, value: Any) -> str:
    if parameter.name.lower() in RESERVED_HEADERS:
        raise RequestInvalid(
            f"the argument {parameter.argument!r} would set the {parameter.name} header, which only the server sets"
        )
    if isinstance(value, list):
        text = ",".join(_text(item) for item in value)
    elif isinstance(value, dict):
        between = "=" if parameter.explode else ","
        text = ",".join(f"{key}{between}{_text(item)}" for key, item in value.items())
    else:
        text = _text(value)
    if any(character in text for character in "\r\n\0"):
        raise RequestInvalid(f"the argument {parameter.argument!r} goes in a header, which cannot hold line breaks")
    return text


def _cookie_pairs(parameter: Parameter, value: Any) -> Iterator[str]:
    name = parameter.name
    cookie_safe = "!#$&'()*+-./:<=>?@[]^_`{|}~"  # RFC 6265's cookie-octets, less what must be escaped
    if isinstance(value, list) and parameter.explode:
        yield from (f"{name}={quote(_text(item), safe=cookie_safe)}" for item in value)
    elif isinstance(value, (list, dict)):
        yield f"{name}={quote(_joined_plain(value), safe=cookie_safe + ',')}"
    else:
        yield f"{name}={quote(_text(value), safe=cookie_safe)}"


def _joined_plain(value: list[Any] | dict[str, Any]) -> str:
    if isinstance(value, list):
        return ",".join(_text(item) for item in value)
    return ",".join(f"{key},{_text(item)}" for key, item in value.items())


def _form_fields(value: Any) -> Iterator[tuple[str, str]]:
    """The fields of a form body: each property, a list's items as the field repeated."""
    if not isinstance(value, dict):
        raise RequestInvalid("a form body is an object of fields")
    for key, item in value.items():
        if item is None:
            continue
        for one in item if isinstance(item, list) else [item]:
            yield key, _text(one)
