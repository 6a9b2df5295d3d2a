"""What a request names, for a :class:`~toolwire.Server`: the tool, prompt or resource it
is about, looked up once (the transport's checks, scopes and the dispatch read it from
``Request.target``), and the scopes that need. :class:`Targets` is a part of ``Server``.

Nothing here raises: a request naming nothing known names ``None``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..prompts.prompt import Prompt
    from ..resources.resource import Resource, ResourceTemplate
    from ..tools.tool import Tool


class Targets:
    """The look-ups of :class:`~toolwire.Server` by what requests name (see the module)."""

    registry: Catalog[Tool]
    prompts: Catalog[Prompt]
    resource_templates: Catalog[ResourceTemplate]

    #: The server's (see :meth:`ResourcesAndPrompts.find_resource
    #: <toolwire.server.resources_prompts.ResourcesAndPrompts.find_resource>`).
    find_resource: Callable[[str], tuple[Resource | ResourceTemplate, dict[str, Any]] | None]

    def target_of(self, method: Any, params: Any) -> Any:
        """What a request names, enabled: the tool of a ``tools/call``, the prompt of a
        ``prompts/get``, the resource (or template) of a ``resources/read`` or
        ``resources/subscribe``, the prompt or template a ``completion/complete`` completes;
        ``None`` when it names nothing known. Looked up once per request: the transport's
        checks (scopes, headers) and the dispatch read ``Request.target``."""
        if not isinstance(params, dict):
            return None
        if method == "tools/call":
            name = params.get("name")
            if not isinstance(name, str):
                return None
            tool = self.registry.by_key.get(name)
            return tool if tool is not None and tool.enabled else None
        if method == "completion/complete" and isinstance(params.get("ref"), dict):
            ref = params["ref"]
            method, params = ("prompts/get", ref) if ref.get("type") == "ref/prompt" else ("resources/read", ref)
        if method == "prompts/get" and isinstance(params.get("name"), str):
            return self.prompts.get(params["name"])
        if method in ("resources/read", "resources/subscribe") and isinstance(params.get("uri"), str):
            found = self.find_resource(params["uri"])
            if found is None:
                return self.resource_templates.get(params["uri"])  # completion names a template
            return found[0]
        return None

    def scopes_for(self, method: str, params: Any, target: Any = None) -> tuple[frozenset[str], str]:
        """The scopes a request needs (those of the tool, resource or prompt it names:
        ``target``, when already looked up with :meth:`target_of`) and what it names, for
        messages: ``(frozenset(), "")`` when it names nothing gated."""
        item = self.target_of(method, params) if target is None else target
        if item is None or not item.scopes:
            return frozenset(), ""
        if method == "completion/complete":
            ref = params["ref"]
            method, params = ("prompts/get", ref) if ref.get("type") == "ref/prompt" else ("resources/read", ref)
        if method == "tools/call":
            return item.scopes, f"the tool {params['name']!r}"
        if method == "prompts/get":
            return item.scopes, f"the prompt {params['name']!r}"
        return item.scopes, f"the resource {params['uri']!r}"
