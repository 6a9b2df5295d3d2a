"""What a :class:`~toolwire.Server` offers besides tools: registering resources, resource
templates and prompts, telling subscribers of changes, linking and embedding resources in
tool results. :class:`ResourcesAndPrompts` is a part of ``Server``; its methods are the
server's.

Errors: a taken URI, name or template raises ``ValueError``; removing what is not there
raises ``KeyError``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..prompts.prompt import Prompt
    from ..protocol.identity import ServerIdentity
    from ..resources.resource import Resource, ResourceTemplate
    from ..tools.content import Content

F = TypeVar("F", bound=Callable[..., Any])


class ResourcesAndPrompts:
    """The resource and prompt methods of :class:`~toolwire.Server` (see the module)."""

    identity: ServerIdentity
    resources: Catalog[Resource]
    resource_templates: Catalog[ResourceTemplate]
    prompts: Catalog[Prompt]
    _resource_listeners: dict[int, Callable[[str], None]]

    # -- resources -------------------------------------------------------------------------

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        complete: dict[str, Any] | None = None,
        scopes: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
    ) -> Callable[[F], F]:
        """Register a function as a resource: ``@server.resource("config://app")`` for one
        fixed URI, or ``@server.resource("users://{id}/profile")`` for a URI template whose
        variables are the function's parameters (see :mod:`toolwire.resources.resource` for
        what it may return). ``scopes``: the OAuth scopes a caller needs to see and read it;
        ``tags``: labels visibility rules pick it by (see :mod:`toolwire.server.visibility`).
        ``ValueError`` for a taken URI or parameters that do not fit."""

        def register(function: F) -> F:
            options = {
                "name": name,
                "title": title,
                "description": description,
                "mime_type": mime_type,
                "annotations": annotations,
                "icons": icons,
                "meta": meta,
                "scopes": scopes,
                "tags": tags,
            }
            if "{" in uri:
                if size is not None:
                    raise ValueError("size= is for fixed resources, not templates")
                self.add_resource_template(uri, function, complete=complete, **options)
            else:
                if complete:
                    raise ValueError("complete= is for template variables: this URI has none")
                self.add_resource(uri, function, size=size, **options)
            return function

        return register

    def add_resource(self, uri: str, value: Any, **options: Any) -> Resource:
        """Register a fixed resource: ``value`` is a function read on each request, or the
        contents themselves (text, bytes, JSON data). Keywords as for :meth:`resource`."""
        from ..resources.resource import Resource

        function = value if callable(value) else (lambda: value)
        return self.add_resource_object(Resource(uri, function, **options))

    def add_resource_object(self, resource: Resource) -> Resource:
        """Register a :class:`~toolwire.resources.resource.Resource` made elsewhere (a mount)."""
        self.resources.add(resource.uri, resource)
        self._declare("resources", {"subscribe": True, "listChanged": True})
        return resource

    def add_resource_template(
        self, uri_template: str, function: Callable[..., Any], **options: Any
    ) -> ResourceTemplate:
        """Register a resource template (RFC 6570); keywords as for :meth:`resource`."""
        from ..resources.resource import ResourceTemplate

        return self.add_resource_template_object(ResourceTemplate(uri_template, function, **options))

    def add_resource_template_object(self, template: ResourceTemplate) -> ResourceTemplate:
        """Register a :class:`~toolwire.resources.resource.ResourceTemplate` made elsewhere."""
        self.resource_templates.add(template.uri_template, template)
        self._declare("resources", {"subscribe": True, "listChanged": True})
        if template.completers:
            self._declare("completions", {})
        return template

    def remove_resource(self, uri: str) -> None:
        """Unregister a fixed resource or a template (by its template string); clients are
        told the list changed. ``KeyError`` if there is neither."""
        if uri in self.resources:
            self.resources.remove(uri)
        else:
            self.resource_templates.remove(uri)

    def find_resource(self, uri: str) -> tuple[Resource | ResourceTemplate, dict[str, Any]] | None:
        """The fixed resource at ``uri`` (with no variables), else the first template that
        matches it (with its variables), else ``None``."""
        resource = self.resources.get(uri)
        if resource is not None:
            return resource, {}
        for template in self.resource_templates.enabled():
            variables = template.match(uri)
            if variables is not None:
                return template, variables
        return None

    def resource_updated(self, uri: str) -> None:
        """Tell subscribed clients that the resource at ``uri`` changed (legacy clients that
        sent ``resources/subscribe``, 2026-07-28 ones listening with ``resourceSubscriptions``).
        Safe to call from any thread."""
        for listener in list(self._resource_listeners.values()):
            listener(uri)

    def on_resource_updated(self, listener: Callable[[str], None]) -> Callable[[], object]:
        """Call ``listener(uri)`` on each :meth:`resource_updated`; returns its remover."""
        key = id(listener)
        self._resource_listeners[key] = listener
        return lambda: self._resource_listeners.pop(key, None)

    def link_resource(self, uri: str) -> Content:
        """A ``resource_link`` block for the registered fixed resource ``uri``, for a tool
        result; ``KeyError`` if there is none."""
        from ..tools.content import Content

        resource = self.resources.get(uri)
        if resource is None:
            raise KeyError(f"no resource {uri!r} is registered")
        return Content(type="resource_link", **resource.definition)

    async def embed_resource(self, uri: str) -> list[Content]:
        """The contents of the registered resource ``uri`` as embedded ``resource`` blocks, for
        a tool result. ``KeyError`` if no resource or template serves it;
        :class:`~toolwire.ResourceNotFound` if its function finds nothing."""
        from ..resources.resource import Resource
        from ..tools.content import Content

        found = self.find_resource(uri)
        if found is None:
            raise KeyError(f"no resource or template serves {uri!r}")
        resource, variables = found
        contents = await (resource.read() if isinstance(resource, Resource) else resource.read(uri, variables))
        return [Content(type="resource", resource=entry) for entry in contents]

    # -- prompts ---------------------------------------------------------------------------

    @overload
    def prompt(self, fn: F, /) -> F: ...

    @overload
    def prompt(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        complete: dict[str, Any] | None = None,
        scopes: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
    ) -> Callable[[F], F]: ...

    def prompt(self, fn: Any = None, /, **options: Any) -> Any:
        """Register a function as a prompt: ``@server.prompt`` or ``@server.prompt(name=...)``
        (see :mod:`toolwire.prompts.prompt`). ``complete`` maps arguments to completers;
        ``scopes``: the OAuth scopes a caller needs to see and get it; ``tags``: labels
        visibility rules pick it by. ``ValueError`` for an invalid or taken name."""

        def register(function: F) -> F:
            self.add_prompt(function, **options)
            return function

        return register(fn) if fn is not None else register

    def add_prompt(self, prompt: Prompt | Callable[..., Any], **options: Any) -> Prompt:
        """Register a :class:`~toolwire.Prompt`, or a function with the keywords of :meth:`prompt`."""
        from ..prompts.prompt import Prompt

        if not isinstance(prompt, Prompt):
            prompt = Prompt(prompt, **options)
        self.prompts.add(prompt.name, prompt)
        self._declare("prompts", {"listChanged": True})
        if prompt.completers:
            self._declare("completions", {})
        return prompt

    def remove_prompt(self, name: str) -> None:
        """Unregister a prompt (clients are told the list changed); ``KeyError`` if unknown."""
        self.prompts.remove(name)

    def _declare(self, capability: str, value: dict[str, Any]) -> None:
        if capability not in self.identity.capabilities:
            self.identity.capabilities[capability] = value
            self.identity.changed()
