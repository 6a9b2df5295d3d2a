"""Prompts seen from the client: listing and getting them, and completing the arguments of a
prompt or a resource template."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .types import GetPromptResult, PromptInfo

if TYPE_CHECKING:
    from ..completion import Completion


class PromptCalls:
    """The :class:`~toolwire.client.Client`'s prompt and completion methods (a mixin of it)."""

    if TYPE_CHECKING:

        async def request(self, method: str, params: dict[str, Any] | None = None) -> Any: ...

        async def _walk(self, method: str, key: str) -> tuple[list[dict[str, Any]], float]: ...

        async def _complete_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]: ...

    async def list_prompts(self) -> list[PromptInfo]:
        """Every prompt the server lists, walking all pages."""
        return [PromptInfo.from_dict(item) for item in (await self._walk("prompts/list", "prompts"))[0]]

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> GetPromptResult:
        """The prompt ``name`` rendered with ``arguments`` (strings, as the protocol wants).
        Unknown prompts and bad arguments are a :class:`ServerError` (``-32602``)."""
        params = {"name": name, "arguments": {key: str(value) for key, value in (arguments or {}).items()}}
        return GetPromptResult.from_dict(await self._complete_request("prompts/get", params))

    async def complete(
        self,
        argument: str,
        value: str,
        *,
        prompt: str | None = None,
        resource_template: str | None = None,
        context: dict[str, str] | None = None,
    ) -> Completion:
        """Suggestions for ``argument`` of a ``prompt`` (by name) or a ``resource_template``
        (by its template string), given what was typed so far (``value``) and the arguments
        already resolved (``context``). ``ValueError`` unless exactly one target is named."""
        from ..completion import Completion

        if (prompt is None) == (resource_template is None):
            raise ValueError("name exactly one of prompt= and resource_template=")
        ref = (
            {"type": "ref/prompt", "name": prompt}
            if prompt is not None
            else {"type": "ref/resource", "uri": resource_template}
        )
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        found = (await self.request("completion/complete", params)).get("completion") or {}
        return Completion(found.get("values") or [], found.get("total"), found.get("hasMore"))
