"""OpenTelemetry for servers: a span and a duration per request, following the semantic
conventions for MCP, continuing the caller's trace (``pip install 'toolwire[otel]'``).

    server = Server("files", guards=[Telemetry()])

Each request that runs your code gets a ``SERVER`` span named ``{method} {target}``
(``tools/call get_weather``, ``resources/read file:///notes.txt``) with the attributes
``mcp.method.name``, ``mcp.session.id``, ``mcp.protocol.version``, ``jsonrpc.request.id``,
``gen_ai.operation.name`` (``execute_tool``) and ``gen_ai.tool.name`` for tool calls,
``gen_ai.prompt.name``, ``mcp.resource.uri``, and on failure ``error.type`` (``tool_error``
for an ``isError`` result, the JSON-RPC code for an error, the exception's type otherwise)
with the span's status set to error. Its parent is the trace context the client put in the
request's ``_meta`` (``traceparent``, ``tracestate``), when it did. The histogram
``mcp.server.operation.duration`` (seconds) gets one measurement per request with the same
method, tool and error attributes.

The tracer and meter come from the global providers unless given; without an SDK configured
they do nothing. Nothing is imported unless this guard is used.
"""

from __future__ import annotations

import time
from typing import Any

from ..protocol.errors import ProtocolError
from ..semconv import SCOPE, request_attributes, span_name
from .seam import Call, Next, Result


class Telemetry:
    """The OpenTelemetry guard (see the module's description). It runs outside the other
    guards, so that what they refuse is traced too."""

    outermost = True

    def __init__(self, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        from ..extras import needs

        with needs("otel", "The Telemetry guard"):
            from opentelemetry import context, metrics, propagate, trace

        self._trace = trace
        self._context = context
        self._propagate = propagate
        self.tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
        meter = metrics.get_meter(SCOPE, meter_provider=meter_provider)
        self.duration = meter.create_histogram(
            "mcp.server.operation.duration", unit="s", description="How long the server took to handle a request"
        )
        self._measured: dict[tuple[str, str | None, str], dict[str, Any]] = {}

    async def __call__(self, call: Call, next: Next) -> Result:
        method, name, version = call.method, call.name, call.version
        attributes = request_attributes(method, name)
        attributes["mcp.session.id"] = call.session_id
        attributes["mcp.protocol.version"] = version
        attributes["jsonrpc.request.id"] = str(call.request_id)
        meta = call.meta
        parent = self._propagate.extract(carrier=meta) if meta else None
        started = time.perf_counter()
        error: str | None = None
        span = self.tracer.start_span(
            span_name(method, name), context=parent, kind=self._trace.SpanKind.SERVER, attributes=attributes
        )
        token = self._context.attach(self._trace.set_span_in_context(span, parent))
        try:
            result = await next(call)
            if result.get("isError"):
                error = "tool_error"
            return result
        except ProtocolError as exc:
            error = str(exc.code)
            span.set_attribute("rpc.response.status_code", error)
            raise
        except BaseException as exc:
            error = type(exc).__name__
            raise
        finally:
            self._context.detach(token)
            if error is not None:
                span.set_attribute("error.type", error)
                span.set_status(self._trace.StatusCode.ERROR)
            span.end()
            self.duration.record(time.perf_counter() - started, self._metric_attributes(attributes, error))

    def _metric_attributes(self, attributes: dict[str, Any], error: str | None) -> dict[str, Any]:
        """The histogram's attributes (the same dict again for requests alike, when they succeed)."""
        if error is not None:
            failed = {key: attributes[key] for key in _METRIC_KEYS if key in attributes}
            failed["error.type"] = error
            return failed
        key = (
            attributes["mcp.method.name"],
            attributes.get("gen_ai.tool.name") or attributes.get("gen_ai.prompt.name"),
            attributes["mcp.protocol.version"],
        )
        measured = self._measured.get(key)
        if measured is None:
            if len(self._measured) >= 10_000:
                self._measured.clear()
            measured = self._measured[key] = {k: attributes[k] for k in _METRIC_KEYS if k in attributes}
        return measured


_METRIC_KEYS = ("mcp.method.name", "gen_ai.tool.name", "gen_ai.prompt.name", "mcp.protocol.version")
