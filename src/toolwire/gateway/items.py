"""The upstreams a caller may see: their resources, resource templates and prompts.

The policy (:mod:`.policy`) names tools. An upstream is visible to a caller when at least one
of their ``allow`` or ``ask`` rules names it (the rule's ``UPSTREAM`` pattern matches its
namespace), unless one of their ``deny`` rules names every tool of it (``UPSTREAM/*``, the
tool pattern ``*``). An upstream that is not visible is hidden entirely: its resources,
resource templates and prompts are left out of ``resources/list``,
``resources/templates/list`` and ``prompts/list``, and ``resources/read`` and
``prompts/get`` of them are answered exactly as for an item that does not exist (the
protocol's resource-not-found error; ``-32602`` unknown prompt). Items that belong to no
upstream (the gateway's own) are left alone.

A resource belongs to the upstream whose namespace is the first part of its URI after the
scheme (``data://github/today``), a prompt to the one its name starts with
(``github.brief``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from typing import Any

from ..guards.seam import Call, Next, Result, lists_too
from ..protocol.errors import INVALID_PARAMS, ProtocolError
from .policy import Grant, Policy

LISTED = {"resources/list": "resources", "resources/templates/list": "resourceTemplates", "prompts/list": "prompts"}


def shows_upstream(grant: Grant, upstream: str) -> bool:
    """Whether ``grant`` makes the upstream of namespace ``upstream`` visible (see the module)."""
    if any(rule.tool == "*" and rule.names_server(upstream) for rule in grant.deny):
        return False
    return any(rule.names_server(upstream) for rule in (*grant.allow, *grant.ask))


def resource_upstream(uri: str) -> str:
    """The namespace part of a mounted resource's URI (or template)."""
    _, separator, rest = uri.partition("://")
    return (rest if separator else uri).partition("/")[0]


@lists_too
class UpstreamItems:
    """The guard hiding the resources, templates and prompts of the upstreams a caller may
    not see (see the module). ``namespaces``: those of the upstreams served now."""

    def __init__(self, policy: Policy, namespaces: Callable[[], Collection[str]]) -> None:
        self.policy = policy
        self.namespaces = namespaces

    def __call__(self, call: Call, next: Next) -> Awaitable[Result]:
        if call.method == "tools/call":  # the tools are the policy check's: no coroutine of its own here
            return next(call)
        return self._judged(call, next)

    def _hidden(self, call: Call, upstream: str, namespaces: Collection[str]) -> bool:
        return upstream in namespaces and not shows_upstream(self.policy.grant(call.identity), upstream)

    async def _judged(self, call: Call, next: Next) -> Result:
        method = call.method
        namespaces = self.namespaces()
        if method == "resources/read":
            if self._hidden(call, resource_upstream(call.name or ""), namespaces):
                raise call.request.codec.resource_not_found(call.name or "")
            return await next(call)
        if method == "prompts/get":
            name = call.name or ""
            if self._hidden(call, self._prompt_upstream(name), namespaces):
                raise ProtocolError(INVALID_PARAMS, f"Invalid params: unknown prompt {name!r}", {"name": name})
            return await next(call)
        key = LISTED.get(method)
        if key is None:
            return await next(call)
        page = await next(call)
        items = page.get(key)
        if not isinstance(items, list):
            return page
        kept = [
            item
            for item in items
            if not (isinstance(item, dict) and self._hidden(call, self._item_upstream(key, item), namespaces))
        ]
        return page if len(kept) == len(items) else {**page, key: kept}

    def _prompt_upstream(self, name: str) -> str:
        return name.partition(self.policy.separator)[0]

    def _item_upstream(self, key: str, item: dict[str, Any]) -> str:
        if key == "prompts":
            return self._prompt_upstream(str(item.get("name", "")))
        return resource_upstream(str(item.get("uri", item.get("uriTemplate", ""))))
