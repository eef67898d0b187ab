"""Print what a recording holds: every span, log record and metric with its attributes, decoded.

Run with the project's .venv (it has opentelemetry-proto):
    .venv/bin/python tests/data/otlp/capture_kit/summarize.py tests/data/otlp/<client>[/<variant>] [--width N]
Long attribute values are cut to --width characters (0: never cut).
"""

from __future__ import annotations

import argparse
import gzip
import json
import zlib
from pathlib import Path

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

MESSAGES = {"traces": ExportTraceServiceRequest, "logs": ExportLogsServiceRequest,
            "metrics": ExportMetricsServiceRequest}


def signal(path: str) -> str | None:
    return next((name for name in MESSAGES if path.rstrip("/").endswith("/" + name)), None)


def raw_body(recording: Path, line: dict) -> bytes:
    body = (recording / line["body_file"]).read_bytes()
    encoding = line["headers"].get("content-encoding", "")
    if encoding == "gzip":
        return gzip.decompress(body)
    if encoding == "deflate":
        return zlib.decompress(body)
    return body


def decode(recording: Path) -> list[tuple[dict, object]]:
    """(requests.jsonl line, decoded Export*ServiceRequest) for every protobuf OTLP request."""
    decoded = []
    for text in (recording / "requests.jsonl").read_text().splitlines():
        line = json.loads(text)
        kind = signal(line["path"])
        if kind and "protobuf" in line["headers"].get("content-type", ""):
            message = MESSAGES[kind]()
            message.ParseFromString(raw_body(recording, line))
            decoded.append((line, message))
    return decoded


def value(any_value):
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: value(kv.value) for kv in any_value.kvlist_value.values}
    if kind == "bytes_value":
        return any_value.bytes_value.hex()
    return getattr(any_value, kind) if kind else None


def attributes(kvs, width: int) -> list[str]:
    out = []
    for kv in kvs:
        text = json.dumps(value(kv.value), ensure_ascii=False)
        if width and len(text) > width:
            text = text[:width] + f"...({len(text)} chars)"
        out.append(f"{kv.key}={text}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recording", type=Path)
    parser.add_argument("--width", type=int, default=160)
    args = parser.parse_args()
    traces: dict[str, int] = {}
    spans = logs = metrics = 0
    for line, message in decode(args.recording):
        print(f"## request {line['seq']} {line['path']} {line['headers']}")
        for resource in getattr(message, "resource_spans", []):
            print("  resource:", ", ".join(attributes(resource.resource.attributes, args.width)))
            for scope in resource.scope_spans:
                print(f"  scope: {scope.scope.name} {scope.scope.version}")
                for span in scope.spans:
                    spans += 1
                    trace = span.trace_id.hex()
                    traces.setdefault(trace, len(traces) + 1)
                    print(f"    span T{traces[trace]} {span.span_id.hex()} <- {span.parent_span_id.hex() or '-'}"
                          f" {span.name!r} kind={span.kind} status={span.status.code} {span.status.message!r}")
                    for attribute in attributes(span.attributes, args.width):
                        print("        " + attribute)
                    for event in span.events:
                        print(f"        event {event.name}: " + "; ".join(attributes(event.attributes, args.width)))
        for resource in getattr(message, "resource_logs", []):
            print("  resource:", ", ".join(attributes(resource.resource.attributes, args.width)))
            for scope in resource.scope_logs:
                print(f"  scope: {scope.scope.name} {scope.scope.version}")
                for record in scope.log_records:
                    logs += 1
                    trace = record.trace_id.hex()
                    label = f"T{traces.setdefault(trace, len(traces) + 1)}" if trace else "-"
                    body = json.dumps(value(record.body), ensure_ascii=False)
                    if args.width and len(body) > args.width:
                        body = body[:args.width] + "..."
                    print(f"    log {label} span={record.span_id.hex() or '-'} event={record.event_name!r} "
                          f"severity={record.severity_number} body={body}")
                    for attribute in attributes(record.attributes, args.width):
                        print("        " + attribute)
        for resource in getattr(message, "resource_metrics", []):
            print("  resource:", ", ".join(attributes(resource.resource.attributes, args.width)))
            for scope in resource.scope_metrics:
                print(f"  scope: {scope.scope.name} {scope.scope.version}")
                for metric in scope.metrics:
                    metrics += 1
                    kind = metric.WhichOneof("data")
                    data = getattr(metric, kind)
                    temporality = getattr(data, "aggregation_temporality", 0)
                    print(f"    metric {metric.name!r} {kind} unit={metric.unit!r} temporality={temporality}")
                    for point in data.data_points:
                        numbers = (f"count={point.count} sum={point.sum:g}" if kind in ("histogram",
                                   "exponential_histogram", "summary") else
                                   f"value={getattr(point, point.WhichOneof('value'))}")
                        print(f"        {numbers} " + ", ".join(attributes(point.attributes, args.width)))
    print(f"== {spans} span(s) in {len(traces)} trace(s), {logs} log record(s), {metrics} metric(s)")


if __name__ == "__main__":
    main()
