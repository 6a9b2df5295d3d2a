"""An OpenAPI document becomes :class:`~.operation.Operation` entries: one per operation, with
its name, schemas, annotations and what it is served as (docs/openapi-mapping.md has the
rules as a table).

:func:`map_document` never fails on what is wrong inside one operation: that operation is
left out with a :class:`~.operation.Skipped` entry saying why (a missing reference, a body
toolwire cannot send, a parameter without ``in``...). It raises
:class:`~.document.OpenAPIError` only for a document that cannot be read at all, and for a
route map or override that does not fit the document.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..tools.tool import check_name
from .document import OpenAPIError, checked, minor_version
from .names import Names, base_name
from .operation import Body, Location, Operation, Parameter, Skipped
from .routes import Override, RouteMap
from .schemas import Schemas, Unusable, cut, kind

#: The methods of a path item, in the order OpenAPI lists them.
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
#: HTTP's safe methods (RFC 9110): read-only and idempotent.
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})
MAX_DESCRIPTION = 4_000
MAX_TITLE = 200
#: Where parameters go, in the order that decides who keeps a name two of them share.
LOCATIONS: tuple[Location, ...] = ("path", "query", "header", "cookie", "body")
#: Headers OpenAPI says a parameter cannot describe (they are set from elsewhere).
IGNORED_HEADERS = frozenset({"accept", "content-type", "authorization"})
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
SIMPLE_FIELDS_ONLY = "toolwire sends simple form fields only (strings, numbers, booleans and lists of them)"
_SIMPLE_TYPES = frozenset({"string", "number", "integer", "boolean"})
_PATH_NAME = re.compile(r"\{([^{}]*)\}")
_URI_NAME = re.compile(r"[A-Za-z0-9_]+")


@dataclass
class MappedDocument:
    """What :func:`map_document` gives: the document's ``info`` and server URLs (variables set
    to their defaults), the operations mapped (document order) and the ones skipped."""

    title: str
    version: str
    description: str | None
    servers: list[str]
    operations: list[Operation] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


#: Parameters mapped, by the identity of their object in the document, and the ``$defs`` they use.
_Seen = dict[int, tuple[Parameter | None, frozenset[str]]]


@dataclass
class _Found:
    """An operation as the document has it, before mapping."""

    method: str
    path: str
    item: dict[str, Any]
    raw: dict[str, Any]
    name: str
    tags: tuple[str, ...]


def map_document(
    document: Mapping[str, Any],
    *,
    route_maps: Sequence[RouteMap] = (),
    overrides: Mapping[str, Override] | None = None,
) -> MappedDocument:
    """The operations of ``document`` (see the module), served as ``route_maps`` say (the
    first that matches decides; by default every operation is a tool), changed by
    ``overrides`` (keyed by ``operationId`` or by the name the mapping gives).
    :class:`OpenAPIError` for a document that is not OpenAPI 3.0/3.1 in outline, or an
    override that names no operation, or gives a name that is invalid or taken."""
    document = checked(dict(document))
    schemas = Schemas(document, openapi30=minor_version(document["openapi"]) == 0)
    info: dict[str, Any] = document["info"] if isinstance(document.get("info"), dict) else {}
    mapped = MappedDocument(
        title=cut(_text(info.get("title")) or "", MAX_TITLE),
        version=cut(_text(info.get("version")) or "", MAX_TITLE),
        description=_cut(_text(info.get("description")), MAX_DESCRIPTION),
        servers=_servers(document.get("servers")),
    )
    found = list(_operations(document.get("paths", {}), mapped.skipped))
    renamed = _renamed(found, overrides or {})
    host = _host(mapped.title)
    seen: _Seen = {}
    for entry in found:
        override: Override | None = renamed.get(id(entry))
        tags = override.tags if override is not None and override.tags is not None else entry.tags
        try:
            operation = _routed(route_maps, entry, tags, functools.partial(_operation, schemas, seen, entry), host)
        except Unusable as exc:
            mapped.skipped.append(Skipped(entry.method, entry.path, str(exc)))
            continue
        if operation is not None:
            mapped.operations.append(_overridden(operation, override, tags))
    return mapped


def _operations(paths: dict[str, Any], skipped: list[Skipped]) -> Iterator[_Found]:
    """The operations of ``paths`` in document order, with their names (unique), and a skip
    for each path item or operation that is not an object."""
    names = Names()
    for path, item in paths.items():
        if not isinstance(item, dict):
            skipped.append(Skipped("*", path, f"the path item is {kind(item)}, not an object"))
            continue
        if not path.startswith("/"):
            skipped.append(Skipped("*", path, "the path does not begin with '/'"))
            continue
        for method in (key for key in item if key in METHODS):
            raw = item[method]
            if not isinstance(raw, dict):
                skipped.append(Skipped(method.upper(), path, f"the operation is {kind(raw)}, not an object"))
                continue
            listed: list[Any] = raw["tags"] if isinstance(raw.get("tags"), list) else []
            tags = tuple(tag for tag in listed if isinstance(tag, str))
            name = names.unique(base_name(raw.get("operationId"), method, path))
            yield _Found(method.upper(), path, item, raw, name, tags)


def _renamed(found: list[_Found], overrides: Mapping[str, Override]) -> dict[int, Override]:
    """The override of each operation (by ``id`` of its entry); :class:`OpenAPIError` for a
    key that names no operation, or one that names several, and for a new name that is
    invalid or another operation's."""
    by_name = {entry.name: entry for entry in found}
    by_id: dict[str, list[_Found]] = {}
    for entry in found:
        if isinstance(entry.raw.get("operationId"), str):
            by_id.setdefault(entry.raw["operationId"], []).append(entry)
    chosen: dict[int, Override] = {}
    for key, override in overrides.items():
        entries = [by_name[key]] if key in by_name else by_id.get(key, [])
        if len(entries) != 1:
            why = (
                f"{len(entries)} operations have it as their operationId: use their names instead"
                f" ({', '.join(entry.name for entry in entries)})"
                if entries
                else "no operation has it as its operationId or name"
            )
            raise OpenAPIError(f"the override {key!r} fits no operation: {why}")
        chosen[id(entries[0])] = override
    names = {entry.name for entry in found}
    for entry in found:
        new_name = chosen[id(entry)].name if id(entry) in chosen else None
        if new_name is None or new_name == entry.name:
            continue
        try:
            check_name(new_name)
        except ValueError as exc:
            raise OpenAPIError(f"the override for {entry.name!r}: {exc}") from None
        if new_name in names:
            raise OpenAPIError(f"the override for {entry.name!r} names it {new_name!r}: another operation's name")
        names.add(new_name)
    return chosen


