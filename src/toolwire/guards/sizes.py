"""Size caps on what a request carries in and what it gives back.

``SizeCaps(max_argument_bytes=..., max_result_bytes=...)``: arguments larger than the cap
(measured as JSON) are refused before the tool runs, and a result larger than its cap is
replaced, in both cases by an error that names the cap: an execution error the model reads
for ``tools/call``, ``-32602`` (arguments) or ``-32603`` (result) for other requests. The
transport's own limit on a whole message (``max_message_bytes``) still applies first.
"""

from __future__ import annotations

import orjson

from ..protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, ProtocolError
from .seam import Call, Next, Result, refusal


class SizeCaps:
    """The size-cap guard; ``None`` leaves a size unchecked."""

    def __init__(self, max_argument_bytes: int | None = None, max_result_bytes: int | None = None) -> None:
        self.max_argument_bytes = max_argument_bytes
        self.max_result_bytes = max_result_bytes

    async def __call__(self, call: Call, next: Next) -> Result:
        cap = self.max_argument_bytes
        if cap is not None and call.arguments:
            size = len(orjson.dumps(call.arguments))
            if size > cap:
                problem = (
                    f"the arguments of {call.subject} are {size:,} bytes; the limit is {cap:,} (max_argument_bytes)"
                )
                if call.method == "tools/call":
                    return refusal(f"The call was refused: {problem}. Send less.", "too_large")
                raise ProtocolError(INVALID_PARAMS, f"Invalid params: {problem}")
        result = await next(call)
        cap = self.max_result_bytes
        if cap is not None:
            size = len(orjson.dumps(result))
            if size > cap:
                problem = f"the result of {call.subject} was {size:,} bytes; the limit is {cap:,} (max_result_bytes)"
                if call.method == "tools/call":
                    return refusal(f"The result was withheld: {problem}. Ask for less at a time.", "too_large")
                raise ProtocolError(INTERNAL_ERROR, f"Internal error: {problem}")
        return result
