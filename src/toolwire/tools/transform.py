"""Tools derived from other tools without copying their code: renamed, described anew,
with arguments hidden (a fixed value) or given defaults.

:func:`derive` (``Tool.from_tool``) makes the new tool. Renaming or re-describing only gives
a copy of the original under new names: the same handler, validator, task support and
scopes, with nothing more on its calls. Hiding an argument or giving one a default makes a
:class:`DerivedTool`: its schema leaves the hidden arguments out (a client that sends one
anyway is overruled) and shows each default; a call fills them in, then is validated
against the original's schema and run by the original, whose result rules (output schema,
structured content) apply unchanged. :func:`prefixed` is what ``server.mount`` does to a
tool, a prompt, a resource or a template: the same object under a prefixed name or URI.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Mapping
from typing import Any

from .tags import tag_set
from .tool import Tool, ToolContext, check_name
from .validation import Validator

#: Derivable without a wrapper: the fields of the definition and what only the server reads.
_DESCRIBED = ("title", "description", "annotations", "icons", "meta")


class DerivedTool(Tool):
    """A tool that fills some arguments in, then runs ``parent`` (see :func:`derive`)."""

    parent: Tool
    fixed: dict[str, Any]
    defaults: dict[str, Any]

    def invoke(self, arguments: dict[str, Any], context: ToolContext | None = None, loop: Any = None) -> Awaitable[Any]:
        """Run the parent with the hidden and default arguments filled in, checked against
        the parent's schema (:class:`~toolwire.tools.validation.ArgumentsInvalid` if a
        default or fixed value breaks it)."""
        filled = {**self.defaults, **arguments, **self.fixed}
        parent = self.parent
        return parent.invoke(parent.validate_arguments(filled), context, loop)


def derive(
    tool: Tool,
    *,
    name: str | None = None,
    hide: Mapping[str, Any] | None = None,
    defaults: Mapping[str, Any] | None = None,
    tags: Iterable[str] | None = None,
    **described: Any,
) -> Tool:
    """A tool made from ``tool``: ``name`` (default: the same), ``title``, ``description``,
    ``annotations``, ``icons``, ``meta`` replaced where given; ``tags`` replaced where given;
    ``hide`` maps arguments to the value every call gets (gone from the schema);
    ``defaults`` maps arguments to the value a call that leaves them out gets (shown as the
    schema's ``default``, no longer required). The original's version (if it has one) is
    not kept: the result is a tool of its own. ``ValueError`` for an argument the tool does
    not have, or one both hidden and defaulted; ``TypeError`` for another keyword."""
    unknown = set(described) - set(_DESCRIBED)
    if unknown:
        raise TypeError(f"from_tool() got an unexpected keyword argument {min(unknown)!r}")
    hide, defaults = dict(hide or {}), dict(defaults or {})
    _check_arguments(tool, hide, defaults)
    kind = DerivedTool if hide or defaults else type(tool)  # a derived tool renamed stays one
    derived: Tool = kind.__new__(kind)
    derived.__dict__.update(tool.__dict__)
    derived.__dict__.pop("version", None)  # a tool of its own, not one more version of the original
    derived.name = check_name(name) if name is not None else tool.name
    for key, value in described.items():
        setattr(derived, key, value)
    if tags is not None:
        derived.tags = tag_set(f"tool {derived.name!r}", tags)
    derived.enabled = True
    if isinstance(derived, DerivedTool):
        derived.parent = tool
        derived.fixed = hide
        derived.defaults = defaults
        derived.input_schema = _schema_without(tool.input_schema, hide, defaults)
        derived.input_validator = Validator(derived.input_schema, lenient=tool.input_validator.lenient)
        derived._params = frozenset(derived.input_schema.get("properties", ()))
        derived.direct = None
        derived.header_parameters = {key: path for key, path in tool.header_parameters.items() if path[0] not in hide}
    derived.definition = derived._definition()
    return derived


def _check_arguments(tool: Tool, hide: dict[str, Any], defaults: dict[str, Any]) -> None:
    properties = tool.input_schema.get("properties", {})
    for argument in [*hide, *defaults]:
        if argument not in properties:
            raise ValueError(f"tool {tool.name!r} has no argument {argument!r} to hide or default")
    both = hide.keys() & defaults.keys()
    if both:
        raise ValueError(f"argument {min(both)!r} is both hidden and given a default: pick one")


def _schema_without(schema: dict[str, Any], hide: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without the ``hide`` arguments, the ``defaults`` ones optional and showing
    their default."""
    properties = {key: value for key, value in schema.get("properties", {}).items() if key not in hide}
    for key, value in defaults.items():
        properties[key] = {**properties[key], "default": value}
    derived = {**schema, "properties": properties}
    required = [key for key in schema.get("required", []) if key not in hide and key not in defaults]
    if required:
        derived["required"] = required
    else:
        derived.pop("required", None)
    return derived