def _routed(
    route_maps: Sequence[RouteMap], entry: _Found, tags: tuple[str, ...], build: Callable[[], Operation], host: str
) -> Operation | None:
    """The operation as the first route map that matches it says (``None``: excluded)."""
    operation: Operation | None = None
    for route in route_maps:
        if not route.matches(entry.method, entry.path, tags):
            continue
        if route.kind == "exclude":
            return None
        operation = operation or build()
        if route.kind == "tool":
            return operation
        uri = _uri(operation, host, template=route.kind == "template")
        if uri is not None:
            return replace(operation, kind=route.kind, uri=uri)
    return operation or build()


def _uri(operation: Operation, host: str, *, template: bool) -> str | None:
    """The URI (template) the operation is served at as a resource (template), ``None`` if it
    cannot be one: not a ``GET``, or an argument required that the URI does not carry."""
    if operation.method != "GET" or (operation.body is not None and operation.body.required):
        return None
    in_path = [p for p in operation.parameters if p.location == "path"]
    if any(p.required and p.location != "path" for p in operation.parameters) or bool(in_path) != template:
        return None
    if not all(_URI_NAME.fullmatch(p.name) and p.argument == p.name for p in in_path):
        return None
    return f"openapi://{host}{operation.path}"


def _overridden(operation: Operation, override: Override | None, tags: tuple[str, ...]) -> Operation:
    if override is None:
        return operation
    return replace(
        operation,
        name=override.name or operation.name,
        title=override.title if override.title is not None else operation.title,
        description=override.description if override.description is not None else operation.description,
        annotations={**operation.annotations, **(override.annotations or {})},
        tags=tags,
    )


