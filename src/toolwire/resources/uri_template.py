"""URI templates (RFC 6570, levels 1 to 4): expanding them, and matching URIs against them.

A resource template such as ``test://template/{id}/data`` names a family of resources; a
``resources/read`` of ``test://template/42/data`` must find it and learn ``id = "42"``.
:class:`UriTemplate` parses a template once and offers both directions:

* :meth:`UriTemplate.expand` fills the variables in, as RFC 6570 section 3 says, for every
  operator (none, ``+``, ``#``, ``.``, ``/``, ``;``, ``?``, ``&``) and modifier (``:n``
  prefixes, ``*`` explosion of lists and mappings);
* :meth:`UriTemplate.match` is its inverse: it returns the variables of a URI the template
  could have produced, or ``None``. Values are percent-decoded; an exploded variable comes
  back as a list (or, for ``;``, ``?`` and ``&`` with ``name=value`` pairs, a dict).

Matching is necessarily a choice where expansions are ambiguous (``{a}{b}`` of ``xy``);
toolwire matches each expression as little as it can while the rest still matches, and
query expressions (``?``, ``&``) in any order, with unknown parameters ignored.
``ValueError`` for a template that is not valid RFC 6570.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, unquote

#: operator -> (first, separator, named, empty-value suffix, allow reserved characters)
_OPERATORS: dict[str, tuple[str, str, bool, str, bool]] = {
    "": ("", ",", False, "", False),
    "+": ("", ",", False, "", True),
    "#": ("#", ",", False, "", True),
    ".": (".", ".", False, "", False),
    "/": ("/", "/", False, "", False),
    ";": (";", ";", True, "", False),
    "?": ("?", "&", True, "=", False),
    "&": ("&", "&", True, "=", False),
}
_EXPRESSION = re.compile(r"\{([^{}]*)\}")
_VARCHAR = r"(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})"
_VARSPEC = re.compile(rf"{_VARCHAR}(?:\.?{_VARCHAR})*(?::([1-9][0-9]{{0,3}})|(\*))?")
#: What one value may contain, per operator, when matching (lazily: literals after it win).
_VALUE_CHARACTERS = {"": "[^/?#,]", "+": ".", "#": ".", ".": "[^/?#.]", "/": "[^/?#]", ";": "[^/?#;]"}
_UNRESERVED = "-._~"
_RESERVED = ":/?#[]@!$&'()*+,;="


class _Var:
    __slots__ = ("explode", "name", "prefix")

    def __init__(self, name: str, prefix: int | None, explode: bool) -> None:
        self.name = name
        self.prefix = prefix
        self.explode = explode


class _Expression:
    __slots__ = ("operator", "variables")

    def __init__(self, operator: str, variables: list[_Var]) -> None:
        self.operator = operator
        self.variables = variables


class UriTemplate:
    """A parsed URI template; ``ValueError`` if ``template`` is not valid RFC 6570."""

    def __init__(self, template: str) -> None:
        self.template = template
        self.parts: list[str | _Expression] = []
        position = 0
        for found in _EXPRESSION.finditer(template):
            literal = template[position : found.start()]
            if "{" in literal or "}" in literal:
                raise ValueError(f"invalid URI template {template!r}: unbalanced braces")
            if literal:
                self.parts.append(literal)
            self.parts.append(_parse_expression(template, found.group(1)))
            position = found.end()
        rest = template[position:]
        if "{" in rest or "}" in rest:
            raise ValueError(f"invalid URI template {template!r}: unbalanced braces")
        if rest:
            self.parts.append(rest)
        self.variables = [v.name for part in self.parts if isinstance(part, _Expression) for v in part.variables]
        if len(set(self.variables)) != len(self.variables):
            raise ValueError(f"invalid URI template {template!r}: a variable appears twice")
        self._pattern: re.Pattern[str] | None = None

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"

    @property
    def is_template(self) -> bool:
        """Whether there is any expression at all (else the template is one fixed URI)."""
        return bool(self.variables)

    # -- expansion ---------------------------------------------------------------------------

    def expand(self, values: dict[str, Any]) -> str:
        """The URI for ``values`` (strings, numbers, lists or dicts); undefined variables
        (missing or ``None``) are left out, as RFC 6570 says."""
        out: list[str] = []
        for part in self.parts:
            out.append(part if isinstance(part, str) else _expand(part, values))
        return "".join(out)

    # -- matching ----------------------------------------------------------------------------

    def match(self, uri: str) -> dict[str, Any] | None:
        """The variables of ``uri`` if this template could have produced it, else ``None``."""
        pattern = self._pattern
        if pattern is None:
            pattern = self._pattern = re.compile(self._regex(), re.DOTALL)
        found = pattern.fullmatch(uri)
        if found is None:
            return None
        values: dict[str, Any] = {}
        index = 0
        for part in self.parts:
            if isinstance(part, str):
                continue
            if part.operator in ("?", "&"):
                query = found.group(f"q{index}")
                index += 1
                if query is not None:
                    _read_query(part, query, values)
                continue
            for var in part.variables:
                raw = found.group(f"v{index}")
                index += 1
                if raw is not None:
                    value = _read_value(part.operator, var, raw)
                    if value is None:
                        return None
                    values[var.name] = value
        return values

    def _regex(self) -> str:
        pieces: list[str] = []
        index = 0
        for part in self.parts:
            if isinstance(part, str):
                pieces.append(re.escape(part))
                continue
            first, separator, named, _, _ = _OPERATORS[part.operator]
            if part.operator in ("?", "&"):
                pieces.append(f"(?P<q{index}>{re.escape(first)}[^#]*)?")
                index += 1
                continue
            value = _VALUE_CHARACTERS[part.operator]
            for position, var in enumerate(part.variables):
                lead = re.escape(first if position == 0 else separator)
                if var.explode:
                    item = f"{value}*?"
                    body = f"{item}(?:{re.escape(separator)}{item})*?"
                elif named:
                    body = f"{re.escape(var.name)}(?:={value}*?)?"
                else:
                    body = value + (f"{{0,{var.prefix * 3}}}?" if var.prefix else "*?")
                pieces.append(f"(?:{lead}(?P<v{index}>{body}))?")
                index += 1
        return "".join(pieces)


def _parse_expression(template: str, body: str) -> _Expression:
    operator = body[:1] if body[:1] and body[:1] in _OPERATORS else ""
    if body[:1] and body[:1] in "=,!@|":
        raise ValueError(f"invalid URI template {template!r}: operator {body[:1]!r} is reserved")
    specs = body[len(operator) :].split(",")
    variables = []
    for spec in specs:
        found = _VARSPEC.fullmatch(spec)
        if found is None:
            raise ValueError(f"invalid URI template {template!r}: bad variable {spec!r}")
        name = spec.split(":")[0].rstrip("*")
        variables.append(_Var(name, int(found.group(1)) if found.group(1) else None, bool(found.group(2))))
    return _Expression(operator, variables)


def _encode(value: str, reserved: bool) -> str:
    return quote(value, safe=_UNRESERVED + (_RESERVED + "%" if reserved else ""))


def _expand(expression: _Expression, values: dict[str, Any]) -> str:
    first, separator, named, empty, reserved = _OPERATORS[expression.operator]
    items: list[str] = []
    for var in expression.variables:
        value = values.get(var.name)
        if value is None or (isinstance(value, (list, tuple, dict)) and not value):
            continue
        if isinstance(value, (list, tuple)):
            encoded = [_encode(_text(v), reserved) for v in value]
            if var.explode:
                items += [_named(var.name, v, empty) if named else v for v in encoded]
            else:
                items.append(_named(var.name, ",".join(encoded), empty) if named else ",".join(encoded))
        elif isinstance(value, dict):
            pairs = [(_encode(str(k), reserved), _encode(_text(v), reserved)) for k, v in value.items()]
            if var.explode:
                items += [f"{k}={v}" for k, v in pairs]
            else:
                flat = ",".join(f"{k},{v}" for k, v in pairs)
                items.append(_named(var.name, flat, empty) if named else flat)
        else:
            text = _text(value)
            if var.prefix is not None:
                text = text[: var.prefix]
            encoded_text = _encode(text, reserved)
            items.append(_named(var.name, encoded_text, empty) if named else encoded_text)
    return first + separator.join(items) if items else ""


def _named(name: str, value: str, empty: str) -> str:
    return f"{name}={value}" if value else name + empty


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _read_value(operator: str, var: _Var, raw: str) -> Any:
    """One matched variable, decoded; ``None`` if it cannot be what the template produces."""
    _, separator, named, _, _ = _OPERATORS[operator]
    if named:
        items = raw.split(separator) if var.explode else [raw]
        values = []
        for item in items:
            name, equals, value = item.partition("=")
            if not var.explode and unquote(name) != var.name:
                return None
            values.append((unquote(name), unquote(value) if equals else ""))
        if not var.explode:
            return values[0][1]
        if all(name == var.name for name, _ in values):
            return [value for _, value in values]
        return dict(values)
    if var.explode:
        return [unquote(item) for item in raw.split(separator)]
    return unquote(raw)


def _read_query(expression: _Expression, query: str, values: dict[str, Any]) -> None:
    """Variables of a ``?``/``&`` expression from a query string (any order, others ignored)."""
    pairs = [item.partition("=") for item in query[1:].split("&") if item]
    for var in expression.variables:
        found = [unquote(value) for name, _, value in pairs if unquote(name) == var.name]
        if found:
            values[var.name] = found if var.explode else found[0]
