"""Resources: data a server exposes by URI, fixed (:class:`Resource`) or by URI template
(:class:`ResourceTemplate`), and what reading one returns.

A resource's function is called on each ``resources/read``; what it returns becomes the
``contents`` list:

================================  ===========================================================
the function returns              the contents
================================  ===========================================================
``str``                           one text entry (the resource's MIME type, else text/plain)
``bytes``                         one blob entry, base64 (MIME type declared, else guessed
                                  from the bytes or the URI, else application/octet-stream)
``contents(...)`` or a list       exactly those (several entries: a directory, say)
of them
any other value                   its JSON, as text of type application/json
``None``                          the resource does not exist: the not-found error
================================  ===========================================================

Raise :class:`ResourceNotFound` for a URI that matches a template but names nothing (an
unknown id): clients get the protocol's not-found error (``-32002`` up to 2025-11-25,
``-32602`` from 2026-07-28, with ``data.uri`` in both).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable
from typing import Any

from ..auth.identity import scope_set
from ..errors import ToolwireError
from ..tools.results import dumps
from ..tools.tags import tag_set
from ..tools.tool import Tool, ToolContext
from .uri_template import UriTemplate

__all__ = ["Resource", "ResourceContents", "ResourceNotFound", "ResourceTemplate", "resource_contents"]

#: A completer: a list of values, or ``fn(value)`` / ``fn(value, arguments)`` (sync or async).
Completer = list[str] | Callable[..., Any]


class ResourceNotFound(ToolwireError, LookupError):
    """Raise from a resource function when the URI names nothing: the client gets the
    protocol's not-found error for ``uri``."""

    def __init__(self, uri: str, reason: str | None = None) -> None:
        super().__init__(f"Resource not found: {uri}" + (f" ({reason})" if reason else ""))
        self.uri = uri
        self.reason = reason


class ResourceContents(dict[str, Any]):
    """One entry of a ``resources/read`` result: ``uri``, ``mimeType`` and ``text`` or ``blob``."""


def resource_contents(
    data: str | bytes,
    *,
    uri: str | None = None,
    mime_type: str | None = None,
    meta: dict[str, Any] | None = None,
) -> ResourceContents:
    """A contents entry: text for ``str``, a base64 blob for ``bytes``. ``uri`` defaults to
    the URI being read; ``mime_type`` to the resource's."""
    entry = ResourceContents()
    if uri is not None:
        entry["uri"] = uri
    if mime_type is not None:
        entry["mimeType"] = mime_type
    if isinstance(data, str):
        entry["text"] = data
    elif isinstance(data, (bytes, bytearray, memoryview)):
        entry["blob"] = base64.b64encode(bytes(data)).decode()
    else:
        raise TypeError(f"resource contents are str or bytes, not {type(data).__name__}")
    if meta:
        entry["_meta"] = meta
    return entry


class _Described:
    """What resources and templates share: the metadata clients list, and the function."""

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        scopes: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
    ) -> None:
        function_name = getattr(function, "__name__", "")
        named = function_name.isidentifier()  # not "<lambda>"
        self._call = Tool.from_function(
            function, name=function_name if named else "resource", structured_output=False, lenient=True
        )
        self.name = name or (function_name if named else "")
        self.title = title
        self.description = description if description is not None else self._call.description
        self.mime_type = mime_type
        self.annotations = annotations
        self.icons = icons
        self.meta = meta
        #: OAuth scopes a caller needs to see and read it (HTTP with ``auth=``).
        self.scopes = scope_set(self.name or "resource", scopes)
        #: Labels that visibility rules pick resources by (server-side only).
        self.tags = tag_set(f"resource {self.name!r}", tags)
        self.enabled = True

    @property
    def wants_context(self) -> bool:
        return self._call.wants_context

    def _describe(self, definition: dict[str, Any]) -> dict[str, Any]:
        for key, value in (
            ("title", self.title),
            ("description", self.description),
            ("mimeType", self.mime_type),
            ("annotations", self.annotations),
            ("icons", self.icons),
            ("_meta", self.meta),
        ):
            if value:
                definition[key] = value
        return definition

    async def _read(self, uri: str, arguments: dict[str, Any], context: ToolContext | None) -> list[dict[str, Any]]:
        value = await self._call.invoke(arguments, context)
        return to_contents(value, uri, self.mime_type)


