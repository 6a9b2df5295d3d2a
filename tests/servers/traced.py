"""A server traced with OpenTelemetry, its spans written as JSON lines to $SPANS_FILE."""

import json
import os

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from toolwire import Server, ToolError
from toolwire.guards import Telemetry


class FileExporter(SpanExporter):
    def export(self, spans):  # type: ignore[no-untyped-def]
        with open(os.environ["SPANS_FILE"], "a") as out:
            for span in spans:
                parent = span.parent.span_id if span.parent else None
                out.write(
                    json.dumps(
                        {
                            "name": span.name,
                            "trace": span.context.trace_id,
                            "parent": parent,
                            "attributes": dict(span.attributes),
                        }
                    )
                    + "\n"
                )
        return SpanExportResult.SUCCESS


provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(FileExporter()))
server = Server("traced", guards=[Telemetry(tracer_provider=provider)])


@server.tool
async def echo(text: str) -> str:
    """Echo."""
    if text == "fail":
        raise ToolError("it failed")
    return text
