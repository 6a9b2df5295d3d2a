"""Resources and prompts as tools, for clients that read only tools.

``server.resources_as_tools()`` adds ``list_resources`` (the resources and resource
templates the caller may see) and ``read_resource`` (a resource by URI, a template's too);
``server.prompts_as_tools()`` adds ``list_prompts`` and ``get_prompt`` (a prompt by name,
with its arguments). They serve what the server's catalogs hold when called, so a mounted
child's resources appear prefixed as ``resources/list`` shows them, and a proxy's follow
its target.

Each tool applies the check ``resources/list``, ``resources/read``, ``prompts/list`` and
``prompts/get`` apply for the same caller (:meth:`Visibility.allows
<toolwire.server.visibility.Visibility.allows>`: enabled, the caller's scopes, the rules of
the server, the caller and the session): what they hide is unknown here too. Errors are
tool errors (``isError``) the model can act on: an unknown URI or prompt, bad prompt
arguments, a resource whose function finds nothing, a proxy's target refusing. A resource's contents come back as the
content they are: text and other binary as an embedded ``resource``, an image or audio blob
as an ``image`` or ``audio`` block; text over ``max_chars`` is cut (and says so), a blob
over ``max_blob_bytes`` is replaced by a line saying its size. Adding a tool whose name
the server has already raises ``ValueError`` naming it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from ..protocol.errors import ProtocolError
from ..tools.results import error_result
from ..tools.tool import Tool

if TYPE_CHECKING:
    from .context import Context
    from .server import Server

LIST_RESOURCES = "list_resources"
READ_RESOURCE = "read_resource"
LIST_PROMPTS = "list_prompts"
GET_PROMPT = "get_prompt"
#: Characters of text a ``read_resource`` returns at most by default.
MAX_CHARS = 100_000  # Server.resources_as_tools repeats these defaults
#: Bytes of a binary entry a ``read_resource`` returns at most by default.
MAX_BLOB_BYTES = 2_000_000

_NOTHING: dict[str, Any] = {"type": "object", "properties": {}}
_READ_SCHEMA = {
    "type": "object",
    "properties": {
        "uri": {
            "type": "string",
            "description": "The resource's URI: one list_resources gave, or a template's with its variables filled in.",
        }
    },
    "required": ["uri"],
}
_GET_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The prompt's name, as list_prompts gave it."},
        "arguments": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "Its arguments by name, as strings.",
        },
    },
    "required": ["name"],
}


def add_tools(server: Server, adder: str, tools: list[Tool]) -> None:
    """Register ``tools`` on ``server``, none of them if one's name is taken (``ValueError``
    naming it and ``adder``, the method that adds them)."""
    for tool in tools:
        if tool.name in server.registry:
            names = " and ".join(tool.name for tool in tools)
            raise ValueError(
                f"{adder}() adds the tools {names}, but the server has a tool named {tool.name!r} already: "
                "rename or remove that tool first"
            )
    for tool in tools:
        server.add_tool(tool)


class ResourcesAsTools:
    """``list_resources`` and ``read_resource`` over ``server``'s resources (see the module)."""

    def __init__(self, server: Server, max_chars: int = MAX_CHARS, max_blob_bytes: int = MAX_BLOB_BYTES) -> None:
        self._server = server
        self.max_chars = max_chars
        self.max_blob_bytes = max_blob_bytes
        listing = Tool.from_schema(
            LIST_RESOURCES,
            _NOTHING,
            self._list,
            description="List this server's resources (by URI) and resource templates (URIs with {variables}).",
            annotations={"readOnlyHint": True},
        )
        reading = Tool.from_schema(
            READ_RESOURCE,
            _READ_SCHEMA,
            self._read,
            description="Read one of this server's resources by its URI (list_resources lists them).",
            annotations={"readOnlyHint": True},
        )
        add_tools(server, "resources_as_tools", [listing, reading])

    def _list(self, arguments: dict[str, Any], context: Context) -> dict[str, Any]:
        server, session, request = self._server, context._session, context.request
        allows, codec = server.visibility.allows, request.codec
        resources = [
            codec.resource(resource.definition)
            for resource in server.resources.enabled()
            if allows(session, request, "resources", resource.uri, resource)
        ]
        templates = [
            codec.resource_template(template.definition)
            for template in server.resource_templates.enabled()
            if allows(session, request, "resourceTemplates", template.uri_template, template)
        ]
        listed = {"resources": resources, "resourceTemplates": templates}
        return {"content": [{"type": "text", "text": orjson.dumps(listed).decode()}], "structuredContent": listed}

    async def _read(self, arguments: dict[str, Any], context: Context) -> dict[str, Any]:
        from ..resources.resource import Resource, ResourceNotFound

        uri = arguments["uri"]
        request = context.request
        found = self._server.find_resource(uri)
        if found is None or not self._allowed(context, found[0]):
            return error_result(f"Unknown resource: {uri} (list_resources lists the resources there are)")
        resource, variables = found
        given = context if resource.wants_context else None
        try:
            if isinstance(resource, Resource):
                entries = await resource.read(given)
            else:
                entries = await resource.read(uri, variables, given)
        except ResourceNotFound as exc:
            return error_result(f"Resource not found: {uri}" + (f" ({exc.reason})" if exc.reason else ""))
        except ProtocolError as exc:  # a proxy's target refused the read
            return error_result(exc.message)
        blocks = [self._block(entry) for entry in request.codec.resource_contents(entries)]
        return {"content": blocks or [{"type": "text", "text": f"The resource {uri} is empty."}]}

    def _allowed(self, context: Context, item: Any) -> bool:
        """Whether the caller of ``context`` may read ``item`` (a resource or a template)."""
        from ..resources.resource import Resource

        allows = self._server.visibility.allows
        if isinstance(item, Resource):
            return allows(context._session, context.request, "resources", item.uri, item)
        return allows(context._session, context.request, "resourceTemplates", item.uri_template, item)

    def _block(self, entry: dict[str, Any]) -> dict[str, Any]:
        """One contents entry as a content block, bounded (see the module)."""
        text = entry.get("text")
        if isinstance(text, str):
            if len(text) > self.max_chars:
                cut = f"{text[: self.max_chars]}\n[cut: the first {self.max_chars} of {len(text)} characters]"
                entry = {**entry, "text": cut}
            return {"type": "resource", "resource": entry}
        blob = str(entry.get("blob", ""))
        size = len(blob) * 3 // 4
        if size > self.max_blob_bytes:
            said = f"The resource {entry.get('uri')} holds {size} bytes, over the {self.max_blob_bytes} returned here."
            return {"type": "text", "text": said}
        mime = str(entry.get("mimeType", ""))
        if mime.startswith(("image/", "audio/")):
            return {"type": mime.partition("/")[0], "data": blob, "mimeType": mime}
        return {"type": "resource", "resource": entry}


