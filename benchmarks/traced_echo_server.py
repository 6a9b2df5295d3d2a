"""``echo_server.py``'s server traced with OpenTelemetry, spans going to an exporter that
drops them, for ``benchmarks/guards_run.py``."""

from __future__ import annotations

from collections.abc import Sequence

from echo_server import server
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from toolwire.guards import Telemetry


class Dropped(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


tracer = TracerProvider()
tracer.add_span_processor(SimpleSpanProcessor(Dropped()))
server.use(Telemetry(tracer_provider=tracer, meter_provider=MeterProvider()))
