"""What one OpenAPI operation becomes: the shape the mapping (:mod:`.mapping`) produces and
the caller (:mod:`.calls`) consumes. Plain data, no behaviour: the mapping decides names and
schemas once, at load; a call only reads these fields."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

#: Where an argument goes in the HTTP request; ``"body"`` is one property of an object body.
Location = Literal["path", "query", "header", "cookie", "body"]
#: What the operation is served as.
Kind = Literal["tool", "resource", "template"]


@dataclass(frozen=True, slots=True)
class Parameter:
    """One argument of the tool and where it goes in the request."""

    #: Its name in the tool's ``inputSchema`` (unique there; may differ from ``name`` when the
    #: same name occurs in two places, e.g. ``id`` in the path and ``body_id`` in the body).
    argument: str
    #: Its name in the request (the path template's ``{name}``, the query key, the header...).
    name: str
    location: Location
    required: bool = False
    #: OpenAPI serialization (``form``/``simple``/``label``/``matrix``/``spaceDelimited``/
    #: ``pipeDelimited``/``deepObject``) with the OpenAPI default for the location when absent.
    style: str = "form"
    explode: bool = True
    allow_reserved: bool = False
    #: Its schema as it appears in ``inputSchema`` (references resolved or pointing at ``$defs``).
    schema: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Body:
    """The request body of an operation."""

    #: ``application/json`` (or a ``+json`` type), ``application/x-www-form-urlencoded`` or
    #: ``multipart/form-data`` (simple fields only).
    media_type: str
    required: bool = False
    #: ``None``: the body is an object whose properties are arguments (the ``Parameter``
    #: entries with location ``"body"``); else the one argument holding the whole body
    #: (a body that is not an object, or one whose properties could not be spread).
    argument: str | None = None


@dataclass(slots=True)
class Operation:
    """One operation of the document, mapped."""

    #: The MCP name: valid (``[A-Za-z0-9_.-]{1,128}``), unique in the document, stable.
    name: str
    method: str  # upper case: "GET", "POST", ...
    path: str  # the template as in the document: "/pets/{petId}"
    operation_id: str | None = None
    title: str | None = None
    description: str | None = None
    tags: tuple[str, ...] = ()
    parameters: tuple[Parameter, ...] = ()
    body: Body | None = None
    #: A JSON Schema object (``"type": "object"``), with shared definitions under ``$defs``.
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    #: From the first 2xx JSON response; an object schema, or ``{"type": "object",
    #: "properties": {"result": ...}}`` when the response is not an object (``output_wrapped``).
    output_schema: dict[str, Any] | None = None
    output_wrapped: bool = False
    #: MCP tool annotations (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``, ``openWorldHint``).
    annotations: dict[str, Any] = field(default_factory=dict)
    kind: Kind = "tool"
    #: For ``kind`` ``"resource"``/``"template"``: the URI (template) it is served at.
    uri: str | None = None


@dataclass(frozen=True, slots=True)
class Skipped:
    """An operation the mapping left out, and why (one line a person can act on)."""

    method: str
    path: str
    reason: str