class PromptsAsTools:
    """``list_prompts`` and ``get_prompt`` over ``server``'s prompts (see the module)."""

    def __init__(self, server: Server) -> None:
        self._server = server
        listing = Tool.from_schema(
            LIST_PROMPTS,
            _NOTHING,
            self._list,
            description="List this server's prompts: ready-made instructions, with the arguments each takes.",
            annotations={"readOnlyHint": True},
        )
        getting = Tool.from_schema(
            GET_PROMPT,
            _GET_SCHEMA,
            self._get,
            description="Get one of this server's prompts by name, filled in with its arguments.",
            annotations={"readOnlyHint": True},
        )
        add_tools(server, "prompts_as_tools", [listing, getting])

    def _list(self, arguments: dict[str, Any], context: Context) -> dict[str, Any]:
        server, session, request = self._server, context._session, context.request
        allows = server.visibility.allows
        prompts = [
            request.codec.prompt(prompt.definition)
            for prompt in server.prompts.enabled()
            if allows(session, request, "prompts", prompt.name, prompt)
        ]
        listed = {"prompts": prompts}
        return {"content": [{"type": "text", "text": orjson.dumps(listed).decode()}], "structuredContent": listed}

    async def _get(self, arguments: dict[str, Any], context: Context) -> dict[str, Any]:
        from ..prompts.prompt import PromptArgumentsInvalid

        name = arguments["name"]
        session, request = context._session, context.request
        prompt = self._server.prompts.get(name)
        if prompt is None or not self._server.visibility.allows(session, request, "prompts", name, prompt):
            return error_result(f"Unknown prompt: {name} (list_prompts lists the prompts there are)")
        try:
            valid = prompt.validate_arguments(arguments.get("arguments"))
        except PromptArgumentsInvalid as exc:
            return error_result(f"The prompt {name} was not filled in: {exc}")
        try:
            result = await prompt.render(valid, context if prompt.wants_context else None)
        except ProtocolError as exc:  # a proxy's target refused it
            return error_result(exc.message)
        result["messages"] = request.codec.prompt_messages(result["messages"])
        return {"content": [{"type": "text", "text": orjson.dumps(result).decode()}], "structuredContent": result}
