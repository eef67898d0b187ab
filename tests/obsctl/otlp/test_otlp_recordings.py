"""The recorded OTLP requests of real agent frameworks (tests/data/otlp/<client>/, issue 33) decode as
the OTLP messages their paths and content types announce, and hold the spans and log records their
READMEs describe. What obsctl makes of them is asserted elsewhere; this only guards the recordings."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

RECORDINGS = Path(__file__).resolve().parents[2] / "data" / "otlp"

# recording -> (OTLP requests, spans, traces, log records), as each README states them.
EXPECTED = {
    "openai-agents": (1, 20, 2, 0),
    "langchain": (1, 19, 3, 0),
    "llama-index": (2, 47, 4, 0),
    "pydantic-ai": (1, 11, 3, 0),
    "openai-v2/default": (1, 9, 3, 0),
    "openai-v2/span_and_event": (2, 9, 3, 4),
    "traceloop": (4, 11, 2, 5),
    "langfuse-v3": (1, 8, 2, 0),
    "langfuse-v5": (1, 8, 2, 0),
    "vercel-ai": (1, 8, 2, 0),
    "anthropic": (1, 10, 2, 0),
    "anthropic-openllmetry": (1, 10, 2, 0),
    "mcp": (1, 6, 1, 0),
    "genai-evals": (2, 3, 1, 2),
}

# recording -> (metrics requests, metrics in them), for the recordings whose SDK exports metrics.
METRICS = {
    "traceloop": (2, 8),
}


def decoded(recording: Path) -> tuple[int, list, list, list]:
    lines = [json.loads(line) for line in (recording / "requests.jsonl").read_text().splitlines()]
    spans, logs, metrics = [], [], []
    for line in lines:
        assert line["method"] == "POST"
        assert line["headers"]["content-type"] == "application/x-protobuf"
        body = (recording / line["body_file"]).read_bytes()
        assert len(body) == line["body_bytes"]
        if line["headers"].get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        # Langfuse posts its traces to /api/public/otel/v1/traces.
        if line["path"] in ("/v1/traces", "/api/public/otel/v1/traces"):
            message = ExportTraceServiceRequest.FromString(body)
            spans += [s for r in message.resource_spans for scope in r.scope_spans for s in scope.spans]
        elif line["path"] == "/v1/logs":
            message = ExportLogsServiceRequest.FromString(body)
            logs += [rec for r in message.resource_logs for scope in r.scope_logs for rec in scope.log_records]
        elif line["path"] == "/v1/metrics":
            message = ExportMetricsServiceRequest.FromString(body)
            metrics.append([m for r in message.resource_metrics for scope in r.scope_metrics for m in scope.metrics])
        else:
            pytest.fail(f"unexpected path {line['path']}")
    return len(lines), spans, logs, metrics


def test_every_recording_is_listed():
    recorded = {str(p.parent.relative_to(RECORDINGS)) for p in RECORDINGS.rglob("requests.jsonl")}
    assert recorded == set(EXPECTED)
    assert set(METRICS) <= set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_recording_decodes_to_the_spans_and_logs_its_readme_states(name):
    requests, spans, logs, metrics = decoded(RECORDINGS / name)
    traces = {s.trace_id for s in spans} | {rec.trace_id for rec in logs if rec.trace_id}
    assert (requests, len(spans), len(traces), len(logs)) == EXPECTED[name]
    assert all(len(s.trace_id) == 16 and len(s.span_id) == 8 for s in spans)
    assert (len(metrics), sum(len(m) for m in metrics)) == METRICS.get(name, (0, 0))
