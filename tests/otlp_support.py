"""Builders of OTLP export requests for the OTLP tests: OTLP JSON documents written by
hand (hex ids, 64-bit integers as strings), and the same documents as protobuf bytes."""

from __future__ import annotations

import base64
import copy

TRACE = "0af7651916cd43dd8448eb211c80319c"
OTHER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
# 2025-11-21T10:02:19.000Z in Unix nanoseconds.
T0 = 1_763_719_339_000_000_000
T0_ISO = "2025-11-21T10:02:19.000Z"
MS = 1_000_000


def any_value(value) -> dict:
    """A Python value as an OTLP JSON AnyValue."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    if isinstance(value, dict):
        return {"kvlistValue": {"values": [{"key": k, "value": any_value(v)} for k, v in value.items()]}}
    raise TypeError(type(value))


def attributes(values: dict) -> list:
    return [{"key": k, "value": any_value(v)} for k, v in values.items()]


def span(span_id: str, *, trace: str = TRACE, parent: str | None = None, name: str = "span",
         start: int = T0, duration_ms: int = 10, attrs: dict | None = None,
         status: dict | None = None, events: list | None = None, kind: int = 1) -> dict:
    doc = {
        "traceId": trace,
        "spanId": span_id,
        "name": name,
        "kind": kind,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + duration_ms * MS),
        "attributes": attributes(attrs or {}),
        "status": status or {},
    }
    if parent:
        doc["parentSpanId"] = parent
    if events:
        doc["events"] = [{"timeUnixNano": str(start), "name": e["name"],
                          "attributes": attributes(e.get("attributes", {}))} for e in events]
    return doc


def request(*spans: dict, resource: dict | None = None, scope: str = "tests") -> dict:
    """One ExportTraceServiceRequest with one resource and one scope."""
    return {"resourceSpans": [{
        "resource": {"attributes": attributes(resource if resource is not None
                                              else {"service.name": "test-service"})},
        "scopeSpans": [{"scope": {"name": scope}, "spans": list(spans)}],
    }]}


def to_protobuf(document: dict) -> bytes:
    """The same request as protobuf bytes (the protobuf JSON mapping wants base64 ids)."""
    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    doc = copy.deepcopy(document)
    for resource_spans in doc.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for s in scope_spans.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if s.get(key):
                        s[key] = base64.b64encode(bytes.fromhex(s[key])).decode()
    return ParseDict(doc, ExportTraceServiceRequest()).SerializeToString()