class Resource(_Described):
    """A resource at one fixed ``uri``, read by calling ``function`` (which takes no
    arguments, or only a :class:`~toolwire.Context`). ``ValueError`` for an empty URI."""

    def __init__(self, uri: str, function: Callable[..., Any], *, size: int | None = None, **options: Any) -> None:
        if not isinstance(uri, str) or not uri or "{" in uri:
            raise ValueError(f"invalid resource URI {uri!r}: a fixed URI is needed (templates take {{variables}})")
        super().__init__(function, **options)
        if self._call.input_schema.get("required"):
            raise ValueError(f"resource {uri!r}: its function must take no arguments (use a URI template for those)")
        self.uri = uri
        self.name = self.name or uri
        self.size = size

    @property
    def definition(self) -> dict[str, Any]:
        definition: dict[str, Any] = {"uri": self.uri, "name": self.name}
        if self.size is not None:
            definition["size"] = self.size
        return self._describe(definition)

    async def read(self, context: ToolContext | None = None) -> list[dict[str, Any]]:
        """The contents; :class:`ResourceNotFound` if the function says there are none."""
        return await self._read(self.uri, {}, context)


class ResourceTemplate(_Described):
    """Resources whose URIs match ``uri_template`` (RFC 6570); ``function`` takes the
    template's variables as parameters (converted to their annotated types).

    ``complete`` maps variable names to completers for ``completion/complete``.
    ``ValueError`` for an invalid template, or parameters that do not fit its variables.
    """

    def __init__(
        self,
        uri_template: str,
        function: Callable[..., Any],
        *,
        complete: dict[str, Completer] | None = None,
        **options: Any,
    ) -> None:
        self.template = UriTemplate(uri_template)
        super().__init__(function, **options)
        self.uri_template = uri_template
        self.name = self.name or uri_template
        schema = self._call.input_schema
        parameters = set(schema.get("properties", {}))
        variables = set(self.template.variables)
        if not variables:
            raise ValueError(f"{uri_template!r} has no {{variables}}: register it as a fixed resource")
        missing = set(schema.get("required", [])) - variables
        unknown = variables - parameters
        if missing or unknown:
            problems = []
            if unknown:
                problems.append(f"no parameter for {', '.join(sorted(unknown))}")
            if missing:
                problems.append(f"parameters {', '.join(sorted(missing))} are not in the template and have no default")
            raise ValueError(f"resource template {uri_template!r}: {'; '.join(problems)}")
        self.completers = dict(complete or {})
        for key in self.completers:
            if key not in variables:
                raise ValueError(f"resource template {uri_template!r}: cannot complete {key!r}, not a variable of it")

    @property
    def definition(self) -> dict[str, Any]:
        return self._describe({"uriTemplate": self.uri_template, "name": self.name})

    def match(self, uri: str) -> dict[str, Any] | None:
        """The template's variables in ``uri``, or ``None`` if it does not match."""
        return self.template.match(uri)

    async def read(
        self, uri: str, variables: dict[str, Any], context: ToolContext | None = None
    ) -> list[dict[str, Any]]:
        """The contents of ``uri``, whose ``variables`` :meth:`match` found.

        :class:`ResourceNotFound` if they do not convert to the parameters' types (saying
        why) or the function finds nothing there.
        """
        from ..tools.validation import ArgumentsInvalid

        try:
            arguments = self._call.validate_arguments(variables, "{}")
        except ArgumentsInvalid as exc:
            reason = str(exc).removeprefix(self._call.name).removeprefix(": ")
            raise ResourceNotFound(uri, f"it does not fit {self.uri_template}: {reason}") from None
        return await self._read(uri, arguments, context)


def to_contents(value: Any, uri: str, mime_type: str | None) -> list[dict[str, Any]]:
    """What a resource function returned, as ``contents`` entries (see the module's table)."""
    if value is None:
        raise ResourceNotFound(uri)
    if isinstance(value, ResourceContents):
        value = [value]
    if isinstance(value, list) and value and all(isinstance(item, ResourceContents) for item in value):
        entries = []
        for item in value:
            entry = {"uri": uri, **item} if "uri" not in item else dict(item)
            if "mimeType" not in entry and mime_type is not None:
                entry["mimeType"] = mime_type
            entries.append(entry)
        return entries
    if isinstance(value, str):
        return [{"uri": uri, "mimeType": mime_type or "text/plain", "text": value}]
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        if mime_type is None:
            from ..tools.content import detect_mime

            mime_type = detect_mime(data, uri) or "application/octet-stream"
        return [{"uri": uri, "mimeType": mime_type, "blob": base64.b64encode(data).decode()}]
    return [{"uri": uri, "mimeType": mime_type or "application/json", "text": dumps(value).decode()}]
