"""What a Python function says about itself as a tool: parameters, their schema, its docs.

Read from the function's code object and type hints (no ``inspect`` on the common path: it
costs start-up time). Docstrings may be Google style (``Args:``; also ``Arguments:``,
``Parameters:`` and ``参数:``), NumPy style (``Parameters`` underlined) or Sphinx style
(``:param name: ...``); the text before the parameter section is the tool's description.
"""

from __future__ import annotations

import builtins as _builtins
import keyword
import re
import typing
from collections.abc import Callable
from typing import Any

from .schema import SchemaBuilder, TypeSpec, is_json_default, json_default

_SECTION = re.compile(
    r"^\s*(args|arguments|parameters|params|keyword args|参数)\s*(?::|\uff1a)?\s*$",
    re.IGNORECASE,
)
_OTHER_SECTION = re.compile(
    r"^\s*(returns?|yields?|raises?|examples?|notes?|see also|返回|异常)\s*(?::|\uff1a)?\s*$",
    re.IGNORECASE,
)
_SPHINX_PARAM = re.compile(r"^\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")
_ITEM = re.compile(r"^(\s*)(\*{0,2}\w+)\s*(?:\(([^)]*)\))?\s*(?::|\uff1a)\s*(.*)$")
_NUMPY_ITEM = re.compile(r"^(\s*)(\w+)\s*(?::\s*.*)?$")
_BLANK_LINES = re.compile(r"\n{3,}")


class Docs:
    """A docstring split into the description and per-parameter descriptions."""

    __slots__ = ("description", "params")

    def __init__(self, description: str | None, params: dict[str, str]) -> None:
        self.description = description
        self.params = params


def parse_docstring(doc: str | None) -> Docs:
    """Split a docstring; unknown layouts give the whole text as the description."""
    if not doc:
        return Docs(None, {})
    lines = _dedented_lines(doc)
    description: list[str] = []
    params: dict[str, str] = {}
    current: str | None = None
    indent = -1
    section = "description"
    i = 0
    while i < len(lines):
        line = lines[i]
        sphinx = _SPHINX_PARAM.match(line)
        if sphinx:
            current, section = sphinx.group(1), "sphinx"
            params[current] = sphinx.group(2).strip()
        elif _SECTION.match(line):
            section, current, indent = "params", None, -1
            if i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}:
                section = "numpy"
                i += 1
        elif _OTHER_SECTION.match(line) or line.strip().startswith(":return"):
            section, current = "other", None
            if i + 1 < len(lines) and lines[i + 1].strip() and set(lines[i + 1].strip()) == {"-"}:
                i += 1
        elif section == "description":
            description.append(line)
        elif section in ("params", "numpy", "sphinx") and line.strip():
            current, indent = _param_line(line, section, params, current, indent)
        i += 1
    text = "\n".join(description).strip()
    return Docs(_BLANK_LINES.sub("\n\n", text) or None, {k: " ".join(v.split()) for k, v in params.items()})


def _param_line(
    line: str,
    section: str,
    params: dict[str, str],
    current: str | None,
    indent: int,
) -> tuple[str | None, int]:
    width = len(line) - len(line.lstrip())
    item = _ITEM.match(line) if section != "numpy" else _NUMPY_ITEM.match(line)
    if item and (indent < 0 or width <= indent):
        name = item.group(2).lstrip("*")
        params[name] = item.group(4).strip() if section != "numpy" else ""
        return name, width
    if current is not None:
        params[current] = (params[current] + " " + line.strip()).strip()
    return current, indent


def _dedented_lines(doc: str) -> list[str]:
    lines = doc.expandtabs().splitlines()
    rest = [len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()]
    margin = min(rest) if rest else 0
    return [lines[0].strip()] + [line[margin:] for line in lines[1:]]


class Parameter:
    """One parameter of a tool function."""

    __slots__ = ("annotation", "default", "name", "required")

    def __init__(self, name: str, annotation: Any, default: Any, required: bool) -> None:
        self.name = name
        self.annotation = annotation
        self.default = default
        self.required = required


class Signature:
    """The parameters of a function (``self`` of bound methods left out) and its return hint."""

    __slots__ = ("has_return_hint", "parameters", "returns")

    def __init__(self, parameters: list[Parameter], returns: Any, has_return_hint: bool) -> None:
        self.parameters = parameters
        self.returns = returns
        self.has_return_hint = has_return_hint


