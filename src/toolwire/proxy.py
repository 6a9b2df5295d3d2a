"""A proxy: any MCP server served as a toolwire :class:`~toolwire.Server`.

    from toolwire.proxy import proxy

    server = proxy("https://tools.example/mcp")          # or ["npx", "-y", "some-server"], "file.py"
    server.run(transport="http", port=8000)              # a stdio server offered over HTTP

    toolwire proxy --http 8000 -- npx -y some-server     # the same from a terminal

The proxy connects a :class:`~toolwire.client.Client` to the target when it starts (its
lifespan) and offers the target's tools, resources, resource templates and prompts as its
own, under the same names, following the target's list changes. It bridges transports (a
stdio server offered over Streamable HTTP, and back) and protocol eras: a server that speaks
only 2025-11-25 reaches 2026-07-28 clients, and the other way round. A call goes to the
target as a call; the target's progress becomes the caller's progress; its JSON-RPC errors
are the caller's errors; a target that stops during a call, or does not answer it within the
client's ``timeout``, fails that call with a tool error naming the target. A tool that the
target runs as a task can be a task here too.

The target's extensions come through: each one it offers is offered here with its
settings (``capabilities.extensions``), except tasks (the proxy offers its own for the
task tools it serves). Its tools keep their ``_meta`` (MCP Apps' ``_meta.ui``) and its
``ui://`` and ``skill://`` resources are served as any resource is. The requests of the
extensions whose methods are known are forwarded to the target: the skills extension's
(``skills/list``, ``skills/get``, ``resources/directory/read``), and those named in
``extension_methods``; another extension's requests get ``-32601``. The proxy declares
MCP Apps and skills to the target (``extensions=``: what it declares instead), so that a
target showing views only to a client that renders them shows them here.

The target's questions (elicitation, sampling) during a call are passed on to the caller
when the caller speaks a legacy version, which lets the server ask; a 2026-07-28 caller
cannot be asked mid-call by a proxy (its questions are rounds of the request), so they are
declined, and the log says so. Resource subscriptions and completion are not passed on.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .apps.extension import UI_EXTENSION, prefixed_view
from .apps.view import MCP_APP_MIME
from .client import Client, ConnectionClosed, RequestTimeout, ServerError
from .logs import get_logger
from .prompts.prompt import Message, PromptResult
from .protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, ProtocolError
from .protocol.versions import SKILLS_EXTENSION, TASKS_EXTENSION
from .resources.resource import ResourceContents
from .resources.uri_template import UriTemplate
from .server.context import Context
from .server.extensions import Extension, MethodCall, method
from .server.prefix import prefixed_uri
from .server.server import Server
from .skills.uri import SCHEME as SKILL_SCHEME
from .tools.results import ToolError
from .tools.tool import Tool

if TYPE_CHECKING:
    from .client.types import PromptInfo, ResourceInfo, ResourceTemplateInfo, ToolInfo

log = get_logger("toolwire.proxy")

#: The call being forwarded, for the target's questions to reach its caller.
_CALLER: contextvars.ContextVar[Context | None] = contextvars.ContextVar("toolwire_proxy_caller", default=None)


#: The requests of the extensions whose methods the proxy knows, forwarded to the target.
KNOWN_METHODS: dict[str, tuple[str, ...]] = {
    SKILLS_EXTENSION: ("skills/list", "skills/get", "resources/directory/read"),
}
#: What the proxy declares to the target unless told otherwise (``extensions=``).
DECLARED: dict[str, dict[str, Any]] = {UI_EXTENSION: {"mimeTypes": [MCP_APP_MIME]}, SKILLS_EXTENSION: {}}


def proxy(
    target: Any,
    *,
    name: str | None = None,
    extension_methods: Mapping[str, Iterable[str]] | None = None,
    call_timeout: float | None = None,
    **client_options: Any,
) -> Server:
    """A Server offering what the MCP server ``target`` offers (any target a
    :class:`~toolwire.client.Client` takes: a command, a ``.py`` file, a URL, a Server).
    ``name``: the proxy's own name (default: the target's). ``extension_methods``: the
    requests to forward of extensions the proxy does not know, by identifier
    (``{"com.example/votes": ["votes/count"]}``). ``client_options`` go to the Client
    (``headers=``, ``auth=``, ``timeout=``, ``env=``, ``extensions=``...). ``call_timeout``:
    seconds a tool call may go without an answer or progress (at most ten times that in all;
    default: the client's ``timeout``). The target is reached when the proxy starts serving:
    one that cannot be stops it with :class:`~toolwire.server.lifespan.LifespanFailed`."""
    methods = {**KNOWN_METHODS, **{key: tuple(names) for key, names in (extension_methods or {}).items()}}
    client_options.setdefault("extensions", {**DECLARED, **{key: {} for key in extension_methods or {}}})
    forwarder = _Forwarder(target, name, client_options, methods, call_timeout)
    server = Server(name or "proxy", lifespan=forwarder.run)
    forwarder.server = server
    return server


class _Forwarder:
    """The proxy's client of the target, and the items it mirrors."""

    def __init__(
        self,
        target: Any,
        name: str | None,
        options: dict[str, Any],
        methods: dict[str, tuple[str, ...]],
        call_timeout: float | None,
    ) -> None:
        self.target = target
        self.name = name
        self.options = options
        self.methods = methods
        self.call_timeout = call_timeout
        self.server: Server | None = None
        self.client: Client | None = None
        self._mirrored: dict[str, list[str]] = {"tools": [], "resources": [], "templates": [], "prompts": []}
        self._calls: list[Context] = []
        self._resyncs: set[asyncio.Task[None]] = set()

    async def run(self, server: Server) -> AsyncIterator[Client]:
        client = Client(
            self.target,
            elicitation=self._elicit,
            sampling=self._sample,
            on_tools_changed=lambda: self._later(self._tools),
            on_resources_changed=lambda: self._later(self._resources),
            on_prompts_changed=lambda: self._later(self._prompts),
            **self.options,
        )
        await client.connect()
        self.client = client
        if self.name is None:
            server.identity.info.update({key: value for key, value in client.server_info.items() if key != "title"})
            server.identity.changed()
        server.identity.instructions = server.identity.instructions or client.instructions
        try:
            self._extensions()
            await self._tools()
            await self._resources()
            await self._prompts()
            yield client
        finally:
            self.client = None
            await client.close()

    def _later(self, resync: Callable[[], Any]) -> None:
        task = asyncio.get_running_loop().create_task(resync())
        self._resyncs.add(task)
        task.add_done_callback(self._resyncs.discard)

    # -- mirroring ---------------------------------------------------------------------------

    def _extensions(self) -> None:
        """Offer the target's extensions (but tasks, and those the proxy offers already)."""
        assert self.server is not None and self.client is not None
        for identifier, settings in self.client.server_extensions.items():
            if identifier == TASKS_EXTENSION or identifier in self.server.extensions:
                continue
            try:
                forwarded = _ForwardedExtension(identifier, settings, self.methods.get(identifier, ()), self)
                self.server.add_extension(forwarded)
            except ValueError as exc:  # a malformed identifier, a method the proxy answers itself
                log.warning("not offering the target's extension %r: %s", identifier, exc)

    async def forward(self, call: MethodCall, prefix: str = "") -> dict[str, Any]:
        """The target's answer to the request of ``call`` (its errors the caller's), with the
        proxy's caching hints. ``prefix``: the skills' mount prefixes (``outer/inner``), taken
        off the ``skill://`` URI asked for and put on those answered (``-32602`` for a URI
        without them)."""
        assert self.client is not None
        params = {key: value for key, value in call.params.items() if key != "_meta"}
        if prefix:
            params = _skill_uris(params, _without_prefix(prefix))
        try:
            result = await self.client.request(call.method, params)
        except ServerError as exc:
            raise ProtocolError(exc.code, exc.message, exc.data) from None
        if not isinstance(result, dict):
            raise ProtocolError(INTERNAL_ERROR, f"Internal error: the target answered {call.method} with no object")
        kept = {key: value for key, value in _plain(result).items() if key not in ("ttlMs", "cacheScope")}
        if prefix:
            kept = _skill_uris(kept, lambda uri: prefixed_uri(prefix, uri))
        return call.cacheable(kept)

    def _forget(self, kind: str, remove: Callable[[str], Any]) -> None:
        for key in self._mirrored[kind]:
            with contextlib.suppress(KeyError):  # removed meanwhile
                remove(key)
        self._mirrored[kind] = []

    async def _tools(self) -> None:
        assert self.server is not None and self.client is not None
        listed = await self.client.list_tools(refresh=True)
        with self.server.registry.batched():  # one change for those who follow the list
            self._forget("tools", self.server.remove_tool)
            for info in listed:
                try:
                    self.server.add_tool(self._tool(info))
                except ValueError as exc:  # a name or schema toolwire cannot serve
                    log.warning("not offering the target's tool %r: %s", info.name, exc)
                    continue
                self._mirrored["tools"].append(info.name)

    def _tool(self, info: ToolInfo) -> Tool:
        name = info.name

        async def call(arguments: dict[str, Any], context: Context) -> Any:
            return await self._call(name, arguments, context)

        return Tool.from_schema(
            name,
            info.input_schema,
            call,
            description=info.description,
            title=info.title,
            output_schema=info.output_schema,
            annotations=info.annotations or None,
            icons=info.icons or None,
            meta=info.meta,
            task="optional" if info.task_support is not None else None,
        )

    async def _call(self, name: str, arguments: dict[str, Any], context: Context) -> dict[str, Any]:
        client = self.client
        assert client is not None
        reported = [float("-inf")]

        def progress(done: float, total: float | None, message: str | None) -> None:
            if done > reported[0]:
                reported[0] = done
                context.report_progress(done, total, message)

        token = _CALLER.set(context)
        self._calls.append(context)
        try:
            result = await client.call_tool(name, arguments, progress=progress, timeout=self.call_timeout)
        except ServerError as exc:
            raise ProtocolError(exc.code, exc.message, exc.data) from None
        except RequestTimeout:
            raise ToolError(
                f"{self._label()} did not answer the call of {name!r} within {self.call_timeout or client.timeout:g} s"
            ) from None
        except ConnectionClosed as exc:
            raise ToolError(f"{self._label()} stopped during the call of {name!r}: {exc}") from None
        finally:
            self._calls.remove(context)
            _CALLER.reset(token)
        return _plain(result.raw)

    def _label(self) -> str:
        """The target as the caller's errors name it: the proxy's name, else its own."""
        assert self.server is not None
        return f"the server {self.server.identity.info.get('name') or self.server.name!r}"

    async def _resources(self) -> None:
        assert self.server is not None and self.client is not None
        if "resources" not in self.client.capabilities:
            return
        resources = await self.client.list_resources()
        templates = await self.client.list_resource_templates()
        with self.server.resources.batched(), self.server.resource_templates.batched():
            self._forget("resources", self.server.remove_resource)
            self._forget("templates", self.server.remove_resource)
            for resource in resources:
                try:
                    self.server.add_resource(resource.uri, self._reader(resource), **_described(resource))
                except ValueError as exc:
                    log.warning("not offering the target's resource %r: %s", resource.uri, exc)
                    continue
                self._mirrored["resources"].append(resource.uri)
            for template in templates:
                try:
                    reader = self._template_reader(template)
                    self.server.add_resource_template(template.uri_template, reader, **_described(template))
                except ValueError as exc:
                    log.warning("not offering the target's resource template %r: %s", template.uri_template, exc)
                    continue
                self._mirrored["templates"].append(template.uri_template)

    def _reader(self, resource: ResourceInfo) -> Callable[[], Any]:
        uri = resource.uri

        async def read() -> list[ResourceContents]:
            return await self._read(uri)

        return read

    def _template_reader(self, template: ResourceTemplateInfo) -> Any:
        expander = UriTemplate(template.uri_template)
        variables = list(expander.variables)

        async def read(**values: Any) -> list[ResourceContents]:
            return await self._read(expander.expand(values))

        return _with_parameters(read, variables, required=variables)

    async def _read(self, uri: str) -> list[ResourceContents]:
        assert self.client is not None
        try:
            contents = await self.client.read_resource(uri)
        except ServerError as exc:
            raise ProtocolError(exc.code, exc.message, exc.data) from None
        # an entry of the URI read names the one the caller read (a mount's, prefixed)
        return [ResourceContents({k: v for k, v in entry.raw.items() if (k, v) != ("uri", uri)}) for entry in contents]

    async def _prompts(self) -> None:
        assert self.server is not None and self.client is not None
        if "prompts" not in self.client.capabilities:
            return
        prompts = await self.client.list_prompts()
        with self.server.prompts.batched():
            self._forget("prompts", self.server.remove_prompt)
            for prompt in prompts:
                try:
                    self.server.add_prompt(self._prompt(prompt), name=prompt.name, **_titled(prompt))
                except (ValueError, TypeError) as exc:
                    log.warning("not offering the target's prompt %r: %s", prompt.name, exc)
                    continue
                self._mirrored["prompts"].append(prompt.name)

    def _prompt(self, prompt: PromptInfo) -> Any:
        name = prompt.name
        arguments = [str(argument.get("name")) for argument in prompt.arguments if argument.get("name")]
        required = [str(argument.get("name")) for argument in prompt.arguments if argument.get("required")]

        async def get(**values: Any) -> PromptResult:
            assert self.client is not None
            given = {key: value for key, value in values.items() if value is not None}
            try:
                result = await self.client.get_prompt(name, given)
            except ServerError as exc:
                raise ProtocolError(exc.code, exc.message, exc.data) from None
            messages = [Message(message) for message in result.raw.get("messages") or [] if isinstance(message, dict)]
            return PromptResult(messages, result.description)

        return _with_parameters(get, arguments, required=required)

    # -- the target's questions --------------------------------------------------------------

    def _caller(self, what: str) -> Context | None:
        context = _CALLER.get() or (self._calls[-1] if self._calls else None)
        if context is None:
            log.warning("the target asked for %s outside any call: declined", what)
        elif context.request.codec.modern:
            log.warning("the target asked for %s, which a 2026-07-28 caller cannot be asked mid-call: declined", what)
            return None
        return context

    async def _elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        context = self._caller("elicitation")
        if context is None:
            return {"action": "decline"}
        schema = params.get("requestedSchema") or {"type": "object", "properties": {}}
        answer = await context.elicit(str(params.get("message", "")), schema)
        return {"action": answer.action, **({"content": answer.content} if answer.content is not None else {})}

    async def _sample(self, params: dict[str, Any]) -> dict[str, Any]:
        context = self._caller("sampling")
        if context is None:
            raise ServerError(INVALID_REQUEST, "the proxy's caller cannot sample for this request")
        return await context.sample(
            params.get("messages") or [],
            max_tokens=int(params.get("maxTokens") or 1000),
            system_prompt=params.get("systemPrompt"),
            temperature=params.get("temperature"),
            stop_sequences=params.get("stopSequences"),
            model_preferences=params.get("modelPreferences"),
            metadata=params.get("metadata"),
        )


class _ForwardedExtension(Extension):
    """A target's extension as the proxy offers it: its settings, and ``methods`` forwarded
    to the target (any client may send them: the target decides). A server mounting the
    proxy offers it too: MCP Apps' views and skills' ``skill://`` URIs prefixed as the mount
    serves them (``prefix``: the mounts' prefixes it is offered through, outermost first)."""

    def __init__(
        self,
        identifier: str,
        settings: dict[str, Any],
        methods: Iterable[str],
        forwarder: _Forwarder,
        prefix: str = "",
    ) -> None:
        self.id = identifier
        self._settings = settings
        self._methods = tuple(methods)
        self._forwarder = forwarder
        self._prefix = prefix
        uris = prefix if identifier == SKILLS_EXTENSION else ""
        for name in self._methods:

            async def forward(call: MethodCall) -> dict[str, Any]:
                return await forwarder.forward(call, uris)

            setattr(self, f"forward {name}", method(name, declared=False)(forward))

    def settings(self) -> dict[str, Any]:
        return self._settings

    def mounted(self, prefix: str) -> Extension:
        outer = f"{prefix}/{self._prefix}" if self._prefix else prefix
        return _ForwardedExtension(self.id, self._settings, self._methods, self._forwarder, outer)

    def prefixed_definition(self, definition: dict[str, Any], prefix: str) -> dict[str, Any]:
        return prefixed_view(definition, prefix) if self.id == UI_EXTENSION else definition


def _without_prefix(prefix: str) -> Callable[[str], str]:
    """``skill://PREFIX/rest`` as ``skill://rest``; ``-32602`` for a URI not under ``PREFIX``."""
    start = f"{SKILL_SCHEME}{prefix}/"

    def take_off(uri: str) -> str:
        if not uri.startswith(start):
            raise ProtocolError(INVALID_PARAMS, f"Invalid params: no skill at {uri}", {"uri": uri})
        return SKILL_SCHEME + uri[len(start) :]

    return take_off


def _skill_uris(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` (JSON) with every ``uri`` that is a ``skill://`` URI changed by ``change``."""
    if isinstance(value, list):
        return [_skill_uris(item, change) for item in value]
    if not isinstance(value, dict):
        return value
    return {
        key: change(item)
        if key == "uri" and isinstance(item, str) and item.startswith(SKILL_SCHEME)
        else _skill_uris(item, change)
        for key, item in value.items()
    }


def _plain(result: dict[str, Any]) -> dict[str, Any]:
    """The target's ``result`` as the proxy's: without its ``resultType`` and its server's
    ``_meta`` (``.../serverInfo``; a ``_meta`` left empty goes too)."""
    raw = dict(result)
    raw.pop("resultType", None)
    meta = raw.pop("_meta", None)
    if isinstance(meta, dict):
        kept = {key: value for key, value in meta.items() if not key.endswith("/serverInfo")}
        if kept:
            raw["_meta"] = kept
    return raw


class _WithParameters:
    """A coroutine function with the keyword parameters of a resource template's variables
    or a prompt's arguments (read by toolwire as a function's signature)."""

    def __init__(self, function: Callable[..., Any], names: list[str], required: list[str]) -> None:
        self._function = function
        self.__name__ = "forward"
        self.__signature__ = inspect.Signature(
            [
                inspect.Parameter(
                    name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=inspect.Parameter.empty if name in required else None,
                    annotation=str if name in required else str | None,
                )
                for name in names
            ]
        )

    async def __call__(self, **values: Any) -> Any:
        return await self._function(**values)


def _with_parameters(function: Callable[..., Any], names: list[str], required: list[str]) -> _WithParameters:
    return _WithParameters(function, names, required)


def _described(item: ResourceInfo | ResourceTemplateInfo) -> dict[str, Any]:
    options: dict[str, Any] = {
        "name": item.name,
        "title": item.title,
        "description": item.description,
        "mime_type": item.mime_type,
    }
    raw = item.raw
    for key, option in (("annotations", "annotations"), ("icons", "icons"), ("_meta", "meta")):
        if raw.get(key):
            options[option] = raw[key]
    if "size" in raw and isinstance(raw["size"], int) and "uriTemplate" not in raw:
        options["size"] = raw["size"]
    return options


def _titled(prompt: PromptInfo) -> dict[str, Any]:
    options: dict[str, Any] = {"title": prompt.title, "description": prompt.description}
    raw = prompt.raw
    if raw.get("icons"):
        options["icons"] = raw["icons"]
    if raw.get("_meta"):
        options["meta"] = raw["_meta"]
    return options
