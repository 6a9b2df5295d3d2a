"""OpenTelemetry for clients: a ``CLIENT`` span and a duration per request, following the
semantic conventions for MCP, with the trace context sent in the request's ``_meta``
(``traceparent``, ``tracestate``) so that the server's spans continue the trace
(``Client(..., telemetry=True)``; ``pip install 'toolwire[otel]'``).

Spans are named and attributed as the server's (:mod:`toolwire.guards.telemetry`), both by
:mod:`toolwire.semconv`; the histogram is ``mcp.client.operation.duration`` (seconds). A request that fails (an error
answer, a timeout, a closed connection) sets ``error.type`` and the span's error status.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..semconv import SCOPE, request_attributes, span_name

#: The params key naming each method's target.
TARGETS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri", "resources/subscribe": "uri"}


class ClientTelemetry:
    """Spans and durations of a client's requests (the tracer and meter from the global
    providers unless given)."""

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        from ..extras import needs

        with needs("otel", "Client telemetry"):
            from opentelemetry import metrics, propagate, trace

        self._trace = trace
        self._propagate = propagate
        self.tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
        meter = metrics.get_meter(SCOPE, meter_provider=meter_provider)
        self.duration = meter.create_histogram(
            "mcp.client.operation.duration", unit="s", description="How long requests took, as the client saw it"
        )

    def begin(self, method: str, params: dict[str, Any] | None, id: int) -> tuple[dict[str, Any] | None, Any]:
        """Open the span of request ``id``; its params with the trace context in ``_meta``."""
        field = TARGETS.get(method)
        target = params.get(field) if params is not None and field is not None else None
        attributes = request_attributes(method, target if isinstance(target, str) else None)
        attributes["jsonrpc.request.id"] = str(id)
        span = self.tracer.start_span(
            span_name(method, attributes.get("gen_ai.tool.name") or attributes.get("gen_ai.prompt.name") or target),
            kind=self._trace.SpanKind.CLIENT,
            attributes=attributes,
        )
        carrier: dict[str, str] = {}
        self._propagate.inject(carrier, context=self._trace.set_span_in_context(span))
        params = dict(params or {})
        meta = params.get("_meta")
        params["_meta"] = {**(meta if isinstance(meta, dict) else {}), **carrier}
        return params, (span, attributes, time.perf_counter())

    def end(self, opened: Any, future: asyncio.Future[Any]) -> None:
        """Close a request's span once its answer (or failure) is in."""
        span, attributes, started = opened
        error = None
        if future.cancelled():
            error = "cancelled"
        elif future.exception() is not None:
            exc = future.exception()
            code = getattr(exc, "code", None)
            error = str(code) if isinstance(code, int) else type(exc).__name__
        elif isinstance(future.result(), dict) and future.result().get("isError"):
            error = "tool_error"
        measured = {key: value for key, value in attributes.items() if key != "jsonrpc.request.id"}
        if error is not None:
            span.set_attribute("error.type", error)
            span.set_status(self._trace.StatusCode.ERROR)
            measured["error.type"] = error
        span.end()
        self.duration.record(time.perf_counter() - started, measured)