def read_signature(fn: Callable[..., Any]) -> Signature:
    """The parameters and return hint of ``fn``; ``TypeError`` for ``*args``/``**kwargs``."""
    target = getattr(fn, "__func__", fn)  # bound methods
    skip = 1 if target is not fn else 0
    code = getattr(target, "__code__", None)
    if code is None:
        return _signature_by_inspect(fn)
    try:
        hints = type_hints(target)
    except NameError as exc:
        problem = f"cannot resolve a type hint ({exc}); define it at module level"
        raise TypeError(f"{target.__qualname__}: {problem}") from None
    if code.co_flags & 0x04 or code.co_flags & 0x08:  # CO_VARARGS, CO_VARKEYWORDS
        raise TypeError(f"{target.__qualname__}: a tool cannot take *args or **kwargs")
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    positional = code.co_varnames[: code.co_argcount]
    defaults = dict(
        zip(positional[len(positional) - len(target.__defaults__ or ()) :], target.__defaults__ or (), strict=True)
    )
    defaults.update(target.__kwdefaults__ or {})
    parameters = [
        Parameter(name, hints.get(name, Any), defaults.get(name), name not in defaults) for name in names[skip:]
    ]
    return Signature(parameters, hints.get("return", Any), "return" in hints)


def type_hints(function: Any) -> dict[str, Any]:
    """``typing.get_type_hints(function, include_extras=True)``: the same dict, the same errors.

    Annotations that are a plain class, ``None`` or the name of either (``str``, ``"str"``)
    are looked up in the function's globals and builtins, which is all that evaluating them
    does (``typing`` compiles each string); a function with any other annotation goes to
    ``typing``.
    """
    annotations = getattr(function, "__annotations__", None)
    namespace = getattr(function, "__globals__", None)
    if type(annotations) is not dict or type(namespace) is not dict or hasattr(function, "__wrapped__"):
        return typing.get_type_hints(function, include_extras=True)
    hints: dict[str, Any] = {}
    for name, value in annotations.items():
        if type(value) is str:
            value = _lookup(value, namespace)
        if value is None:
            value = _NONE_TYPE
        if type(value) is not type or value is typing.Generic:
            return typing.get_type_hints(function, include_extras=True)
        hints[name] = value
    return hints


def _lookup(name: str, namespace: dict[str, Any]) -> Any:
    """What evaluating ``name`` in ``namespace`` gives if it is a plain name (``None`` for
    ``"None"``), else a marker that is not a class."""
    if name == "None":
        return None
    if not name.isidentifier() or keyword.iskeyword(name):
        return _MISSING
    if name in namespace:
        return namespace[name]
    builtins = namespace.get("__builtins__", _builtins)
    return getattr(builtins, "__dict__", builtins).get(name, _MISSING)


_NONE_TYPE = type(None)
_MISSING: Any = object()


def _signature_by_inspect(fn: Callable[..., Any]) -> Signature:
    import inspect

    signature = inspect.signature(fn)
    hints = typing.get_type_hints(type(fn).__call__, include_extras=True)
    parameters = []
    for p in signature.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"{fn!r}: a tool cannot take *args or **kwargs")
        annotation = hints.get(p.name, Any if p.annotation is p.empty else p.annotation)
        required = p.default is p.empty
        parameters.append(Parameter(p.name, annotation, None if required else p.default, required))
    returns = hints.get("return", Any)
    return Signature(parameters, returns, "return" in hints)


def parameters_schema(
    parameters: list[Parameter],
    docs: Docs,
    builder: SchemaBuilder,
) -> tuple[dict[str, Any], dict[str, Callable[[Any], Any]]]:
    """The ``inputSchema`` of ``parameters`` and the converters of those that need one."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    converters: dict[str, Callable[[Any], Any]] = {}
    for parameter in parameters:
        spec: TypeSpec = builder.compile(parameter.annotation)
        schema = dict(spec.schema)
        if "$ref" in schema and len(schema) > 1:
            schema = {"allOf": [{"$ref": schema.pop("$ref")}], **schema}
        description = docs.params.get(parameter.name)
        if description and "description" not in schema:
            schema["description"] = description
        if parameter.required:
            required.append(parameter.name)
        else:
            default = json_default(parameter.default)
            if is_json_default(default) and default is not None:
                schema.setdefault("default", default)
        properties[parameter.name] = schema
        if spec.convert is not None:
            converters[parameter.name] = spec.convert
    schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    if not parameters:
        schema["additionalProperties"] = False
    if builder.defs:
        schema["$defs"] = builder.defs
    return schema, converters
