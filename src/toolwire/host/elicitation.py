"""Forms a server asks the person to fill in (elicitation), field by field.

An elicitation's ``requestedSchema`` is a flat object of strings (with ``format``,
``minLength``...), numbers, integers, booleans and enums (``enum``, ``oneOf`` of ``const``
entries, or an array of enum items for several choices). :func:`form_fields` lists its
fields for a user interface, :func:`parse_field` turns what a person typed into a field's
value, and :func:`check_answer` checks the whole answer against the schema before it is
sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..tools.validation import ArgumentsInvalid, SchemaError, Validator


@dataclass(frozen=True, slots=True)
class FormField:
    name: str
    label: str
    description: str
    required: bool
    schema: dict[str, Any]

    @property
    def choices(self) -> list[Any]:
        """The values to choose from (empty for a free field)."""
        schema = self.schema
        if schema.get("type") == "array":
            schema = schema.get("items") or {}
        if "enum" in schema:
            return list(schema["enum"])
        return [entry.get("const") for entry in schema.get("oneOf") or schema.get("anyOf") or [] if "const" in entry]


def form_fields(schema: dict[str, Any]) -> list[FormField]:
    """The fields of an elicitation form, in the schema's order."""
    required = set(schema.get("required") or [])
    out = []
    for name, field in (schema.get("properties") or {}).items():
        field = field if isinstance(field, dict) else {}
        label = str(field.get("title") or name)
        out.append(FormField(name, label, str(field.get("description") or ""), name in required, field))
    return out


def parse_field(field: FormField, text: str) -> Any:
    """The value of ``field`` from what was typed; ``ValueError`` saying what is expected.
    Several choices are given separated by commas."""
    kind = field.schema.get("type")
    text = text.strip()
    if kind == "boolean":
        lowered = text.lower()
        if lowered in ("y", "yes", "true", "1", "是"):
            return True
        if lowered in ("n", "no", "false", "0", "否"):
            return False
        raise ValueError("answer yes or no")
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise ValueError("a whole number is needed") from None
    if kind == "number":
        try:
            value = float(text)
        except ValueError:
            raise ValueError("a number is needed") from None
        return int(value) if value.is_integer() and "." not in text else value
    if kind == "array":
        return [item.strip() for item in text.split(",") if item.strip()]
    return text


def check_answer(schema: dict[str, Any], content: dict[str, Any]) -> None:
    """``ValueError`` naming what in ``content`` breaks ``schema`` (nothing if it fits)."""
    try:
        Validator(schema).check(content, "the answer does not fit the form")
    except SchemaError as exc:
        raise ValueError(f"the server's form is not a usable schema: {exc}") from None
    except ArgumentsInvalid as exc:
        raise ValueError(str(exc)) from None