def _operation(schemas: Schemas, seen: _Seen, entry: _Found) -> Operation:
    """``entry`` mapped; :class:`Unusable` saying why it cannot be."""
    raw = entry.raw
    uses: set[str] = set()
    arguments: dict[str, Any] = {}
    required: list[str] = []
    parameters: list[Parameter] = []
    body, candidates = _body(schemas, raw, uses)
    declared = [*_parameters(schemas, seen, entry, uses), *candidates]
    for parameter in sorted(declared, key=lambda p: LOCATIONS.index(p.location)):
        argument = _free(parameter.name, parameter.location, arguments)
        parameters.append(parameter if argument == parameter.name else replace(parameter, argument=argument))
        arguments[argument] = parameter.schema
        if parameter.required:
            required.append(argument)
    if body is not None and body.argument is not None:
        single = next(p for p in parameters if p.location == "body")
        parameters.remove(single)
        body = replace(body, argument=single.argument)
    input_schema: dict[str, Any] = {"type": "object", "properties": arguments}
    if required:
        input_schema["required"] = required
    if uses:
        input_schema["$defs"] = schemas.defs(uses, "input")
    output_schema, wrapped = _output(schemas, raw.get("responses"))
    summary, description = _text(raw.get("summary")), _text(raw.get("description"))
    text = "\n\n".join(part for part in dict.fromkeys((summary, description)) if part)
    if raw.get("deprecated") is True:
        text = f"Deprecated. {text}".strip()
    return Operation(
        name=entry.name,
        method=entry.method,
        path=entry.path,
        operation_id=raw["operationId"] if isinstance(raw.get("operationId"), str) else None,
        title=_cut(summary, MAX_TITLE),
        description=_cut(text or None, MAX_DESCRIPTION),
        tags=entry.tags,
        parameters=tuple(parameters),
        body=body,
        input_schema=input_schema,
        output_schema=output_schema,
        output_wrapped=wrapped,
        annotations=method_annotations(entry.method),
    )


