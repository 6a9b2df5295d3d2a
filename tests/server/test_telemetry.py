"""OpenTelemetry: server spans and durations following the MCP semantic conventions, client
spans whose trace the server continues (in memory, and across a stdio process in both eras),
and nothing imported when telemetry is not asked for."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from toolwire import Server, ToolError
from toolwire.client import Client, ServerError
from toolwire.client.telemetry import ClientTelemetry
from toolwire.guards import Telemetry

TRACED = str(Path(__file__).resolve().parents[1] / "servers" / "traced.py")


def providers() -> tuple[TracerProvider, InMemorySpanExporter, MeterProvider, InMemoryMetricReader]:
    exporter = InMemorySpanExporter()
    tracer = TracerProvider()
    tracer.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    return tracer, exporter, MeterProvider(metric_readers=[reader]), reader


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
async def test_server_spans_follow_the_conventions_and_continue_the_clients_trace(protocol: str) -> None:
    tracer, spans, meter, reader = providers()
    server = Server("traced", guards=[Telemetry(tracer_provider=tracer, meter_provider=meter)])

    @server.tool
    async def echo(text: str) -> str:
        if text == "fail":
            raise ToolError("it failed")
        return text

    @server.resource("note://one")
    def one() -> str:
        return "one"

    telemetry = ClientTelemetry(tracer_provider=tracer, meter_provider=meter)
    async with Client(server, protocol=protocol, telemetry=telemetry) as client:
        await client.call_tool("echo", {"text": "hi"})
        await client.call_tool("echo", {"text": "fail"})
        with pytest.raises(ServerError):
            await client.call_tool("nope", {})
        await client.read_resource("note://one")
    finished = spans.get_finished_spans()
    servers = [span for span in finished if span.kind == SpanKind.SERVER]
    clients = {span.context.span_id: span for span in finished if span.kind == SpanKind.CLIENT}
    assert [span.name for span in servers] == [
        "tools/call echo",
        "tools/call echo",
        "tools/call nope",
        "resources/read note://one",
    ]
    ok, failed, unknown, read = servers
    assert ok.attributes is not None and dict(ok.attributes) == {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "echo",
        "gen_ai.operation.name": "execute_tool",
        "mcp.session.id": ok.attributes["mcp.session.id"],
        "mcp.protocol.version": protocol,
        "jsonrpc.request.id": ok.attributes["jsonrpc.request.id"],
    }
    assert ok.status.status_code == StatusCode.UNSET
    assert failed.attributes["error.type"] == "tool_error" and failed.status.status_code == StatusCode.ERROR  # type: ignore[index]
    assert unknown.attributes["error.type"] == "-32602"  # type: ignore[index]
    assert read.attributes["mcp.resource.uri"] == "note://one"  # type: ignore[index]
    for span in servers:  # each is the child of the client's span of the same request, in its trace
        assert span.parent is not None and span.parent.span_id in clients
        parent = clients[span.parent.span_id]
        assert parent.context.trace_id == span.context.trace_id and parent.name == span.name
    metrics = reader.get_metrics_data()
    names = {metric.name for rm in metrics.resource_metrics for sm in rm.scope_metrics for metric in sm.metrics}
    assert {"mcp.server.operation.duration", "mcp.client.operation.duration"} <= names


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
async def test_a_servers_spans_in_another_process_continue_the_trace(protocol: str, tmp_path: Path) -> None:
    tracer, spans, _meter, _reader = providers()
    spans_file = tmp_path / "spans.jsonl"
    telemetry = ClientTelemetry(tracer_provider=tracer)
    async with Client(TRACED, protocol=protocol, env={"SPANS_FILE": str(spans_file)}, telemetry=telemetry) as client:
        await client.call_tool("echo", {"text": "hi"})
    [call] = [span for span in spans.get_finished_spans() if span.name == "tools/call echo"]
    [remote] = [json.loads(line) for line in spans_file.read_text().splitlines()]
    assert remote["name"] == "tools/call echo"
    assert remote["trace"] == call.context.trace_id and remote["parent"] == call.context.span_id


def test_nothing_of_opentelemetry_is_imported_unless_asked() -> None:
    code = (
        "import sys, toolwire, toolwire.client, toolwire.guards; from toolwire import Server; Server('x'); "
        "print(any(name.startswith('opentelemetry') for name in sys.modules))"
    )
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        == "False"
    )
