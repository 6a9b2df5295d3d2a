"""A :class:`~toolwire.Server` serving an API: each mapped operation becomes a tool, a
resource or a resource template whose calls go to the upstream (:mod:`.calls`).

:func:`from_openapi` reads a document (a dict, a file or a URL), maps it (:mod:`.mapping`)
and serves it; :func:`from_asgi` does the same for an ASGI application that publishes its own
document (FastAPI's ``app.openapi()``, else ``GET /openapi.json``), calling the application
in process through ``httpx.ASGITransport``: no socket, no port. ``Server.from_openapi`` and
``Server.from_asgi`` are these two.

Tools are built with :meth:`~toolwire.Tool.from_schema`: their arguments are validated
against the input schema before anything is sent, and what they answer against the output
schema. The operation's tags become toolwire tags (``include_tags``/``exclude_tags``,
visibility rules and ``toolwire search`` pick tools by them).
"""

from __future__ import annotations

import contextlib
import inspect
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any
from urllib.parse import urljoin

import httpx

from ..resources.resource import Resource, ResourceTemplate
from ..server.server import Server
from ..tools.tool import Tool
from .calls import DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT, Upstream
from .document import OpenAPIError, load_document
from .mapping import MappedDocument, map_document
from .operation import Operation
from .routes import Override, RouteMap

#: Tools (resources, templates) per list page unless ``page_size=`` says otherwise: an API's
#: definitions are large (GitHub's 1,223 operations are 9.9 MB of them, one is 190 KB), and
#: one page of them all is more than a client takes in one message (4 MiB in toolwire's).
PAGE_SIZE = 100

#: The base URL an ASGI application is called at in process (nothing resolves it: the
#: transport hands every request to the application).
ASGI_BASE_URL = "http://asgi.local"


def from_openapi(
    document: Mapping[str, Any] | str | os.PathLike[str],
    base_url: str | None = None,
    client: httpx.AsyncClient | None = None,
    *,
    route_maps: Sequence[RouteMap] = (),
    overrides: Mapping[str, Override] | None = None,
    headers: Mapping[str, str] | None = None,
    bearer_env: str | None = None,
    auth: httpx.Auth | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    name: str | None = None,
    **options: Any,
) -> Server:
    """A server for the API ``document`` describes (a dict, a JSON or YAML file, or an
    http(s) URL read once, now). Calls go to ``base_url``, by default the document's first
    ``servers`` entry (a relative one resolved against the document's URL); through
    ``client`` when given (its own settings kept), else a client made for them.
    ``route_maps``, ``overrides``: what is served and as what (docs/openapi-mapping.md).
    ``headers``, ``bearer_env``, ``auth``: the upstream's credentials; ``timeout`` (seconds
    per call, in all), ``max_response_bytes``: the limits (see :mod:`.calls`). ``name``: the
    server's name (default: the document's title); ``options``: :class:`~toolwire.Server`'s.
    :class:`OpenAPIError` for a document that cannot be used, a route map or override that
    does not fit it, no base URL, or a ``bearer_env`` that is not set."""
    loaded = load_document(document)
    mapped = map_document(loaded, route_maps=route_maps, overrides=overrides)
    if base_url is None and (client is None or not str(client.base_url)):
        base_url = _document_base(mapped, document)
    upstream = Upstream(
        base_url,
        client,
        headers=headers,
        bearer_env=bearer_env,
        auth=auth,
        timeout=timeout,
        max_response_bytes=max_response_bytes,
    )
    return openapi_server(mapped, upstream, name=name, **options)


def from_asgi(
    app: Any,
    *,
    document: Mapping[str, Any] | None = None,
    route_maps: Sequence[RouteMap] = (),
    overrides: Mapping[str, Override] | None = None,
    headers: Mapping[str, str] | None = None,
    bearer_env: str | None = None,
    auth: httpx.Auth | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    name: str | None = None,
    **options: Any,
) -> Server:
    """A server for the ASGI application ``app``, called in process (``httpx.ASGITransport``).
    Its document: ``document`` when given, else ``app.openapi()`` (FastAPI), else what
    ``GET /openapi.json`` answers. The application's own lifespan (startup, shutdown, the
    state it yields) runs with the server's. The other keywords are :func:`from_openapi`'s.
    :class:`OpenAPIError` as there, and for an application that publishes no document."""
    state: dict[str, Any] = {}  # what the application's lifespan yields, in every request's scope
    transport = httpx.ASGITransport(app=_with_state(app, state))
    if document is None:
        document = _asgi_document(app, transport)
    base_url = ASGI_BASE_URL
    mapped = map_document(load_document(document), route_maps=route_maps, overrides=overrides)
    if mapped.servers and mapped.servers[0].startswith("/"):  # a root path the app is mounted at
        base_url += mapped.servers[0].rstrip("/")
    upstream = Upstream(
        base_url,
        transport=transport,
        headers=headers,
        bearer_env=bearer_env,
        auth=auth,
        timeout=timeout,
        max_response_bytes=max_response_bytes,
    )
    options.setdefault("lifespan", _running(app, state, upstream))
    return openapi_server(mapped, upstream, name=name, **options)


def openapi_server(mapped: MappedDocument, upstream: Upstream, *, name: str | None = None, **options: Any) -> Server:
    """A server offering the operations of ``mapped``, called through ``upstream``; named
    ``name`` or the API's title, versioned as the API; ``options``: :class:`~toolwire.Server`'s
    (``page_size`` :data:`PAGE_SIZE` unless given). Its lifespan closes the client made for
    the calls when the server stops; a ``lifespan=`` of your own takes its place (close
    ``upstream`` there, or give a ``client`` you close)."""
    options.setdefault("instructions", mapped.description)
    options.setdefault("page_size", PAGE_SIZE)
    options.setdefault("lifespan", _closing(upstream))
    server = Server(name or mapped.title or "openapi", mapped.version or "0.1.0", **options)
    for operation in mapped.operations:
        if operation.kind == "resource":
            server.add_resource_object(_resource(operation, upstream))
        elif operation.kind == "template":
            server.add_resource_template_object(_template(operation, upstream))
        else:
            server.add_tool(_tool(operation, upstream))
    return server


