"""YAML read as JSON, within bounds: what a ``SKILL.md``'s frontmatter may hold (and, with
bounds of its own, an OpenAPI document: :mod:`toolwire.openapi.document`).

:func:`load` reads one YAML document with PyYAML's safe parser under these rules, so that
text from anyone costs little and gives only what JSON carries:

- no aliases (``*name``: an alias bomb of a few hundred bytes otherwise grows to gigabytes,
  and an alias of its own anchor never ends), at most :data:`MAX_DEPTH` levels of nesting
  and :data:`MAX_NODES` values unless the caller sets other bounds (the caller caps the
  text's size);
- plain values typed by the YAML 1.2 core schema, as other SDKs read them (``yes``, ``on``
  and ``2026-01-02`` stay strings; ``017`` is seventeen);
- nothing JSON cannot carry: ``.nan``, ``.inf``, a number too large for a double, a key
  that is not a string, or what a tag such as ``!!binary``, ``!!set`` or ``!!timestamp``
  makes is refused; an integer beyond 64 bits becomes the nearest double, as a JavaScript
  reader reads it.

Whatever breaks a rule, and YAML that does not parse, raises :class:`YAMLRefused` (a
``ValueError``) saying what and on which line. Needs PyYAML (the ``skills`` extra, or
``openapi`` for documents).
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

from ..extras import needs

MAX_DEPTH = 32
MAX_NODES = 10_000
#: Digits of the longest integer read (a double holds at most 309 decimal digits).
MAX_DIGITS = 320
#: The YAML 1.2 core schema's plain scalars: tag, pattern and the characters they begin with.
CORE_SCHEMA = [
    ("tag:yaml.org,2002:null", r"~|null|Null|NULL|", "~nN"),
    ("tag:yaml.org,2002:bool", r"true|True|TRUE|false|False|FALSE", "tTfF"),
    ("tag:yaml.org,2002:int", r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+", "-+0123456789"),
    (
        "tag:yaml.org,2002:float",
        r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
        "-+.0123456789",
    ),
]
#: The integers JSON is written with as they are (64 bits, signed or not); larger ones become doubles.
_EXACT = range(-(2**63), 2**64)


class YAMLRefused(ValueError):
    """YAML that does not parse or breaks the rules of :mod:`.yaml_json`: the message says
    what, and where."""


def load(
    text: str,
    first_line: int = 1,
    *,
    max_depth: int = MAX_DEPTH,
    max_nodes: int = MAX_NODES,
    number_keys: bool = False,
    what: str = "reading a SKILL.md",
    extra: str = "skills",
) -> Any:
    """The YAML document ``text`` as JSON values. :class:`YAMLRefused` as the module says,
    counting lines from ``first_line``, with the bounds given; ``number_keys`` reads a key
    written as an integer (``200:``) as its text (``"200"``) instead of refusing it. Without
    PyYAML, :class:`~toolwire.extras.ExtraMissing` saying ``what`` needs ``extra``."""
    with needs(extra, what):
        import yaml

    try:
        loader = _loader_class()(text, first_line, max_depth, max_nodes)
        try:
            return _json(loader.get_single_data(), "", number_keys)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" (line {mark.line + first_line})" if mark is not None else ""
        raise YAMLRefused(f"{exc.problem or exc.context}{where}") from None
    except yaml.reader.ReaderError as exc:
        raise YAMLRefused(f"the character U+{exc.character:04X} is not allowed in YAML") from None
    except yaml.YAMLError as exc:
        raise YAMLRefused(" ".join(str(exc).split())) from None


def _number_key(key: Any) -> Any:
    return str(key) if isinstance(key, int) and not isinstance(key, bool) else key


def _json(value: Any, path: str, number_keys: bool) -> Any:
    """``value`` if JSON carries it (checked all the way down), else :class:`YAMLRefused`."""
    if isinstance(value, dict):
        if number_keys:
            value = {_number_key(key): item for key, item in value.items()}
        for key in value:
            if not isinstance(key, str):
                raise YAMLRefused(f"the key {key!r} in {repr(path) if path else 'the top'} is not a string: quote it")
        return {key: _json(item, f"{path}.{key}" if path else key, number_keys) for key, item in value.items()}
    if isinstance(value, list):
        return [_json(item, f"{path}[{index}]", number_keys) for index, item in enumerate(value)]
    if value is None or isinstance(value, str | bool | int | float):
        return value
    raise YAMLRefused(f"{path or 'the document'!r} is a {type(value).__name__}, which JSON cannot carry")


@functools.cache
def _loader_class() -> type[Any]:
    """PyYAML's pure-Python safe loader with the bounds kept where nodes are composed (the
    C loader composes in C, out of reach) and the core schema's scalars."""
    import yaml

    class Loader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML has no types
        def __init__(self, text: str, first_line: int, max_depth: int, max_nodes: int) -> None:
            super().__init__(text)
            self.depth = 0
            self.nodes = 0
            self.first_line = first_line
            self.max_depth = max_depth
            self.max_nodes = max_nodes

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()
            line = event.start_mark.line + self.first_line
            if isinstance(event, yaml.AliasEvent):
                raise YAMLRefused(f"aliases (*{event.anchor}) are not allowed (line {line})")
            self.nodes += 1
            if self.nodes > self.max_nodes:
                raise YAMLRefused(f"more than {self.max_nodes} values (line {line})")
            nests = isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent)
            if nests and self.depth >= self.max_depth:
                raise YAMLRefused(f"nested more than {self.max_depth} levels deep (line {line})")
            self.depth += nests
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= nests

        def integer(self, node: Any) -> int | float:
            text = str(self.construct_scalar(node)).lstrip("+")
            base = {"0o": 8, "0x": 16}.get(text[:2], 10)
            digits = text[2:] if base != 10 else text
            if len(digits) > MAX_DIGITS:
                raise YAMLRefused(f"the number {text[:20]}... is too large for JSON: quote it{self.where(node)}")
            try:
                value = int(digits, base)
            except ValueError:  # what an explicit !!int tags
                raise YAMLRefused(f"{text[:20]!r} is not an integer{self.where(node)}") from None
            return value if value in _EXACT else self.finite(value, text, node)

        def real(self, node: Any) -> float:
            text = str(self.construct_scalar(node))
            return self.finite(text, text, node)

        def finite(self, number: int | str, text: str, node: Any) -> float:
            """``number`` as a double; :class:`YAMLRefused` when none holds it (``.inf``,
            ``.nan``, ``1e999``, an integer beyond the largest double)."""
            try:
                value = float(number)
            except (OverflowError, ValueError):
                value = math.inf
            if not math.isfinite(value):
                raise YAMLRefused(f"{text!r} cannot be represented in JSON: quote it{self.where(node)}")
            return value

        def where(self, node: Any) -> str:
            return f" (line {node.start_mark.line + self.first_line})"

    Loader.yaml_implicit_resolvers = {}  # YAML 1.1's resolvers (yes, dates, 0777, 1:20) left out
    for tag, pattern, first in CORE_SCHEMA:
        Loader.add_implicit_resolver(tag, re.compile(f"^(?:{pattern})$"), [*first, ""] if "null" in tag else [*first])
    Loader.add_constructor("tag:yaml.org,2002:int", Loader.integer)
    Loader.add_constructor("tag:yaml.org,2002:float", Loader.real)
    return Loader
