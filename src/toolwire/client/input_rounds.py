"""Requests the server answers with questions first (a 2026-07-28 ``InputRequiredResult``):
the questions go to the client's handlers (elicitation, sampling, roots) and the request is
sent again with the answers and the server's ``requestState``, round after round."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import ProtocolViolation

#: The most rounds of questions one request may take before the client gives up on it.
MAX_INPUT_ROUNDS = 10


class InputRounds:
    """The :class:`~toolwire.client.Client`'s answering of input requests (a mixin of it)."""

    if TYPE_CHECKING:

        async def request(self, method: str, params: dict[str, Any] | None = None) -> Any: ...

        async def _serve(self, method: str, params: dict[str, Any]) -> Any: ...

    async def _retry(self, params: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
        """The params of the next round after an ``InputRequiredResult``: the answers to its
        input requests (through the elicitation and sampling handlers) and its state."""
        retry = dict(params)
        retry["inputResponses"] = {
            key: await self._serve(request.get("method", ""), request.get("params") or {})
            for key, request in (result.get("inputRequests") or {}).items()
        }
        if "requestState" in result:
            retry["requestState"] = result["requestState"]
        return retry

    async def _complete_request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The final result of ``method``, answering 2026-07-28 input requests round by round."""
        for _ in range(MAX_INPUT_ROUNDS):
            result: dict[str, Any] = await self.request(method, params)
            kind = result.get("resultType", "complete")
            if kind == "complete":
                return result
            if kind != "input_required":
                raise ProtocolViolation(f"unknown resultType {kind!r}")
            params = await self._retry(params, result)
        raise ProtocolViolation(f"{method} still wanted input after {MAX_INPUT_ROUNDS} rounds")