def _closing(upstream: Upstream) -> Callable[[], AbstractAsyncContextManager[None]]:
    """A lifespan closing ``upstream``'s own client when the server stops."""

    @contextlib.asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        try:
            yield None
        finally:
            await upstream.aclose()

    return lifespan


def _running(app: Any, state: dict[str, Any], upstream: Upstream) -> Callable[[], AbstractAsyncContextManager[None]]:
    """A lifespan running the application's own ASGI lifespan (its startup before serving,
    its shutdown after) and closing ``upstream``'s client; :class:`OpenAPIError` with the
    application's message when its startup fails."""

    @contextlib.asynccontextmanager
    async def lifespan() -> AsyncIterator[None]:
        from ..transports.http.wire.lifespan import Lifespan

        running = Lifespan(app, state)
        try:
            await running.start()
        except RuntimeError as exc:
            raise OpenAPIError(f"the application failed to start: {exc}") from None
        try:
            yield None
        finally:
            await running.stop()
            await upstream.aclose()

    return lifespan


def _with_state(app: Any, state: dict[str, Any]) -> Any:
    """``app`` with ``state`` (a copy, as ASGI servers give) in every request's scope."""

    async def stateful(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await app({**scope, "state": dict(state)}, receive, send)

    return stateful


def _tool(operation: Operation, upstream: Upstream) -> Tool:
    async def call(arguments: dict[str, Any]) -> dict[str, Any]:
        return await upstream.call(operation, arguments)

    return Tool.from_schema(
        operation.name,
        operation.input_schema,
        call,
        output_schema=operation.output_schema,
        title=operation.title,
        description=operation.description,
        annotations=operation.annotations or None,
        tags=operation.tags,
        lenient=True,  # models send "5" for 5: accepted where the schema asks for a number
    )


def _resource(operation: Operation, upstream: Upstream) -> Resource:
    uri = operation.uri
    assert uri is not None

    async def read() -> Any:
        return await upstream.read(operation, {}, uri)

    return Resource(
        uri,
        read,
        name=operation.name,
        title=operation.title,
        description=operation.description,
        tags=operation.tags,
    )


class _TemplateRead:
    """Reads a resource template's operation; its signature takes the path parameters (as
    the types their schemas give), which is what a template's function must take."""

    def __init__(self, operation: Operation, upstream: Upstream) -> None:
        self.operation = operation
        self.upstream = upstream
        self.__signature__ = inspect.Signature(
            [
                inspect.Parameter(p.argument, inspect.Parameter.KEYWORD_ONLY, annotation=_python_type(p.schema))
                for p in operation.parameters
                if p.location == "path"
            ]
        )

    async def __call__(self, **variables: Any) -> Any:
        uri = self.operation.uri or ""
        for name, value in variables.items():
            uri = uri.replace("{" + name + "}", str(value))
        return await self.upstream.read(self.operation, variables, uri)


def _template(operation: Operation, upstream: Upstream) -> ResourceTemplate:
    assert operation.uri is not None
    return ResourceTemplate(
        operation.uri,
        _TemplateRead(operation, upstream),
        name=operation.name,
        title=operation.title,
        description=operation.description,
        tags=operation.tags,
    )


def _python_type(schema: dict[str, Any]) -> type:
    """The type a URI variable is converted to: what the parameter's schema says it is."""
    return {"integer": int, "number": float, "boolean": bool}.get(str(schema.get("type")), str)


def _document_base(mapped: MappedDocument, source: Mapping[str, Any] | str | os.PathLike[str]) -> str:
    """The base URL the document gives (its first server, a relative one resolved against
    the document's own URL); :class:`OpenAPIError` asking for ``base_url`` when it gives none."""
    if mapped.servers:
        first = mapped.servers[0]
        if first.startswith(("http://", "https://")):
            return first
        if isinstance(source, str) and source.startswith(("http://", "https://")):
            return urljoin(source, first)
        raise OpenAPIError(
            f"the document's server URL {first!r} is relative and the document was not read from a URL: "
            "give base_url= (--base-url on the command line)"
        )
    raise OpenAPIError("the document names no server: give base_url= (--base-url on the command line)")


def _asgi_document(app: Any, transport: httpx.ASGITransport) -> dict[str, Any]:
    """The application's document: ``app.openapi()`` where it has one, else ``GET /openapi.json``."""
    openapi = getattr(app, "openapi", None)
    if callable(openapi):
        document = openapi()
        if isinstance(document, dict):
            return document
    import asyncio
    import concurrent.futures

    async def fetch() -> httpx.Response:
        async with httpx.AsyncClient(transport=transport, base_url=ASGI_BASE_URL) as client:
            return await client.get("/openapi.json")

    with concurrent.futures.ThreadPoolExecutor(1) as thread:  # the caller may be inside an event loop
        response = thread.submit(asyncio.run, fetch()).result()
    if response.status_code != 200:
        raise OpenAPIError(
            f"the application publishes no OpenAPI document: GET /openapi.json answered HTTP {response.status_code}; "
            "give document="
        )
    try:
        published: dict[str, Any] = response.json()
    except ValueError:
        raise OpenAPIError("the application's /openapi.json is not JSON; give document=") from None
    return published