def method_annotations(method: str) -> dict[str, Any]:
    """The MCP tool annotations an HTTP method implies."""
    if method in SAFE_METHODS:
        return {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": True}
    return {
        "readOnlyHint": False,
        "destructiveHint": method == "DELETE",
        "idempotentHint": method in ("PUT", "DELETE"),
        "openWorldHint": True,
    }


def _parameters(schemas: Schemas, seen: _Seen, entry: _Found, uses: set[str]) -> Iterator[Parameter]:
    """The path item's parameters overridden by the operation's (same name and place), checked."""
    declared: dict[tuple[str, str], Parameter] = {}
    for level, where in ((entry.item, "the path item"), (entry.raw, "the operation")):
        listed = level.get("parameters", [])
        if not isinstance(listed, list):
            raise Unusable(f"{where}'s parameters are {kind(listed)}, not a list")
        for index, value in enumerate(listed):
            described = f"{where}'s parameter {index}"
            raw = schemas.resolve(value, described)
            if id(raw) not in seen:  # parameters shared through $ref are mapped once
                used: set[str] = set()
                seen[id(raw)] = _parameter(schemas, raw, described, used), frozenset(used)
            parameter, used_here = seen[id(raw)]
            uses |= used_here
            if parameter is not None:
                declared[(parameter.name, parameter.location)] = parameter
    in_template = _PATH_NAME.findall(entry.path)
    for name in in_template:
        if (name, "path") not in declared:
            raise Unusable(f"the path has {{{name}}} but no parameter describes it (add one with 'in: path')")
    for (name, location), parameter in declared.items():
        if location != "path" or name in in_template:
            yield parameter


def _parameter(schemas: Schemas, raw: Any, where: str, uses: set[str]) -> Parameter | None:
    """One parameter, or ``None`` for a header OpenAPI says to ignore."""
    if not isinstance(raw, dict):
        raise Unusable(f"{where} is {kind(raw)}, not an object")
    name, location = raw.get("name"), raw.get("in")
    if not isinstance(name, str) or not name:
        raise Unusable(f"{where} has no name")
    if location not in ("path", "query", "header", "cookie"):
        raise Unusable(f"the parameter {name!r} has 'in' {str(location)[:40]!r}, not path, query, header or cookie")
    if location == "header" and name.lower() in IGNORED_HEADERS:
        return None
    if "schema" not in raw and "content" in raw:
        raise Unusable(f"the parameter {name!r} is described by 'content', which toolwire does not send yet")
    schema = schemas.convert(raw.get("schema", {}), "input", f"the parameter {name!r}'s schema", uses)
    if isinstance(schema, bool):
        schema = {} if schema else {"not": {}}
    if isinstance(raw.get("description"), str) and "description" not in schema:
        schema = {**schema, "description": cut(raw["description"], MAX_DESCRIPTION)}
    if "example" in raw and "examples" not in schema:
        schema = {**schema, "examples": [raw["example"]]}
    if raw.get("deprecated") is True:
        schema = {**schema, "deprecated": True}
    style: str = (
        raw["style"] if isinstance(raw.get("style"), str) else "simple" if location in ("path", "header") else "form"
    )
    explode = raw["explode"] if isinstance(raw.get("explode"), bool) else style == "form"
    return Parameter(
        argument=name,
        name=name,
        location=location,
        required=location == "path" or raw.get("required") is True,
        style=style,
        explode=explode,
        allow_reserved=raw.get("allowReserved") is True,
        schema=schema,
    )


def _body(schemas: Schemas, raw: dict[str, Any], uses: set[str]) -> tuple[Body | None, list[Parameter]]:
    """The request body and its arguments: an object's properties, or the whole body as one
    argument. A body toolwire cannot send is left out when it is optional; when it is
    required, :class:`Unusable` says why."""
    if "requestBody" not in raw:
        return None, []
    request = schemas.resolve(raw["requestBody"], "the request body")
    content = request.get("content") if isinstance(request, dict) else None
    if not isinstance(content, dict):
        raise Unusable(f"the request body is {kind(request)} without a 'content' object")
    required = request.get("required") is True
    media_type = next((t for t in content if is_json(t)), None) or next((t for t in FORM_TYPES if t in content), None)
    if media_type is None:
        types = ", ".join(str(t)[:60] for t in content) or "of no media type"
        return _unsendable(required, f"the request body is {types}; toolwire sends JSON, form and multipart bodies")
    media = content[media_type] if isinstance(content[media_type], dict) else {}
    where = f"the request body's {media_type} schema"
    raw_schema = media.get("schema", {})
    resolved = schemas.resolve(raw_schema, where)
    properties = resolved.get("properties") if isinstance(resolved, dict) else None
    spread = isinstance(properties, dict) and bool(properties) and resolved.get("type", "object") == "object"
    spread = spread and not any(key in resolved for key in ("allOf", "anyOf", "oneOf", "not", "if"))
    if media_type in FORM_TYPES and not spread:
        return _unsendable(required, f"the {media_type} request body is not an object of fields: {SIMPLE_FIELDS_ONLY}")
    if not spread:
        schema = schemas.convert(raw_schema, "input", where, uses)
        schema = schema if isinstance(schema, dict) else {} if schema else {"not": {}}
        if isinstance(request.get("description"), str) and "description" not in schema:
            schema = {**schema, "description": cut(request["description"], MAX_DESCRIPTION)}
        body = Body(media_type, required, argument="body")
        return body, [Parameter("body", "body", "body", required=required, schema=schema)]
    assert isinstance(properties, dict)
    fields_used: set[str] = set()
    converted = schemas.convert_top(raw_schema, "input", where, fields_used)
    fields = converted.get("properties", {})
    if media_type in FORM_TYPES:
        for field_name in fields:
            problem = _field_problem(schemas, properties[field_name], f"{where}.properties.{field_name}")
            if problem is not None:
                return _unsendable(
                    required, f"the {media_type} field {field_name!r} is {problem}: {SIMPLE_FIELDS_ONLY}"
                )
    uses |= fields_used
    needed = set(converted.get("required", [])) if required else set()
    candidates = [
        Parameter(name, name, "body", required=name in needed, schema=schema if isinstance(schema, dict) else {})
        for name, schema in fields.items()
    ]
    return Body(media_type, required), candidates


def _unsendable(required: bool, reason: str) -> tuple[None, list[Parameter]]:
    """No body (an optional one toolwire cannot send is left out); :class:`Unusable` if it is required."""
    if required:
        raise Unusable(reason)
    return None, []


def _field_problem(schemas: Schemas, raw: Any, where: str) -> str | None:
    """What keeps ``raw`` from being a simple form field (a string, number, integer or
    boolean, or a list of them), or ``None``."""
    schema = schemas.resolve(raw, where)
    if isinstance(schema, dict) and schema.get("type") == "array":
        schema = schemas.resolve(schema.get("items", {}), where)
    if not isinstance(schema, dict) or schema.get("type") not in _SIMPLE_TYPES:
        return "not a string, number or boolean"
    return "a file" if schema.get("format") == "binary" else None


def _free(name: str, location: Location, taken: Mapping[str, Any]) -> str:
    """``name``, or ``location_name`` (then ``location_name_2``...) when an argument has it."""
    if name not in taken:
        return name
    candidate, number = f"{location}_{name}", 1
    while candidate in taken:
        number += 1
        candidate = f"{location}_{name}_{number}"
    return candidate


def _output(schemas: Schemas, responses: Any) -> tuple[dict[str, Any] | None, bool]:
    """The output schema from the first 2xx response with a JSON body (an object schema, or
    the body wrapped as ``result``), and whether it is wrapped; ``(None, False)`` if none."""
    if not isinstance(responses, dict):
        return None, False
    for code, response in responses.items():
        if not str(code).startswith("2"):
            continue
        where = f"the {code} response"
        response = schemas.resolve(response, where)
        content = response.get("content") if isinstance(response, dict) else None
        media_type = next((t for t in content if is_json(t)), None) if isinstance(content, dict) else None
        if media_type is None:
            continue
        media = content[media_type] if isinstance(content[media_type], dict) else {}  # type: ignore[index]
        uses: set[str] = set()
        schema = schemas.convert_top(media.get("schema", {}), "output", f"{where}'s schema", uses)
        wrapped = not (isinstance(schema, dict) and schema.get("type") == "object")
        top = {"type": "object", "properties": {"result": schema}, "required": ["result"]} if wrapped else dict(schema)
        top.pop("$defs", None)
        if uses:
            top["$defs"] = schemas.defs(uses, "output")
        return top, wrapped
    return None, False


def is_json(media_type: Any) -> bool:
    """Whether ``media_type`` is JSON: ``application/json``, a ``+json`` type, with or without parameters."""
    if not isinstance(media_type, str):
        return False
    kind_ = media_type.split(";")[0].strip().lower()
    return kind_ == "application/json" or kind_.endswith("+json")


def _servers(servers: Any) -> list[str]:
    """The server URLs, their variables set to their defaults."""
    urls = []
    for server in servers if isinstance(servers, list) else []:
        if not isinstance(server, dict) or not isinstance(server.get("url"), str):
            continue
        url = server["url"]
        variables = server.get("variables")
        for name, variable in variables.items() if isinstance(variables, dict) else ():
            if isinstance(variable, dict) and isinstance(variable.get("default"), str):
                url = url.replace(f"{{{name}}}", variable["default"])
        urls.append(url)
    return urls


def _host(title: str) -> str:
    """The host part of resource URIs: the API's title in lower case, ``-`` between words."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:63] or "api"


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _cut(text: str | None, most: int) -> str | None:
    return None if text is None else cut(text, most)
