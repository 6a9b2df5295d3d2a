"""Resources seen from the client: listing them and their templates, reading them, and
subscribing to their changes (``resources/subscribe`` on legacy servers, the filter of the
``subscriptions/listen`` stream on 2026-07-28 ones)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..protocol.errors import METHOD_NOT_FOUND
from .errors import ClientError, ServerError
from .types import ResourceContents, ResourceInfo, ResourceTemplateInfo


class ResourceCalls:
    """The :class:`~toolwire.client.Client`'s resource methods (a mixin of it)."""

    if TYPE_CHECKING:
        capabilities: dict[str, Any]
        _resource_subscriptions: set[str]

        @property
        def modern(self) -> bool: ...

        async def request(self, method: str, params: dict[str, Any] | None = None) -> Any: ...

        async def _walk(self, method: str, key: str) -> tuple[list[dict[str, Any]], float]: ...

        async def _complete_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]: ...

        async def _relisten(self) -> dict[str, Any]: ...

    async def list_resources(self) -> list[ResourceInfo]:
        """Every resource the server lists, walking all pages."""
        return [ResourceInfo.from_dict(item) for item in (await self._walk("resources/list", "resources"))[0]]

    async def list_resource_templates(self) -> list[ResourceTemplateInfo]:
        """Every resource template the server lists, walking all pages; none from a server
        that offers resources but not this list (older servers answer it "method not found")."""
        try:
            listed, _ = await self._walk("resources/templates/list", "resourceTemplates")
        except ServerError as exc:
            if exc.code == METHOD_NOT_FOUND:
                return []
            raise
        return [ResourceTemplateInfo.from_dict(item) for item in listed]

    async def read_resource(self, uri: str) -> list[ResourceContents]:
        """The contents of ``uri`` (a resource, or a URI a template matches). A missing
        resource is a :class:`ServerError` with code ``-32002`` (legacy) or ``-32602``."""
        result = await self._complete_request("resources/read", {"uri": uri})
        return [ResourceContents.from_dict(entry) for entry in result.get("contents") or []]

    async def subscribe_resource(self, uri: str) -> None:
        """Ask to hear when ``uri`` changes (``on_resource_updated``): ``resources/subscribe``
        on legacy servers, a ``subscriptions/listen`` naming it on 2026-07-28 ones.
        :class:`ClientError` if the server does not offer subscriptions or refuses this one."""
        if not self.capabilities.get("resources", {}).get("subscribe"):
            raise ClientError("the server does not offer resource subscriptions")
        if not self.modern:
            await self.request("resources/subscribe", {"uri": uri})
            self._resource_subscriptions.add(uri)
            return
        self._resource_subscriptions.add(uri)
        honoured = await self._relisten()
        if uri not in honoured.get("resourceSubscriptions", []):
            self._resource_subscriptions.discard(uri)
            raise ClientError(f"the server did not accept a subscription to {uri!r}")

    async def unsubscribe_resource(self, uri: str) -> None:
        """Stop hearing about ``uri``."""
        if uri not in self._resource_subscriptions:
            return
        self._resource_subscriptions.discard(uri)
        if not self.modern:
            await self.request("resources/unsubscribe", {"uri": uri})
        else:
            await self._relisten()
